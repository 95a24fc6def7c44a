/* layers_cycle.c -- an inference loop whose batch size cycles and picks other kernels,
 * each step a stack of identical layers (engine_sim.bats; the shape of a transformer's
 * forward at batch sizes 1..8, where the batch size changes which GEMM kernels run):
 *
 *   layers_cycle [STEPS] [LAYERS] [CYCLE] [alike]
 *
 * Each step, bs = step % CYCLE (default 8): a one-word upload (a memset) and
 * cuStreamSynchronize, then
 * on one created stream: 2 embedding launches, LAYERS layers of [add_one, add_one or
 * scale (by bs's low bit), a scale by 1 when bs >= 4 (a split-K kernel), add_one],
 * a head launch, a copy of one word back into a stack variable and
 * cuStreamSynchronize.  Within a step the layers repeat (a period); from step to step
 * the step's shape cycles through 4.  Defaults: 400 steps, 24 layers.  stdout: "sum N"
 * over the buffer and the words read back.
 * With "alike", the kernels that change are another function of the same parameter
 * layout (add_two for the scale of odd bs, no split-K launch), and only in the second
 * half of the layers: every step has the same ops but for which function some of them
 * launch, and steps of two batch sizes part well past their first replay chunk.
 */
#include "prog.h"

#include <string.h>

struct kernels { CUfunction add_one, add_two, scale; int alike; };

static void layer(const struct kernels *k, CUstream s, CUdeviceptr a, int bs, int late)
{
    int n = PROG_N, minus = -1, one = 1;
    void *aa[] = { &a, &n }, *sa[] = { &a, &minus, &n }, *oa[] = { &a, &one, &n };
    CK(cuLaunchKernel(k->add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
    if (k->alike) {
        bs = late ? bs : 0;
        CK(cuLaunchKernel(bs & 1 ? k->add_two : k->add_one, 1 + bs / 2, 1, 1, PROG_N, 1, 1,
                          0, s, aa, NULL));
        CK(cuLaunchKernel(bs >= 4 ? k->add_two : k->add_one, 1, 1, 1, PROG_N, 1, 1, 0, s,
                          aa, NULL));
        return;
    }
    if (bs & 1)
        CK(cuLaunchKernel(k->scale, 1, 1, 1, PROG_N, 1, 1, 0, s, sa, NULL));
    else
        CK(cuLaunchKernel(k->add_one, 1 + bs, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
    if (bs >= 4)
        CK(cuLaunchKernel(k->scale, 1, 1, 1, PROG_N, 1, 1, 0, s, oa, NULL));
    CK(cuLaunchKernel(k->add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
}

static long long step(const struct kernels *k, CUstream s, CUdeviceptr a, int it, int layers,
                      int cycle)
{
    int n = PROG_N, bs = it % cycle, word = 0;
    void *aa[] = { &a, &n };
    CK(cuMemsetD32Async(a + 4 * (size_t)(it % 4), (unsigned)it, 1, s));
    CK(cuStreamSynchronize(s));
    for (int e = 0; e < 2; e++)
        CK(cuLaunchKernel(k->add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, aa, NULL));
    for (int l = 0; l < layers; l++)
        layer(k, s, a, bs, l >= layers / 2);
    CK(cuLaunchKernel(k->add_one, 1, 1, 1, 1 + bs, 1, 1, 0, s, aa, NULL));
    CK(cuMemcpyDtoHAsync(&word, a + 4 * (size_t)bs, sizeof word, s));
    CK(cuStreamSynchronize(s));
    return word;
}

int main(int argc, char **argv)
{
    CUcontext ctx; CUmodule mod; CUstream s; CUdeviceptr a; struct kernels k;
    int steps = argc > 1 ? atoi(argv[1]) : 400, layers = argc > 2 ? atoi(argv[2]) : 24;
    int cycle = argc > 3 ? atoi(argv[3]) : 8;
    int h[PROG_N];
    long long read = 0;
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&k.add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&k.scale, mod, "scale"));
    CK(cuModuleGetFunction(&k.add_two, mod, "add_two"));
    k.alike = argc > 4 && strcmp(argv[4], "alike") == 0;
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemsetD32(a, 1, PROG_N));
    for (int it = 0; it < steps; it++)
        read += step(&k, s, a, it, layers, cycle);
    CK(cuMemcpyDtoH(h, a, sizeof h));
    printf("sum %ld read %lld\n", prog_sum_int(h, PROG_N), read);
    return 0;
}
