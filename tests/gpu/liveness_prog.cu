// liveness_prog.cu -- memory freed while the shim's graphs point into it (tests/gpu/liveness.bats).
//
//   liveness_X retire   a repeating loop on buffer a (graphed), a freed, the loop on a new
//                       buffer c, and on buffer b before and after: results printed as a
//                       hash of each buffer's bytes
//   liveness_X KIND     KIND = device (cudaMalloc), host (cudaHostAlloc, mapped), vmm
//                       (cuMemCreate + cuMemMap through cudaGetDriverEntryPoint): a graphed
//                       loop on that memory, the memory freed, then one more launch whose
//                       pointer argument points 16 bytes into it, with n = 0 (the kernel
//                       touches nothing); prints "dead launch issued" after it
#include "cuda_check.cuh"

#include <cuda.h>
#include <stdint.h>
#include <string.h>

#define N 4096
#define ITERS 40

__global__ void add_one(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1.0f;
}

__global__ void scale(float *p, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= f;
}

static cudaStream_t stream;

static void step(float *p, int n)
{
    add_one<<<N / 256, 256, 0, stream>>>(p, n);
    scale<<<N / 256, 256, 0, stream>>>(p, 0.5f, n);
    add_one<<<N / 256, 256, 0, stream>>>(p, n);
    scale<<<N / 256, 256, 0, stream>>>(p, 1.5f, n);
    CK(cudaGetLastError());
}

static void loop(const char *name, float *p)
{
    static float h[N];
    unsigned long long hash = 1469598103934665603ull;
    CK(cudaMemsetAsync(p, 0, N * sizeof(float), stream));
    for (int i = 0; i < ITERS; i++) {
        step(p, N);
        CK(cudaStreamSynchronize(stream));
    }
    CK(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < sizeof h; i++)
        hash = (hash ^ ((unsigned char *)h)[i]) * 1099511628211ull;
    printf("%s fnv1a64 %016llx\n", name, hash);
}

static void retire(void)
{
    float *a, *b, *c;
    CK(cudaMalloc(&a, N * sizeof(float)));
    CK(cudaMalloc(&b, N * sizeof(float)));
    loop("a", a);
    loop("b", b);
    CK(cudaFree(a));
    CK(cudaMalloc(&c, 2 * N * sizeof(float)));
    loop("c", c + 64);
    loop("b", b);
    CK(cudaFree(b));
    CK(cudaFree(c));
}

#define DRIVER_FN(var, name)                                                                \
    static decltype(&name) var;                                                            \
    if (!var) {                                                                            \
        cudaDriverEntryPointQueryResult q;                                                 \
        CK(cudaGetDriverEntryPointByVersion(#name, (void **)&var, 12000, cudaEnableDefault, &q)); \
    }
#define CKD(x)                                                                             \
    do {                                                                                   \
        CUresult r_ = (x);                                                                 \
        if (r_ != CUDA_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: %s: error %d\n", __FILE__, __LINE__, #x, (int)r_);     \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

struct vmm { CUdeviceptr va; size_t size; CUmemGenericAllocationHandle h; };

static float *vmm_map(struct vmm *m)
{
    DRIVER_FN(granularity, cuMemGetAllocationGranularity);
    DRIVER_FN(reserve, cuMemAddressReserve);
    DRIVER_FN(create, cuMemCreate);
    DRIVER_FN(map, cuMemMap);
    DRIVER_FN(set_access, cuMemSetAccess);
    CUmemAllocationProp prop;
    CUmemAccessDesc acc;
    int dev;
    CK(cudaGetDevice(&dev));
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CKD(granularity(&m->size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CKD(reserve(&m->va, m->size, 0, 0, 0));
    CKD(create(&m->h, m->size, &prop, 0));
    CKD(map(m->va, m->size, 0, m->h, 0));
    CKD(set_access(m->va, m->size, &acc, 1));
    return (float *)(uintptr_t)m->va;
}

static void vmm_unmap(struct vmm *m)
{
    DRIVER_FN(unmap, cuMemUnmap);
    DRIVER_FN(release, cuMemRelease);
    CKD(unmap(m->va, m->size));
    CKD(release(m->h));
}

static void dead(const char *kind)
{
    float *p = NULL, *host = NULL;
    struct vmm m = { 0, 0, 0 };
    if (strcmp(kind, "device") == 0) {
        CK(cudaMalloc(&p, N * sizeof(float)));
    } else if (strcmp(kind, "host") == 0) {
        CK(cudaHostAlloc(&host, N * sizeof(float), cudaHostAllocMapped));
        CK(cudaHostGetDevicePointer(&p, host, 0));
    } else {
        p = vmm_map(&m);
    }
    loop(kind, p);
    if (host)
        CK(cudaFreeHost(host));
    else if (m.h)
        vmm_unmap(&m);
    else
        CK(cudaFree(p));
    step(p + 4, 0);                     // 16 bytes into the freed memory; n = 0
    CK(cudaStreamSynchronize(stream));
    printf("dead launch issued\n");
    if (m.va) {
        DRIVER_FN(address_free, cuMemAddressFree);
        CKD(address_free(m.va, m.size));
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "retire";
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (strcmp(mode, "retire") == 0)
        retire();
    else
        dead(mode);
    CK(cudaStreamDestroy(stream));
    return 0;
}
