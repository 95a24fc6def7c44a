/* cupti_count.c -- an independent kernel counter, loaded through CUPTI injection.
 *
 *   CUDA_INJECTION64_PATH=build/gpu/libcupti_count.so AG_CUPTI_COUNT_FILE=out.%p ./prog
 *
 * The driver loads this library at cuInit and calls InitializeInjection().  We enable
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL and count the kernel records CUPTI hands back.
 * Every time a buffer completes, and at exit (atexit, then a destructor as a fallback,
 * each after cuptiActivityFlushAll(1)), the running totals are written to the file named
 * by AG_CUPTI_COUNT_FILE ("%p" in the name is replaced by the pid):
 *
 *     kernels 123
 *     dropped 0
 *
 * Nothing here knows about libautograph: this is the reference the shim's own
 * kernel_launches count is checked against.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cupti.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (8u << 20)
#define BUF_ALIGN 8

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long g_kernels;
static unsigned long long g_dropped;
static unsigned long long g_other;
static int g_initialized;
static int g_final_written;
static CUpti_SubscriberHandle g_sub;

static void warn(const char *what, CUptiResult r)
{
    const char *s = NULL;
    cuptiGetResultString(r, &s);
    fprintf(stderr, "cupti_count: %s failed: %s\n", what, s ? s : "?");
}

static void write_count(void)
{
    const char *pat = getenv("AG_CUPTI_COUNT_FILE");
    if (!pat || !*pat)
        return;
    char path[4096];
    size_t o = 0;
    for (const char *p = pat; *p && o + 24 < sizeof path; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof path - o, "%ld", (long)getpid());
            p++;
        } else {
            path[o++] = *p;
        }
    }
    path[o] = 0;
    char tmp[4160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    pthread_mutex_lock(&g_lock);
    fprintf(f, "kernels %llu\ndropped %llu\nother_records %llu\n", g_kernels, g_dropped,
            g_other);
    pthread_mutex_unlock(&g_lock);
    fclose(f);
    rename(tmp, path);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, BUF_ALIGN, BUF_SIZE) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? BUF_SIZE : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid_size)
{
    (void)stream_id;
    unsigned long long k = 0, other = 0;
    CUpti_Activity *rec = NULL;
    for (;;) {
        CUptiResult r = cuptiActivityGetNextRecord(buffer, valid_size, &rec);
        if (r != CUPTI_SUCCESS)
            break;
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
            k++;
        else
            other++;
    }
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped);
    pthread_mutex_lock(&g_lock);
    g_kernels += k;
    g_other += other;
    g_dropped += dropped;
    pthread_mutex_unlock(&g_lock);
    free(buffer);
    (void)size;
    write_count();
}

/* Contexts being destroyed take their pending records with them: flush first. */
static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)ud;
    (void)data;
    if (dom == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        cuptiActivityFlushAll(1);
}

static void finish(void)
{
    if (!g_initialized || g_final_written)
        return;
    cuptiActivityFlushAll(1);
    write_count();
    g_final_written = 1;
}

__attribute__((destructor)) static void cupti_count_fini(void)
{
    finish();
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    CUptiResult r;
    if (g_initialized)
        return 1;
    r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        warn("cuptiActivityRegisterCallbacks", r);
        return 0;
    }
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        warn("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
        return 0;
    }
    r = cuptiSubscribe(&g_sub, on_callback, NULL);
    if (r == CUPTI_SUCCESS)
        cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    else
        warn("cuptiSubscribe", r);
    g_initialized = 1;
    write_count(); /* a file with 0 exists from the start: "loaded but saw nothing" */
    atexit(finish);
    return 1;
}
