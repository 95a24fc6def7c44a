/* log.h -- one-line diagnostics on stderr, filtered by AUTOGRAPH_LOG. */
#ifndef AG_LOG_H
#define AG_LOG_H

enum ag_log_level { AG_LOG_ERROR, AG_LOG_WARN, AG_LOG_INFO, AG_LOG_DEBUG };

/* Writes "libautograph: <message>\n" with one write(2), if `level` is enabled. */
void ag_log(enum ag_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

int ag_log_enabled(enum ag_log_level level);

/* Writes "libautograph: <topic><message>\n" whatever the level (ag_log's writer). */
#include <stdarg.h>
void ag_log_vline(const char *topic, const char *fmt, va_list ap);
void ag_log_topic(const char *topic, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
