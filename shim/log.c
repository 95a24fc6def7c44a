/* log.c -- one-line diagnostics on stderr.
 *
 * Every message is one line, written with a single write(2) so that lines from
 * several threads never interleave.  The level comes from config.c.
 */
#include "log.h"
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int ag_log_enabled(enum ag_log_level level)
{
    return (int)level <= (int)ag_config()->log_level;
}

void ag_log_vline(const char *topic, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "libautograph: %s", topic);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* Nothing sensible to do when stderr is gone. */
    }
}

void ag_log_topic(const char *topic, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ag_log_vline(topic, fmt, ap);
    va_end(ap);
}

void ag_log(enum ag_log_level level, const char *fmt, ...)
{
    va_list ap;

    if (!ag_log_enabled(level))
        return;
    va_start(ap, fmt);
    ag_log_vline("", fmt, ap);
    va_end(ap);
}
