/* out.h -- output files for the reports: plain or gzip (a name ending in .gz), "-" for
 * stdout; write errors are remembered and reported once at close.  Escapers for
 * JSON, XML and DOT strings, and a small JSON writer that places the commas. */
#ifndef AGA_OUT_H
#define AGA_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct out {
    FILE *f;
    void *gz;
    const char *path;
    int failed, is_stdout;
};

int out_open(struct out *o, const char *path, char *err, size_t errsize);
/* Opens a memory stream (tests, fuzzing), as open_memstream(buf, size). */
int out_open_mem(struct out *o, char **buf, size_t *size);
int out_close(struct out *o, char *err, size_t errsize);

void out_write(struct out *o, const void *p, size_t n);
void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_us(struct out *o, int64_t ns);         /* 12.345 (microseconds, ns exact) */
void out_json_str(struct out *o, const char *s);
void out_xml_str(struct out *o, const char *s); /* for text and attribute values */
void out_dot_str(struct out *o, const char *s); /* a quoted DOT id */
/* A copy of s cut to at most max bytes (on a UTF-8 boundary), "..." added if cut,
 * control characters replaced by '?' (names go on one line). */
void shorten(char *dst, size_t size, const char *s, size_t max);

/* JSON writer: members of objects get a key, items of arrays get NULL. */
#define JW_DEPTH 16
struct jw {
    struct out *o;
    int depth;
    int count[JW_DEPTH];
};
void jw_begin(struct jw *w, const char *key, char bracket);   /* '{' or '[' */
void jw_end(struct jw *w, char bracket);
void jw_str(struct jw *w, const char *key, const char *value);  /* NULL -> null */
void jw_int(struct jw *w, const char *key, long long value);
void jw_uint(struct jw *w, const char *key, unsigned long long value);
void jw_us(struct jw *w, const char *key, int64_t ns);
void jw_num(struct jw *w, const char *key, double value);
void jw_bool(struct jw *w, const char *key, int value);

#endif
