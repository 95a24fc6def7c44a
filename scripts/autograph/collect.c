/* collect.c -- what one run of compare left in its folder: timing.<pid> files
 * (AUTOGRAPH_TIMING, one per process that used CUDA) and summary.<pid> files
 * (AUTOGRAPH_SUMMARY_FILE, graphing on).
 *
 * Timing file: "# libautograph timing v1 pid P mode M", then one line per window,
 * "w LATENCY_NS SUBMITS LAUNCH_NS HELD [SHIM_NS]" (files written before
 * SHIM_NS was added have four fields: read as 0), and "# end windows N" (other # lines are
 * comments).  The first `warmup` windows of each file are left out of the samples.
 */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

const char *const side_name[2] = { "off", "on" };

/* Reads one timing file; the run's latencies also go to `run` (for its percentiles). */
static int read_timing(const char *path, int warmup, struct side_data *side,
                       struct samples *run)
{
    char line[256];
    unsigned long long latency, launch, shim;
    unsigned submits, held;
    int n = 0, lineno = 1;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return fail(EXIT_RUN, "%s: %s", path, strerror(errno));
    if (!fgets(line, sizeof line, f) || strncmp(line, "# libautograph timing v1 ", 25) != 0) {
        fclose(f);
        return fail(EXIT_RUN, "%s: not a libautograph timing v1 file", path);
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#')
            continue;
        shim = 0;
        if (sscanf(line, "w %llu %u %llu %u %llu", &latency, &submits, &launch, &held,
                   &shim) < 4) {
            fclose(f);
            return fail(EXIT_RUN, "%s:%d: malformed line", path, lineno);
        }
        side->windows_all++;
        if (n++ < warmup)
            continue;
        samples_push(&side->latency, (double)latency);
        samples_push(&side->launch, (double)launch);
        samples_push(&side->shim, (double)shim);
        samples_push(run, (double)latency);
        side->submits += submits;
        side->held += held;
    }
    fclose(f);
    return 0;
}

/* Adds the summary's kernel_launches and launches_graphed to the side's, and the speed
 * guard's verdict where it made a trial. */
static void read_summary(const char *path, struct side_data *side)
{
    char line[256];
    unsigned long v;
    double x;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "kernel_launches %lu", &v) == 1)
            side->kernel_launches += v;
        else if (sscanf(line, "launches_graphed %lu", &v) == 1)
            side->launches_graphed += v;
        else if (sscanf(line, "guard_speedup %lf", &x) == 1 && x > 0)
            samples_push(&side->guard_speedup, x);
        else if (sscanf(line, "guard_paused_verdicts %lu", &v) == 1 && v > 0)
            side->guard_paused++;
    }
    fclose(f);
}

static int read_folder(const char *dir, int warmup, struct side_data *side,
                       struct samples *run)
{
    char path[PATH_MAX];
    struct dirent *e;
    int status = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return fail(EXIT_RUN, "%s: %s", dir, strerror(errno));
    while (status == 0 && (e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strncmp(e->d_name, "timing.", 7) == 0)
            status = read_timing(path, warmup, side, run);
        else if (strncmp(e->d_name, "summary.", 8) == 0)
            read_summary(path, side);
    }
    closedir(d);
    return status;
}

int collect_run(const char *dir, int warmup, struct side_data *side)
{
    struct samples run = { NULL, 0, 0 };
    int status = read_folder(dir, warmup, side, &run);
    samples_sort(&run);
    samples_push(&side->run_p50, quantile(&run, 0.5));
    samples_push(&side->run_p90, quantile(&run, 0.9));
    samples_free(&run);
    return status;
}

void side_free(struct side_data *side)
{
    samples_free(&side->latency);
    samples_free(&side->launch);
    samples_free(&side->shim);
    samples_free(&side->wall);
    samples_free(&side->run_p50);
    samples_free(&side->run_p90);
    samples_free(&side->guard_speedup);
}
