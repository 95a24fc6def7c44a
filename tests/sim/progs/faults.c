/* faults.c -- fault injection: a fixed sequence of driver calls whose return
 * codes are printed, so that SIM_FAIL="sym:k[:code],..." shows up in stdout
 * (and must show up identically with and without the shim).  Without SIM_FAIL
 * every code is 0.  Setup calls are checked: an injected setup failure makes
 * the program exit 1.
 * Calls: cuLaunchKernel x6 (the 6th inside a capture), cuMemcpyHtoD_v2 x3,
 * cuGraphInstantiateWithFlags x2, cuGraphLaunch x(successful instantiations).
 */
#include "prog.h"

int main(void)
{
    CUcontext ctx;
    CUmodule mod;
    CUfunction add_one;
    CUstream s;
    CUdeviceptr p;
    CUgraph g;
    int h[PROG_N], n = PROG_N;
    void *args[] = { &p, &n };
    CUresult rc;

    for (int i = 0; i < PROG_N; i++)
        h[i] = i;
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&p, sizeof h));
    CK(cuMemsetD32(p, 0, PROG_N));

    for (int i = 1; i <= 5; i++) {
        rc = cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, args, NULL);
        printf("cuLaunchKernel #%d -> %d\n", i, (int)rc);
    }
    for (int i = 1; i <= 3; i++) {
        rc = cuMemcpyHtoD(p, h, sizeof h);
        printf("cuMemcpyHtoD_v2 #%d -> %d\n", i, (int)rc);
    }
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    rc = cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, s, args, NULL);
    printf("cuLaunchKernel #6 (captured) -> %d\n", (int)rc);
    CK(cuStreamEndCapture(s, &g));
    for (int i = 1; i <= 2; i++) {
        CUgraphExec exec;
        rc = cuGraphInstantiate(&exec, g, 0);
        printf("cuGraphInstantiateWithFlags #%d -> %d\n", i, (int)rc);
        if (rc == CUDA_SUCCESS) {
            printf("cuGraphLaunch -> %d\n", (int)cuGraphLaunch(exec, s));
            CK(cuGraphExecDestroy(exec));
        }
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(h, p, sizeof h));
    printf("faults: p[0]=%d sum=%ld\n", h[0], prog_sum_int(h, PROG_N));
    return 0;
}
