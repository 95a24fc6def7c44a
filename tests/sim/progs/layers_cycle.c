/* layers_cycle.c -- an inference loop whose batch size cycles and picks other kernels,
 * each step a stack of identical layers (engine_sim.bats; the shape of a transformer's
 * forward at batch sizes 1..8, where the batch size changes which GEMM kernels run):
 *
 *   layers_cycle [STEPS] [LAYERS] [CYCLE] [MODE] [BUSY_US]
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
 * With "late", the layers of the first half launch bs 0's kernels but for the third,
 * add_two for bs >= 4 (another function of the same form), and those of the second
 * half bs's own as above (a scale for odd bs, a split-K launch more for bs >= 4): the
 * four step shapes part past their first chunk, two of them are longer, and two
 * launch other functions before they part.  Any other MODE ("plain") is the default.
 * BUSY_US (default 0): the program busy that long before each kernel launch, a
 * program slower than its GPU (paced windows).
 */
#include "prog.h"

#include <string.h>

struct kernels { CUfunction add_one, add_two, scale; int alike, late, busy; };

/* A kernel launch on s, the program busy k->busy us before it. */
static void launch(const struct kernels *k, CUfunction f, unsigned grid, CUstream s,
                   void **params)
{
    if (k->busy > 0)
        prog_busy_us(k->busy);
    CK(cuLaunchKernel(f, grid, 1, 1, PROG_N, 1, 1, 0, s, params, NULL));
}

static void layer(const struct kernels *k, CUstream s, CUdeviceptr a, int bs, int late)
{
    int n = PROG_N, minus = -1, one = 1;
    void *aa[] = { &a, &n }, *sa[] = { &a, &minus, &n }, *oa[] = { &a, &one, &n };
    launch(k, k->add_one, 1, s, aa);
    if (k->late && !late) {
        launch(k, k->add_one, 1, s, aa);
        launch(k, bs >= 4 ? k->add_two : k->add_one, 1, s, aa);
        return;
    }
    if (k->alike) {
        bs = late ? bs : 0;
        launch(k, bs & 1 ? k->add_two : k->add_one, 1 + (unsigned)bs / 2, s, aa);
        launch(k, bs >= 4 ? k->add_two : k->add_one, 1, s, aa);
        return;
    }
    if (bs & 1)
        launch(k, k->scale, 1, s, sa);
    else
        launch(k, k->add_one, 1 + (unsigned)bs, s, aa);
    if (bs >= 4)
        launch(k, k->scale, 1, s, oa);
    launch(k, k->add_one, 1, s, aa);
}

static long long step(const struct kernels *k, CUstream s, CUdeviceptr a, int it, int layers,
                      int cycle)
{
    int n = PROG_N, bs = it % cycle, word = 0;
    void *aa[] = { &a, &n };
    CK(cuMemsetD32Async(a + 4 * (size_t)(it % 4), (unsigned)it, 1, s));
    CK(cuStreamSynchronize(s));
    for (int e = 0; e < 2; e++)
        launch(k, k->add_one, 1, s, aa);
    for (int l = 0; l < layers; l++)
        layer(k, s, a, bs, l >= layers / 2);
    if (k->busy > 0)
        prog_busy_us(k->busy);
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
    k.late = argc > 4 && strcmp(argv[4], "late") == 0;
    k.busy = argc > 5 ? atoi(argv[5]) : 0;
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&a, PROG_N * 4));
    CK(cuMemsetD32(a, 1, PROG_N));
    for (int it = 0; it < steps; it++)
        read += step(&k, s, a, it, layers, cycle);
    CK(cuMemcpyDtoH(h, a, sizeof h));
    printf("sum %ld read %lld\n", prog_sum_int(h, PROG_N), read);
    return 0;
}
