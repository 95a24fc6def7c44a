/* json_stream.h -- a streaming JSON tokenizer (pull style) for large traces.
 *
 * The readers walk the document with it: js_peek / js_object_next / js_array_next /
 * js_key / js_string / js_number / js_skip.  Nothing is kept but the value being read,
 * so memory does not grow with the file.  Any syntax error, a nesting deeper than
 * JS_MAX_DEPTH, a number longer than JS_MAX_NUMBER or a read error ends the parse:
 * js_fail formats "FILE: byte N: what" into the caller's buffer and longjmps to the
 * jmp_buf given to js_init. */
#ifndef AGA_JSON_STREAM_H
#define AGA_JSON_STREAM_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "input.h"

#define JS_MAX_DEPTH 1024
#define JS_MAX_NUMBER 64
#define JS_BUF_SIZE (1u << 20)

struct js {
    struct input *in;
    char *buf;
    size_t size;
    const unsigned char *p, *end;
    uint64_t base;          /* stream offset of buf[0] */
    int eof;
    jmp_buf *fail;
    char *err;
    size_t errsize;
};

/* A number as written: its text, and whether it is a plain integer. */
struct js_num {
    char text[JS_MAX_NUMBER + 1];
    size_t len;
    int is_int;
    uint64_t off;           /* where it started */
};

/* The read buffer's size for the next js_init (default JS_BUF_SIZE; tests and fuzzing
 * use tiny ones so that every token crosses block boundaries). */
void js_set_buffer_size(size_t size);
int js_init(struct js *j, struct input *in, jmp_buf *fail, char *err, size_t errsize);
void js_free(struct js *j);
int js_fill(struct js *j);

static inline uint64_t js_offset(const struct js *j)
{
    return j->base + (uint64_t)(j->p - (const unsigned char *)j->buf);
}

/* The next non-blank byte, not consumed; -1 at the end of the input. */
static inline int js_peek(struct js *j)
{
    for (;;) {
        while (j->p < j->end) {
            unsigned char c = *j->p;
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return c;
            j->p++;
        }
        if (!js_fill(j))
            return -1;
    }
}

void js_fail(struct js *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
void js_fail_at(struct js *j, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* Fails with "expected WHAT, found <the next byte>". */
void js_fail_expected(struct js *j, const char *what) __attribute__((noreturn));

void js_expect(struct js *j, int ch, const char *what);
/* A string value: unescaped into out (at most cap-1 bytes kept, NUL-terminated; out
 * may be NULL to skip it).  Returns the full length; *truncated when it did not fit. */
size_t js_string(struct js *j, char *out, size_t cap, int *truncated);
/* A member name and its ':' (names longer than cap-1 are cut). */
void js_key(struct js *j, char *out, size_t cap);
void js_number(struct js *j, struct js_num *num);
/* Any value, checked for syntax and skipped. */
void js_skip(struct js *j);
/* After '{' or '[' was consumed: 1 when another member/item follows (for an object,
 * positioned at its name), 0 when the closing bracket was consumed. */
int js_object_next(struct js *j, int *first);
int js_array_next(struct js *j, int *first);
/* At the end of the document: only blanks may follow. */
void js_expect_end(struct js *j);

/* Number conversions (0 on success, -1 when out of range or not of that form). */
int js_num_u64(const struct js_num *num, uint64_t *out);
int js_num_i64(const struct js_num *num, int64_t *out);
/* Microseconds as written -> integer nanoseconds (rounded). */
int js_num_us_to_ns(const struct js_num *num, int64_t *out);

#endif
