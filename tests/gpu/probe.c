/* probe.c -- is there a usable GPU?  Exit 0 and print the first device's name if the
 * driver loads, cuInit succeeds and at least one device exists; exit 1 otherwise.
 * Loads libcuda.so.1 with dlopen, so it builds and runs on machines without a driver. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*init_fn)(unsigned);
typedef int (*count_fn)(int *);
typedef int (*get_fn)(int *, int);
typedef int (*name_fn)(char *, int, int);

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("no libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    init_fn init = (init_fn)dlsym(h, "cuInit");
    count_fn count = (count_fn)dlsym(h, "cuDeviceGetCount");
    get_fn get = (get_fn)dlsym(h, "cuDeviceGet");
    name_fn name = (name_fn)dlsym(h, "cuDeviceGetName");
    int n = 0, dev = 0, r;
    char buf[256] = "?";
    if (!init || !count || !get || !name) {
        printf("libcuda.so.1 lacks cuInit/cuDeviceGetCount\n");
        return 1;
    }
    if ((r = init(0)) != 0) {
        printf("cuInit failed: CUresult %d\n", r);
        return 1;
    }
    if ((r = count(&n)) != 0 || n < 1) {
        printf("no CUDA device (CUresult %d, count %d)\n", r, n);
        return 1;
    }
    if (get(&dev, 0) == 0)
        name(buf, (int)sizeof buf, dev);
    printf("%d device(s), device 0: %s\n", n, buf);
    return 0;
}
