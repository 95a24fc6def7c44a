/* match_backoff.c -- match: stop making templates while they keep failing.
 *
 * A template whose replays keep stopping before its end is retired
 * (match_replay.c), and the window it came from is graphed anew.  Where the
 * program's windows vary in a way the engine cannot follow (a batch size that
 * cycles and changes which kernels run, a period cut from one layer of a model
 * whose next window differs), every new template goes the same way: the program
 * pays for each build, and each stopped replay holds ops that the GPU could have
 * run, issuing them late.  That is slower than running eagerly.
 *
 * So every template retired for its stops that hardly ever reached its end (fewer
 * than AG_BACKOFF_FEW replays: a window cut at varying places by a full staging ring
 * graphs much of the time and is no strike) is a strike.  After AG_BACKOFF_STRIKES
 * strikes without a template proving itself in between (AG_BACKOFF_PROVEN replays
 * to its end), and while replays stop more than four times as often as they reach
 * their end (counted since the last back-off: a program whose templates mostly work
 * and that loses a few while it warms up goes on; a stop because the window ended,
 * at a flush, does not count: such windows differ in where they end, not in what
 * they run), the engine backs off: for the next AG_BACKOFF_WINDOWS judged
 * windows, doubling with each back-off up to AG_BACKOFF_LEVELS times, no template
 * is built (`skip backoff`) and no period is cut; templates already made keep
 * replaying.  When the interval is over the engine tries again, so a program that
 * changes gets graphed (within the longest interval).  A window that never ends (a
 * training loop without a sync after a warm-up whose windows failed) would keep the
 * interval from ever passing: every AG_BACKOFF_SPAN ops of a window count as one
 * judged window too.  A template that proves
 * itself clears the strikes: a program whose other windows graph well backs off
 * only where failures come in a row.
 */
#include "engine_internal.h"

/* The back-off's clock: judged windows, and the spans of long windows. */
static uint32_t backoff_clock(void)
{
    return ag_eng.judged + ag_eng.backoff.spans;
}

/* A template retired because its replays kept stopping before its end. */
void ag_backoff_strike(void)
{
    struct ag_backoff *b = &ag_eng.backoff;
    if (++b->strikes < AG_BACKOFF_STRIKES || b->stopped <= 4 * b->replayed)
        return;                      /* few strikes, or replays mostly reach the end */
    b->strikes = b->stopped = b->replayed = 0;
    b->until = backoff_clock() + (AG_BACKOFF_WINDOWS << b->level);
    if (b->level < AG_BACKOFF_LEVELS)
        b->level++;
    ag_eng.s.backoffs++;
    ag_explain(b->level, -8, "templates keep stopping before their end: no new graph "
               "for the next %u windows", (unsigned)(AG_BACKOFF_WINDOWS << (b->level - 1)));
}

/* Template t replayed to its end once more. */
void ag_backoff_replayed(const struct ag_template *t)
{
    ag_eng.backoff.replayed++;
    if (t->replays == AG_BACKOFF_PROVEN)
        ag_eng.backoff.strikes = 0;
}

/* A replay stopped before its template's end. */
void ag_backoff_stopped(void)
{
    ag_eng.backoff.stopped++;
}

/* Whether templates are not being made now. */
int ag_backoff_active(void)
{
    return (int32_t)(ag_eng.backoff.until - backoff_clock()) > 0;
}

/* The window has grown by one op while the engine backs off: every span of its ops
 * moves the clock by one window. */
void ag_backoff_window_grew(const struct ag_window *w)
{
    struct ag_backoff *b = &ag_eng.backoff;
    if (w->n < b->span_mark)
        b->span_mark = 0;            /* a new window */
    if (w->n >= b->span_mark + AG_BACKOFF_SPAN) {
        b->spans++;
        b->span_mark = w->n;
    }
}
