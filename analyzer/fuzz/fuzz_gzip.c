/* fuzz_gzip.c -- libFuzzer target for .json.gz traces: the input read as a (corrupt,
 * truncated, concatenated...) gzip stream, and the input gzip-compressed and read
 * back (a valid stream whose content is the fuzzed trace). */
#include "fuzz_common.h"

#include <zlib.h>

/* data as one gzip member; NULL when it does not fit. */
static unsigned char *gzip_of(const uint8_t *data, size_t size, size_t *out_size)
{
    z_stream z = { 0 };
    size_t cap = size + size / 8 + 64;
    unsigned char *out = malloc(cap);
    if (out == NULL || deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(out);
        return NULL;
    }
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
        deflateEnd(&z);
        free(out);
        return NULL;
    }
    *out_size = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t gz_size = 0;
    unsigned char *gz = gzip_of(data, size, &gz_size);
    fuzz_sizes(size);
    fuzz_run(data, size, fuzz_graph, sizeof fuzz_graph - 1);
    if (gz != NULL)
        fuzz_run(gz, gz_size, fuzz_graph, sizeof fuzz_graph - 1);
    free(gz);
    return 0;
}
