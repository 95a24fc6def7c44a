/* figures.c -- the comparison from the two sides' samples.
 *
 * Speedup = off / on, at p50 and p90 of the pooled window latencies; its spread is
 * p25..p75 of the per-run ratios (run i of graphing off over run i of graphing on,
 * each run's own p50, or p90).  Graphing can at most remove the time the program
 * spent inside launch calls (launch_ns of the off side); "recovered" is the share of
 * that median time per window that the p50 latency lost, and the "ceiling" the speedup
 * at p50 were all of it gone (the rest of a window, the program's own host work and
 * the GPU's, stays).
 */
#include "compare.h"

#include <math.h>

static double ratio(double a, double b)
{
    return b > 0 && isfinite(a) && isfinite(b) ? a / b : NAN;
}

static void side_figures(struct side_data *d, struct side_figures *f)
{
    samples_sort(&d->wall);
    samples_sort(&d->latency);
    samples_sort(&d->launch);
    samples_sort(&d->shim);
    f->wall_med = quantile(&d->wall, 0.5);
    f->wall_min = samples_min(&d->wall);
    f->wall_max = samples_max(&d->wall);
    f->p50 = quantile(&d->latency, 0.5);
    f->p90 = quantile(&d->latency, 0.9);
    f->p99 = quantile(&d->latency, 0.99);
    f->launch_med = quantile(&d->launch, 0.5);
    f->shim_med = quantile(&d->shim, 0.5);
    f->windows = (unsigned long)d->latency.n;
    f->submits_per_window = ratio((double)d->submits, (double)d->latency.n);
    f->held_share = ratio((double)d->held, (double)d->submits);
}

/* p25 and p75 of off[i] / on[i] over the runs */
static void ratio_spread(const struct samples *off, const struct samples *on, double out[2])
{
    struct samples r = { NULL, 0, 0 };
    for (size_t i = 0; i < off->n && i < on->n; i++) {
        double x = ratio(off->v[i], on->v[i]);
        if (!isnan(x))
            samples_push(&r, x);
    }
    samples_sort(&r);
    out[0] = quantile(&r, 0.25);
    out[1] = quantile(&r, 0.75);
    samples_free(&r);
}

void figures_compute(struct side_data side[2], struct figures *f)
{
    const struct side_figures *off = &f->side[OFF], *on = &f->side[ON];
    side_figures(&side[OFF], &f->side[OFF]);
    side_figures(&side[ON], &f->side[ON]);
    f->speedup_p50 = ratio(off->p50, on->p50);
    f->speedup_p90 = ratio(off->p90, on->p90);
    ratio_spread(&side[OFF].run_p50, &side[ON].run_p50, f->spread_p50);
    ratio_spread(&side[OFF].run_p90, &side[ON].run_p90, f->spread_p90);
    f->launches_graphed = side[ON].launches_graphed;
    f->kernel_launches = side[ON].kernel_launches;
    f->graphed_share = ratio((double)f->launches_graphed, (double)f->kernel_launches);
    f->recovered = ratio(off->p50 - on->p50, off->launch_med);
    f->launch_share = ratio(off->launch_med, off->p50);
    f->ceiling = off->launch_med < off->p50 ? ratio(off->p50, off->p50 - off->launch_med) : NAN;
    samples_sort(&side[ON].guard_speedup);
    f->guard_runs = side[ON].guard_speedup.n;
    f->guard_speedup = quantile(&side[ON].guard_speedup, 0.5);
    f->guard_paused = side[ON].guard_paused;
}
