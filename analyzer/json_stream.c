/* json_stream.c -- the streaming JSON tokenizer (see json_stream.h).
 *
 * Strict RFC 8259 syntax; the input is read in JS_BUF_SIZE blocks and no token needs
 * to be contiguous in the buffer, so a value may cross any block boundary.  Strings
 * are scanned with a table of the bytes that need attention (quote, backslash,
 * control characters) and copied a run at a time. */
#include "json_stream.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 for the bytes a string scan must stop at. */
static const unsigned char stop_in_string[256] = {
    [0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

static size_t buffer_size = JS_BUF_SIZE;

void js_set_buffer_size(size_t size)
{
    buffer_size = size ? size : JS_BUF_SIZE;
}

int js_init(struct js *j, struct input *in, jmp_buf *fail, char *err, size_t errsize)
{
    memset(j, 0, sizeof *j);
    j->size = buffer_size;
    j->in = in;
    j->fail = fail;
    j->err = err;
    j->errsize = errsize;
    j->buf = malloc(j->size);
    j->p = j->end = (const unsigned char *)j->buf;
    return j->buf ? 0 : -1;
}

void js_free(struct js *j)
{
    free(j->buf);
    j->buf = NULL;
}

int js_fill(struct js *j)
{
    long n;
    if (j->p < j->end)
        return 1;
    if (j->eof)
        return 0;
    j->base += (uint64_t)(j->end - (const unsigned char *)j->buf);
    j->p = j->end = (const unsigned char *)j->buf;
    n = input_read(j->in, j->buf, j->size);
    if (n < 0) {
        snprintf(j->err, j->errsize, "%s", input_error(j->in));
        longjmp(*j->fail, 1);
    }
    if (n == 0) {
        j->eof = 1;
        return 0;
    }
    j->end += n;
    return 1;
}

__attribute__((noreturn, format(printf, 3, 0)))
static void vfail_at(struct js *j, uint64_t off, const char *fmt, va_list ap)
{
    int n = snprintf(j->err, j->errsize, "%s: byte %llu%s: ", input_name(j->in),
                     (unsigned long long)off,
                     input_is_gzip(j->in) ? " (decompressed)" : "");
    if (n >= 0 && (size_t)n < j->errsize)
        vsnprintf(j->err + n, j->errsize - (size_t)n, fmt, ap);
    longjmp(*j->fail, 1);
}

void js_fail_at(struct js *j, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(j, off, fmt, ap);
    va_end(ap);
}

void js_fail(struct js *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(j, js_offset(j), fmt, ap);
    va_end(ap);
}

void js_fail_expected(struct js *j, const char *what)
{
    int c = js_peek(j);
    if (c < 0)
        js_fail(j, "expected %s, found the end of the input (truncated?)", what);
    if (c >= 0x20 && c < 0x7f)
        js_fail(j, "expected %s, found '%c'", what, c);
    js_fail(j, "expected %s, found byte 0x%02x", what, c);
}

void js_expect(struct js *j, int ch, const char *what)
{
    if (js_peek(j) != ch)
        js_fail_expected(j, what);
    j->p++;
}

/* The next byte of a token, consumed (no blanks skipped). */
static int next_byte(struct js *j, const char *what)
{
    if (j->p == j->end && !js_fill(j))
        js_fail(j, "expected %s, found the end of the input (truncated?)", what);
    return *j->p++;
}

static unsigned hex4(struct js *j)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = next_byte(j, "4 hex digits after \\u");
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            v |= (unsigned)((c | 0x20) - 'a' + 10);
        else
            js_fail_at(j, js_offset(j) - 1, "expected a hex digit in a \\u escape");
    }
    return v;
}

static size_t utf8_encode(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The byte an escape character stands for (not u); fails on anything else. */
static char simple_escape(struct js *j, int c)
{
    switch (c) {
    case '"': case '\\': case '/': return (char)c;
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default:
        js_fail_at(j, js_offset(j) - 1, "expected an escape character (\"\\/bfnrtu) after "
                   "a backslash");
    }
}

static size_t surrogate_or(unsigned cp, char *out)
{
    return utf8_encode(cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp, out);
}

/* \uXXXX (the backslash and u consumed) -> UTF-8 in tmp (up to 8 bytes): a surrogate
 * pair joined, a lone surrogate replaced by U+FFFD.  What follows a high surrogate is
 * read byte by byte, so a pair may cross a block boundary. */
static size_t unicode_escape(struct js *j, char *tmp)
{
    unsigned cp = hex4(j), lo;
    size_t n;
    int c;
    if (cp < 0xd800 || cp > 0xdbff)
        return surrogate_or(cp, tmp);
    if ((j->p == j->end && !js_fill(j)) || *j->p != '\\')
        return utf8_encode(0xfffd, tmp);
    j->p++;
    n = utf8_encode(0xfffd, tmp);
    if ((c = next_byte(j, "an escape character")) != 'u') {
        tmp[n] = simple_escape(j, c);
        return n + 1;
    }
    lo = hex4(j);
    if (lo >= 0xdc00 && lo <= 0xdfff)
        return utf8_encode(0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00), tmp);
    return n + surrogate_or(lo, tmp + n);
}

/* One escape sequence (the backslash consumed) -> bytes in tmp; their count. */
static size_t escape(struct js *j, char *tmp)
{
    int c = next_byte(j, "an escape character");
    if (c == 'u')
        return unicode_escape(j, tmp);
    tmp[0] = simple_escape(j, c);
    return 1;
}

static void keep(char *out, size_t cap, size_t *len, const void *src, size_t n)
{
    if (out != NULL && *len + 1 < cap) {
        size_t room = cap - 1 - *len;
        memcpy(out + *len, src, n < room ? n : room);
    }
    *len += n;
}

size_t js_string(struct js *j, char *out, size_t cap, int *truncated)
{
    size_t len = 0;
    char tmp[8];
    js_expect(j, '"', "a string");
    for (;;) {
        const unsigned char *s = j->p;
        while (s < j->end && !stop_in_string[*s])
            s++;
        keep(out, cap, &len, j->p, (size_t)(s - j->p));
        j->p = s;
        if (s == j->end) {
            if (!js_fill(j))
                js_fail(j, "expected '\"' to end the string, found the end of the input");
            continue;
        }
        j->p++;
        if (*s == '"')
            break;
        if (*s != '\\')
            js_fail_at(j, js_offset(j) - 1, "expected '\"' to end the string, found "
                       "control character 0x%02x (not allowed in a JSON string)", *s);
        keep(out, cap, &len, tmp, escape(j, tmp));
    }
    if (out != NULL && cap > 0)
        out[len < cap ? len : cap - 1] = '\0';
    if (truncated != NULL)
        *truncated = out == NULL || len >= cap;
    return len;
}

void js_key(struct js *j, char *out, size_t cap)
{
    if (js_peek(j) != '"')
        js_fail_expected(j, "a member name (a string)");
    js_string(j, out, cap, NULL);
    js_expect(j, ':', "':' after a member name");
}

static int number_byte(int c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? ; sets is_int. */
static int number_valid(struct js_num *num)
{
    const char *s = num->text;
    int digits = 0;
    if (*s == '-')
        s++;
    if (*s == '0')
        s++, digits = 1;
    else
        for (; *s >= '0' && *s <= '9'; s++)
            digits++;
    if (!digits)
        return 0;
    num->is_int = *s == '\0';
    if (*s == '.') {
        for (digits = 0, s++; *s >= '0' && *s <= '9'; s++)
            digits++;
        if (!digits)
            return 0;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        for (digits = 0; *s >= '0' && *s <= '9'; s++)
            digits++;
        if (!digits)
            return 0;
    }
    return *s == '\0';
}

void js_number(struct js *j, struct js_num *num)
{
    int c = js_peek(j);
    num->len = 0;
    num->off = js_offset(j);
    if (c != '-' && (c < '0' || c > '9'))
        js_fail_expected(j, "a number");
    while (j->p < j->end || js_fill(j)) {
        if (!number_byte(*j->p))
            break;
        if (num->len == JS_MAX_NUMBER)
            js_fail_at(j, num->off, "number longer than %d characters", JS_MAX_NUMBER);
        num->text[num->len++] = (char)*j->p++;
    }
    num->text[num->len] = '\0';
    if (!number_valid(num))
        js_fail_at(j, num->off, "expected a number, found \"%s\"", num->text);
}

static void literal(struct js *j)
{
    static const char *const words[] = { "true", "false", "null" };
    uint64_t off = js_offset(j);
    char w[6] = { 0 };
    size_t n = 0;
    while ((j->p < j->end || js_fill(j)) && n < 5 && *j->p >= 'a' && *j->p <= 'z')
        w[n++] = (char)*j->p++;
    for (size_t i = 0; i < 3; i++)
        if (strcmp(w, words[i]) == 0)
            return;
    js_fail_at(j, off, "expected a value (object, array, string, number, true, false "
               "or null)");
}

/* A scalar, or the opening of a container (returned as its closing bracket). */
static int value_start(struct js *j)
{
    struct js_num num;
    int c = js_peek(j);
    if (c == '{' || c == '[') {
        j->p++;
        return c == '{' ? '}' : ']';
    }
    if (c == '"')
        js_string(j, NULL, 0, NULL);
    else if (c == '-' || (c >= '0' && c <= '9'))
        js_number(j, &num);
    else if (c >= 'a' && c <= 'z')
        literal(j);
    else
        js_fail_expected(j, "a value");
    return 0;
}

void js_skip(struct js *j)
{
    char stack[JS_MAX_DEPTH];
    int depth = 0, first = 1;
    for (;;) {
        int close = value_start(j);
        if (close != 0) {
            if (depth == JS_MAX_DEPTH)
                js_fail_at(j, js_offset(j) - 1, "nesting deeper than %d levels", JS_MAX_DEPTH);
            stack[depth++] = (char)close;
            first = 1;
        }
        for (;;) {
            int more = depth == 0 ? -1 : stack[depth - 1] == '}' ? js_object_next(j, &first)
                                                                : js_array_next(j, &first);
            if (more < 0)
                return;
            if (more) {
                if (stack[depth - 1] == '}')
                    js_key(j, NULL, 0);
                break;
            }
            depth--;
            first = 0;
        }
    }
}

static int container_next(struct js *j, int *first, int close, const char *what)
{
    int c = js_peek(j);
    if (c == close) {
        j->p++;
        return 0;
    }
    if (!*first) {
        if (c != ',')
            js_fail_expected(j, what);
        j->p++;
    }
    *first = 0;
    return 1;
}

int js_object_next(struct js *j, int *first)
{
    return container_next(j, first, '}', "',' or '}' in an object");
}

int js_array_next(struct js *j, int *first)
{
    return container_next(j, first, ']', "',' or ']' in an array");
}

void js_expect_end(struct js *j)
{
    if (js_peek(j) >= 0)
        js_fail_expected(j, "the end of the input after the top-level value");
}

int js_num_u64(const struct js_num *num, uint64_t *out)
{
    char *end;
    if (!num->is_int || num->text[0] == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(num->text, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int js_num_i64(const struct js_num *num, int64_t *out)
{
    char *end;
    if (!num->is_int)
        return -1;
    errno = 0;
    long long v = strtoll(num->text, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* Exact for plain decimals (up to 3 fraction digits, the 4th rounds); exponents go
 * through a double. */
int js_num_us_to_ns(const struct js_num *num, int64_t *out)
{
    const char *s = num->text;
    int neg = *s == '-';
    int64_t v = 0;
    if (strpbrk(s, "eE") != NULL) {
        double d = strtod(s, NULL) * 1000.0;
        if (!(d > -9.2e18 && d < 9.2e18))
            return -1;
        *out = (int64_t)llround(d);
        return 0;
    }
    for (s += neg; *s >= '0' && *s <= '9'; s++) {
        if (v > (INT64_MAX / 1000 - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    v *= 1000;
    if (*s == '.') {
        int scale = 100;
        for (s++; *s >= '0' && *s <= '9' && scale > 0; s++, scale /= 10)
            v += (*s - '0') * scale;
        if (*s >= '5' && *s <= '9')
            v++;
    }
    *out = neg ? -v : v;
    return 0;
}
