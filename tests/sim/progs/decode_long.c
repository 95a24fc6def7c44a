/* decode_long.c -- a long decode loop whose sizes grow every token (engine_sim.bats:
 * the engine's memory stays bounded however many tokens a server decodes):
 *
 *   decode_long [TOKENS] [SYNC_EVERY] [ODD_EVERY] [LAYER_KERNELS]
 *
 * Each token: 4 layers of add_one whose grid grows with the position (the attention
 * over a KV cache, capped at the buffer), a scale by -1, a memset of the next cache row and
 * a device-to-device copy of a prefix whose size grows with the position (wrapping at
 * the buffer), all on one created stream; every SYNC_EVERY tokens (default 1) a
 * cuStreamSynchronize, 0: none until the end.  About one token in ODD_EVERY (0, the
 * default: none), at positions without a period, has a fifth layer, as a framework picks
 * another kernel at some lengths: a replay stops there and must start again at the next
 * token.  LAYER_KERNELS (default 1) kernels a layer, each with its own block size, so
 * that the layers repeat within a token as a model's do.  stdout: "sum N" over the
 * buffers; stderr: "vm_hwm_kb K", the process's peak resident memory (VmHWM).
 */
#include "prog.h"
#include "../../vm_hwm.h"

#include <stdio.h>

static void one_token(CUfunction add_one, CUfunction scale, CUstream s, CUdeviceptr a,
                      CUdeviceptr b, int pos, int layers, int per_layer)
{
    int n = PROG_N, minus = -1, grow = 1 + pos % PROG_N;
    void *aa[] = { &a, &grow }, *sa[] = { &b, &minus, &n };
    for (int layer = 0; layer < layers; layer++)
        for (int k = 0; k < per_layer; k++)
            CK(cuLaunchKernel(add_one, (unsigned)grow, 1, 1, (unsigned)(1 + k), 1, 1, 0, s, aa,
                              NULL));
    CK(cuLaunchKernel(scale, 1, 1, 1, PROG_N, 1, 1, 0, s, sa, NULL));
    CK(cuMemsetD32Async(b + 4 * (size_t)(pos % PROG_N), (unsigned)pos, 1, s));
    CK(cuMemcpyDtoDAsync(b, a, 4 * (size_t)grow, s));
}

/* Whether token pos is one of the odd ones: a hash of pos, so that no period holds them. */
static int odd_token(int pos, int odd)
{
    return odd > 0 && ((unsigned)pos * 2654435761u >> 16) % (unsigned)odd == 0;
}

int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUfunction add_one, scale; CUstream s; CUdeviceptr a, b;
    int tokens = argc > 1 ? atoi(argv[1]) : 1000, every = argc > 2 ? atoi(argv[2]) : 1;
    int odd = argc > 3 ? atoi(argv[3]) : 0, per_layer = argc > 4 ? atoi(argv[4]) : 1;
    int ha[PROG_N], hb[PROG_N];
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemAlloc(&b, PROG_N * 4));
    CK(cuMemsetD32(a, 0, PROG_N));
    CK(cuMemsetD32(b, 1, PROG_N));
    for (int pos = 0; pos < tokens; pos++) {
        one_token(add_one, scale, s, a, b, pos, odd_token(pos, odd) ? 5 : 4, per_layer);
        if (every > 0 && (pos + 1) % every == 0)
            CK(cuStreamSynchronize(s));
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(ha, a, sizeof ha));
    CK(cuMemcpyDtoH(hb, b, sizeof hb));
    printf("sum %ld %ld\n", prog_sum_int(ha, PROG_N), prog_sum_int(hb, PROG_N));
    fprintf(stderr, "vm_hwm_kb %ld\n", vm_hwm_kb());
    return 0;
}
