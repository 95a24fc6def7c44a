/* json_escape.c -- the shim's one JSON string escaper (json_escape.h). */
#include "json_escape.h"

#include <stdio.h>

void ag_json_escape(const char *s, void (*put)(void *ctx, const char *bytes, size_t n),
                    void *ctx)
{
    const char *run = s;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch != '"' && ch != '\\' && ch >= 0x20)
            continue;
        if (s > run)
            put(ctx, run, (size_t)(s - run));
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            put(ctx, esc, 2);
        } else {
            put(ctx, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", ch));
        }
        run = s + 1;
    }
    if (s > run)
        put(ctx, run, (size_t)(s - run));
}
