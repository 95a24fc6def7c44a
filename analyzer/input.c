/* input.c -- byte sources for the readers: files and memory buffers, plain or gzip.
 *
 * gzip is recognised by its first two bytes (1f 8b), whatever the name; concatenated
 * gzip members are read one after the other (as gunzip does).  A truncated or corrupt
 * stream is an error naming the compressed byte offset. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define RAW_CHUNK (256 * 1024)

static size_t raw_chunk = RAW_CHUNK;

void input_set_chunk(size_t size)
{
    raw_chunk = size ? size : RAW_CHUNK;
}

struct input {
    const char *name;
    int fd;                      /* -1 for memory */
    const unsigned char *mem;    /* memory source */
    size_t mem_size, mem_pos;
    uint64_t raw_total;          /* raw bytes consumed so far */
    int gzip, zdone, zinit;
    size_t chunk;
    z_stream z;
    unsigned char *raw;          /* compressed bytes waiting (gzip only) */
    char err[256];
};

/* Raw bytes from the file or the buffer. */
static long raw_read(struct input *in, void *buf, size_t size)
{
    if (in->fd < 0) {
        size_t n = in->mem_size - in->mem_pos;
        n = n < size ? n : size;
        memcpy(buf, in->mem + in->mem_pos, n);
        in->mem_pos += n;
        in->raw_total += n;
        return (long)n;
    }
    for (;;) {
        ssize_t n = read(in->fd, buf, size);
        if (n >= 0) {
            in->raw_total += (uint64_t)n;
            return (long)n;
        }
        if (errno != EINTR) {
            snprintf(in->err, sizeof in->err, "%s: read failed: %s", in->name, strerror(errno));
            return -1;
        }
    }
}

static struct input *input_new(const char *name)
{
    struct input *in = calloc(1, sizeof *in);
    if (in == NULL)
        return NULL;
    in->name = name;
    in->fd = -1;
    return in;
}

/* Look at the first bytes: gzip or not.  They are kept for the first read. */
static int sniff(struct input *in)
{
    long n;
    in->chunk = raw_chunk > 2 ? raw_chunk : 2;
    in->raw = malloc(in->chunk);
    if (in->raw == NULL)
        return -1;
    n = raw_read(in, in->raw, 2);
    if (n < 0)
        return -1;
    if (n == 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
        in->gzip = 1;
        if (inflateInit2(&in->z, 15 + 16) != Z_OK)
            return -1;
        in->zinit = 1;
    }
    in->z.next_in = in->raw;
    in->z.avail_in = (uInt)n;
    return 0;
}

static const char *alias_path, *alias_name;

void input_alias(const char *path, const char *name)
{
    alias_path = path;
    alias_name = name;
}

/* "-": the standard input (read once); a folder is not a file. */
static int open_path(const char *path, char *why, size_t size)
{
    struct stat st;
    int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, size, "%s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(why, size, "it is a folder, not a file");
        close(fd);
        return -1;
    }
    return fd;
}

struct input *input_open_file(const char *path, char *err, size_t errsize)
{
    const char *name = alias_path && strcmp(path, alias_path) == 0 ? alias_name : path;
    struct input *in = input_new(name);
    char why[128];
    if (in == NULL) {
        snprintf(err, errsize, "%s: out of memory", name);
        return NULL;
    }
    in->fd = open_path(path, why, sizeof why);
    if (in->fd < 0) {
        snprintf(err, errsize, "%s: cannot read: %s", name, why);
    } else if (sniff(in) != 0) {
        if (in->err[0])
            snprintf(err, errsize, "%s", in->err);
        else
            snprintf(err, errsize, "%s: cannot read: %s", name, strerror(errno));
    } else {
        return in;
    }
    input_close(in);
    return NULL;
}

struct input *input_open_mem(const void *data, size_t size, const char *name)
{
    struct input *in = input_new(name);
    if (in == NULL)
        return NULL;
    in->mem = data;
    in->mem_size = size;
    if (sniff(in) != 0) {
        input_close(in);
        return NULL;
    }
    return in;
}

/* Plain input: first the sniffed bytes, then the rest. */
static long plain_read(struct input *in, char *buf, size_t size)
{
    if (in->z.avail_in > 0) {
        size_t n = in->z.avail_in < size ? in->z.avail_in : size;
        memcpy(buf, in->z.next_in, n);
        in->z.next_in += n;
        in->z.avail_in -= (uInt)n;
        return (long)n;
    }
    return raw_read(in, buf, size);
}

/* After one gzip member: another one, or the end (anything else is an error). */
static int next_member(struct input *in)
{
    if (in->z.avail_in == 0) {
        long n = raw_read(in, in->raw, in->chunk);
        if (n <= 0) {
            in->zdone = 1;
            return (int)n;
        }
        in->z.next_in = in->raw;
        in->z.avail_in = (uInt)n;
    }
    if (in->z.next_in[0] != 0x1f) {
        snprintf(in->err, sizeof in->err, "%s: compressed byte %llu: expected another gzip "
                 "member or the end of the file, found other data", in->name,
                 (unsigned long long)(in->raw_total - in->z.avail_in));
        return -1;
    }
    return inflateReset(&in->z) == Z_OK ? 0 : -1;
}

static long gzip_read(struct input *in, char *buf, size_t size)
{
    in->z.next_out = (unsigned char *)buf;
    in->z.avail_out = (uInt)(size > (1u << 30) ? (1u << 30) : size);
    while (in->z.avail_out > 0 && !in->zdone) {
        int rc;
        if (in->z.avail_in == 0) {
            long n = raw_read(in, in->raw, in->chunk);
            if (n < 0)
                return -1;
            if (n == 0) {
                snprintf(in->err, sizeof in->err, "%s: compressed byte %llu: the gzip stream "
                         "is truncated (expected more compressed data)", in->name,
                         (unsigned long long)in->raw_total);
                return -1;
            }
            in->z.next_in = in->raw;
            in->z.avail_in = (uInt)n;
        }
        rc = inflate(&in->z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            if (next_member(in) < 0)
                return -1;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            snprintf(in->err, sizeof in->err, "%s: compressed byte %llu: corrupt gzip data (%s)",
                     in->name, (unsigned long long)(in->raw_total - in->z.avail_in),
                     in->z.msg ? in->z.msg : "zlib error");
            return -1;
        }
        if ((char *)in->z.next_out > buf)
            break;
    }
    return (long)((char *)in->z.next_out - buf);
}

long input_read(struct input *in, char *buf, size_t size)
{
    return in->gzip ? gzip_read(in, buf, size) : plain_read(in, buf, size);
}

const char *input_error(const struct input *in) { return in->err; }
const char *input_name(const struct input *in) { return in->name; }
int input_is_gzip(const struct input *in) { return in->gzip; }
uint64_t input_raw_bytes(const struct input *in) { return in->raw_total; }

void input_close(struct input *in)
{
    if (in == NULL)
        return;
    if (in->zinit)
        inflateEnd(&in->z);
    if (in->fd >= 0)
        close(in->fd);
    free(in->raw);
    free(in);
}

int input_with_file(const char *path, input_reader *read, void *ctx, char *err,
                    size_t errsize)
{
    struct input *in = input_open_file(path, err, errsize);
    int rc = in ? read(ctx, in, err, errsize) : -1;
    input_close(in);
    return rc;
}
