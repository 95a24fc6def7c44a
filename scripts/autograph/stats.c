/* stats.c -- samples (growable arrays of doubles), sorting and percentiles.
 *
 * quantile(q) interpolates linearly between order statistics (the "type 7"
 * definition of R and numpy's default): with n samples sorted, position q * (n - 1).
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>

void samples_push(struct samples *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        double *v2 = realloc(s->v, cap * sizeof *v2);
        if (v2 == NULL) {
            fail(EXIT_RUN, "out of memory");
            exit(EXIT_RUN);
        }
        s->v = v2;
        s->cap = cap;
    }
    s->v[s->n++] = v;
}

void samples_free(struct samples *s)
{
    free(s->v);
    *s = (struct samples){ NULL, 0, 0 };
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void samples_sort(struct samples *s)
{
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, cmp_double);
}

double quantile(const struct samples *sorted, double q)
{
    double pos, frac;
    size_t i;
    if (sorted->n == 0)
        return NAN;
    pos = q * (double)(sorted->n - 1);
    i = (size_t)pos;
    if (i + 1 >= sorted->n)
        return sorted->v[sorted->n - 1];
    frac = pos - (double)i;
    return sorted->v[i] + frac * (sorted->v[i + 1] - sorted->v[i]);
}

double samples_min(const struct samples *sorted)
{
    return sorted->n ? sorted->v[0] : NAN;
}

double samples_max(const struct samples *sorted)
{
    return sorted->n ? sorted->v[sorted->n - 1] : NAN;
}
