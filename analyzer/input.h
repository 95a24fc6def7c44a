/* input.h -- a byte source for the readers: a file or a memory buffer, plain or
 * gzip (detected by its magic bytes, not by its name). */
#ifndef AGA_INPUT_H
#define AGA_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct input;

/* Compressed bytes read at a time by inputs opened later (default 256 KiB; tests and
 * fuzzing use tiny ones). */
void input_set_chunk(size_t size);

/* Open a file, "-" for the standard input (NULL and a message in err on failure; a
 * folder is an error). */
struct input *input_open_file(const char *path, char *err, size_t errsize);
/* Name the file at path `name` in messages (a copy of the standard input). */
void input_alias(const char *path, const char *name);
/* Read from memory (the buffer must outlive the input). */
struct input *input_open_mem(const void *data, size_t size, const char *name);

/* Up to size bytes of the (decompressed) stream; 0 at its end, -1 on error (message
 * from input_error). */
long input_read(struct input *in, char *buf, size_t size);
const char *input_error(const struct input *in);
const char *input_name(const struct input *in);
int input_is_gzip(const struct input *in);
/* Bytes of the underlying file or buffer consumed so far (compressed for gzip). */
uint64_t input_raw_bytes(const struct input *in);
void input_close(struct input *in);

/* Open path, run read(ctx, input, err, errsize), close: its result, or -1 when the
 * file cannot be opened (message in err). */
typedef int input_reader(void *ctx, struct input *in, char *err, size_t errsize);
int input_with_file(const char *path, input_reader *read, void *ctx, char *err,
                    size_t errsize);

#endif
