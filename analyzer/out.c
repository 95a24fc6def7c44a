/* out.c -- output files, escapers and the JSON writer (see out.h). */
#include "out.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

int out_open(struct out *o, const char *path, char *err, size_t errsize)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        o->is_stdout = 1;
        return 0;
    }
    if (ends_with(path, ".gz"))
        o->gz = gzopen(path, "wb6");
    else
        o->f = fopen(path, "w");
    if (o->f == NULL && o->gz == NULL) {
        snprintf(err, errsize, "%s: cannot write: %s", path, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    return 0;
}

int out_open_mem(struct out *o, char **buf, size_t *size)
{
    memset(o, 0, sizeof *o);
    o->path = "(memory)";
    o->f = open_memstream(buf, size);
    return o->f ? 0 : -1;
}

int out_close(struct out *o, char *err, size_t errsize)
{
    int failed = o->failed;
    if (o->gz != NULL)
        failed |= gzclose(o->gz) != Z_OK;
    else if (o->is_stdout)
        failed |= fflush(o->f) != 0 || ferror(o->f);
    else if (o->f != NULL)
        failed |= ferror(o->f) != 0, failed |= fclose(o->f) != 0;
    if (failed)
        snprintf(err, errsize, "%s: write failed (disk full?)", o->path);
    memset(o, 0, sizeof *o);
    return failed ? -1 : 0;
}

void out_write(struct out *o, const void *p, size_t n)
{
    if (o->failed || n == 0)
        return;
    if (o->gz != NULL)
        o->failed = gzwrite(o->gz, p, (unsigned)n) != (int)n;
    else
        o->failed = fwrite(p, 1, n, o->f) != n;
}

void out_printf(struct out *o, const char *fmt, ...)
{
    char small[512], *p = small;
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof small) {
        if ((p = malloc((size_t)n + 1)) == NULL) {
            o->failed = 1;
            return;
        }
        va_start(ap, fmt);
        vsnprintf(p, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    out_write(o, p, (size_t)n);
    if (p != small)
        free(p);
}

void out_us(struct out *o, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    out_printf(o, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(mag / 1000),
               (unsigned long long)(mag % 1000));
}

/* Length of the valid UTF-8 sequence at s (0: invalid). */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
             : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 2 && s[0] < 0xc2)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* s with each byte that needs it written by esc(); invalid UTF-8 becomes U+FFFD. */
static void escaped(struct out *o, const char *s, const char *(*esc)(unsigned char, char *))
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    char tmp[8];
    while (*p) {
        size_t n = utf8_len(p);
        const char *rep = n == 0 ? "\xef\xbf\xbd" : n == 1 ? esc(*p, tmp) : NULL;
        if (rep == NULL) {
            p += n;
            continue;
        }
        out_write(o, run, (size_t)(p - run));
        out_write(o, rep, strlen(rep));
        p += n ? n : 1;
        run = p;
    }
    out_write(o, run, (size_t)(p - run));
}

static const char *esc_json(unsigned char c, char *tmp)
{
    if (c == '"')
        return "\\\"";
    if (c == '\\')
        return "\\\\";
    if (c >= 0x20)
        return NULL;
    snprintf(tmp, 8, "\\u%04x", c);
    return tmp;
}

static const char *esc_xml(unsigned char c, char *tmp)
{
    (void)tmp;
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: return c < 0x20 ? " " : NULL;
    }
}

static const char *esc_dot(unsigned char c, char *tmp)
{
    (void)tmp;
    if (c == '"')
        return "\\\"";
    if (c == '\\')
        return "\\\\";
    return c < 0x20 ? " " : NULL;
}

void out_json_str(struct out *o, const char *s)
{
    out_write(o, "\"", 1);
    escaped(o, s, esc_json);
    out_write(o, "\"", 1);
}

void out_xml_str(struct out *o, const char *s)
{
    escaped(o, s, esc_xml);
}

void out_dot_str(struct out *o, const char *s)
{
    out_write(o, "\"", 1);
    escaped(o, s, esc_dot);
    out_write(o, "\"", 1);
}

void shorten(char *dst, size_t size, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (max + 4 > size)
        max = size - 4;
    if (n <= max) {
        memcpy(dst, s, n + 1);
    } else {
        while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
            max--;
        memcpy(dst, s, max);
        memcpy(dst + max, "...", 4);
    }
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = '?';
}

/* ---- JSON writer ---------------------------------------------------------------- */

static void jw_sep(struct jw *w, const char *key)
{
    if (w->depth > 0 && w->depth <= JW_DEPTH) {
        if (w->count[w->depth - 1]++ > 0)
            out_write(w->o, ",", 1);
        if (w->depth <= 3)
            out_printf(w->o, "\n%*s", 2 * w->depth, "");
    }
    if (key != NULL) {
        out_json_str(w->o, key);
        out_write(w->o, ": ", 2);
    }
}

void jw_begin(struct jw *w, const char *key, char bracket)
{
    jw_sep(w, key);
    out_write(w->o, &bracket, 1);
    if (w->depth < JW_DEPTH)
        w->count[w->depth] = 0;
    w->depth++;
}

void jw_end(struct jw *w, char bracket)
{
    int had = w->depth <= JW_DEPTH && w->count[w->depth - 1] > 0;
    w->depth--;
    if (had && w->depth < 3)
        out_printf(w->o, "\n%*s", 2 * w->depth, "");
    out_write(w->o, &bracket, 1);
    if (w->depth == 0)
        out_write(w->o, "\n", 1);
}

void jw_str(struct jw *w, const char *key, const char *value)
{
    jw_sep(w, key);
    if (value == NULL)
        out_write(w->o, "null", 4);
    else
        out_json_str(w->o, value);
}

void jw_int(struct jw *w, const char *key, long long value)
{
    jw_sep(w, key);
    out_printf(w->o, "%lld", value);
}

void jw_uint(struct jw *w, const char *key, unsigned long long value)
{
    jw_sep(w, key);
    out_printf(w->o, "%llu", value);
}

void jw_us(struct jw *w, const char *key, int64_t ns)
{
    jw_sep(w, key);
    out_us(w->o, ns);
}

void jw_num(struct jw *w, const char *key, double value)
{
    jw_sep(w, key);
    out_printf(w->o, "%.6g", isfinite(value) ? value : 0.0);
}

void jw_bool(struct jw *w, const char *key, int value)
{
    jw_sep(w, key);
    out_printf(w->o, "%s", value ? "true" : "false");
}
