/* engine_cases.c -- fixed workloads for engine behaviours that the random programs
 * of engine_fuzz do not reach, for tests/bats/engine_sim.bats:
 *
 *   engine_cases MODE ITER [EVERY]
 *
 * Each iteration launches add_one (+1) and scale (by -1) onto buffers a, b and c (each
 * buffer moves by a fixed amount per iteration, and only in the program's order of
 * its launches) and ends with a synchronisation.
 *
 *   attr-same       created non-blocking stream s; each iteration: 2 launches,
 *                   cuFuncSetAttribute(add_one, MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024),
 *                   3 launches, cuFuncSetAttribute(scale,
 *                   CLUSTER_SCHEDULING_POLICY_PREFERENCE, SPREAD), 4 launches,
 *                   cuStreamSynchronize(s).  After the first iteration the sets change
 *                   nothing (the same values as before).
 *   attr-smem       the same, but add_one's limit is 1024 and 2048 in turn, switching
 *                   every EVERY iterations (default 1: every iteration).
 *   attr-policy     the same, but scale's policy is SPREAD and LOAD_BALANCING in turn,
 *                   switching every EVERY iterations.  (The simulator stores only the
 *                   shared memory limit; cuFuncGetAttribute reports the policy as 0.)
 *   threads         two threads in one fixed interleaving (a mutex and a condition
 *                   variable pass the turn): the main thread launches 3 kernels onto
 *                   s and passes the turn; the second thread launches 2 onto s, records
 *                   e1 on s, makes s2 wait for it, launches 3 onto c on s2, records e2
 *                   on s2 and passes the turn back; the main thread makes s wait for
 *                   e2, launches 4 onto s and calls cuStreamSynchronize(s).
 *   legacy-implicit created blocking stream s and the legacy stream ordered by the
 *                   legacy stream's implicit synchronization only (no event): on a,
 *                   add on s, neg on legacy, add on s, neg on legacy; on b, add on
 *                   legacy, neg on s, add on legacy, then add on s and neg on legacy
 *                   on c; cuStreamSynchronize(s).  In-place kernels: another order
 *                   gives other sums (run with SIM_GRAPH_ORDER=latest, a graph
 *                   missing an edge runs its ops out of order).
 *   legacy-nonblocking, legacy-blocking
 *                   the legacy stream (handle 0) and a created stream s (with
 *                   CU_STREAM_NON_BLOCKING, or without), fork/join by events: a
 *                   launch on legacy, e1 recorded there, s waits for it, 2 launches on
 *                   s while 2 on legacy, e2 recorded on s, legacy waits for it, 3
 *                   launches on legacy, cuStreamSynchronize(0).
 *   fork-join       created non-blocking streams s and s2; each iteration: e1 recorded
 *                   on s, s2 waits for it, 6 launches on s and 6 on s2 in turn, e2
 *                   recorded on s2, s waits for it, 2 launches on s,
 *                   cuStreamSynchronize(s).
 *   unload          created non-blocking stream s; each iteration: a second module
 *                   loaded and unloaded (as cuDNN does with its runtime-built kernels),
 *                   then 12 launches on s (add_one on a, scale on b in turn),
 *                   cuStreamSynchronize(s); every EVERY-th iteration (0: never) the
 *                   module of add_one and scale itself is unloaded and loaded again
 *                   first (their functions got again).
 *   unload-patched  as unload's launches, the sixth add_two on a: a second module's in
 *                   odd iterations from the sixth to the half, which unloads that
 *                   module, else the program's module's (another function, same layout).
 *   event-churn     created non-blocking streams s and s2; each iteration: an event
 *                   created, 2 launches on s, the event recorded there, s2 waits for
 *                   it, 2 launches on s2, e2 recorded there, s waits for it, 2 launches
 *                   on s, cuStreamSynchronize(s), the event destroyed (as cuDNN does
 *                   with its fork events).  Prints "engine_cases: event handle reused
 *                   N" on stderr (iterations whose new event had the destroyed one's handle: the
 *                   window repeats only then; not under ASan, whose allocator holds
 *                   freed memory back).
 *   event-mid       created non-blocking streams s and s2; each iteration, as cuDNN
 *                   does in a PyTorch CNN step: two events created (fork, join), 2
 *                   launches on s, fork recorded there, s2 waits for it, 2 launches on
 *                   s2, join recorded there, s waits for it, fork destroyed (inside the
 *                   window: a replay may still hold its record), 4 launches on s, join
 *                   destroyed, a launch, cuStreamSynchronize(s); every EVERY-th
 *                   iteration (0: never) the 2 launches after fork's destroy come in
 *                   the other order (a mismatch: the held ops go out, then the held
 *                   destroy).  Prints "engine_cases: event handle reused N" on stderr
 *                   as event-churn does (a destroy the shim never made would leave
 *                   the handle taken).
 *   event-twice     event-mid, then one more iteration whose fork event is destroyed
 *                   twice (the program's error: the second destroy must fail, with
 *                   the driver's error, as without the shim): prints its result.
 *   smem-lower      created non-blocking stream s, a launch, scale's limit set to 2 KiB
 *                   (the shim checks launches' limits from then on), add_one's to 64 KiB; each
 *                   iteration: add_one asking for 60 KiB, 7 launches,
 *                   cuStreamSynchronize(s); every 5th iteration the limit is 48 KiB
 *                   meanwhile (set before, set back after): that launch fails (the
 *                   failures are printed at the end).
 *   smem-lower-kernel  the same, add_one's limit set with cuKernelSetAttribute (in
 *                   the simulator a function is its own kernel).
 *   smem-toggle     as cuDNN does: created non-blocking stream s; each iteration:
 *                   add_one's limit set to 4 KiB, add_one asking for 4 KiB on a, b
 *                   or c in turn (its args change: a patch), 2 launches, the limit
 *                   set to 1 KiB, add_one asking for 1 KiB, a launch, then
 *                   cuStreamSynchronize(s); every EVERY-th iteration (0: never) the
 *                   launch after the lowering is scale's instead (a mismatch: the
 *                   held ops go out one by one, add_one's over the lower limit).  With
 *                   "kernel" as a 4th argument the limits are set with
 *                   cuKernelSetAttribute.  Prints add_one's limit at the end.
 *   event-dead      event-churn, then 2 launches on s and a record of the last
 *                   iteration's (destroyed) event: prints the record's result.
 *   ex-attrs        created non-blocking stream s; each iteration: 6 launches on s
 *                   through cuLaunchKernelEx with two launch attributes (priority 0,
 *                   programmatic stream serialization allowed, as XLA launches),
 *                   add_one and scale in turn on a, b and c, then
 *                   cuStreamSynchronize(s); every EVERY-th iteration (0: never) the
 *                   4th launch asks for priority 1 instead (another op: a mismatch).
 *   slow            created non-blocking stream s; each iteration: 40 launches on s
 *                   (add_one on a, scale on b in turn), the program busy for EVERY
 *                   microseconds (default 1; 0: not at all) before each, then
 *                   cuStreamSynchronize(s): a program slower than its GPU work.
 *   slow-helper     the same, after a second thread has launched add_one onto c on s
 *                   and synchronized it (as PyTorch's autograd thread launches the
 *                   backward pass): two threads have offered work.
 *
 * stdout: the sums of a, b and c at the end, add_one's shared memory limit (attr
 * modes) and "engine_cases: mode=M iterations=N launches=L".  Exit status 0, 1 on an
 * unexpected CUDA error, 2 on bad arguments.  The work is submitted in one fixed
 * order in every mode (threads too), so SIM_LOG is deterministic.
 */
#include "prog.h"

#include <pthread.h>
#include <string.h>

#define SMEM CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
#define POLICY CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE

static CUcontext ctx;
static CUfunction add_one, scale;
static CUstream s, s2;
static CUevent e1, e2;
static CUdeviceptr a, b, c;
static int n = PROG_N, minus = -1;
static long launches;

static void add(CUdeviceptr *p, CUstream st)
{
    void *args[] = { p, &n };
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 0, st, args, NULL));
    launches++;
}

static void neg(CUdeviceptr *p, CUstream st)
{
    void *args[] = { p, &minus, &n };
    CK(cuLaunchKernel(scale, 2, 1, 1, PROG_N / 2, 1, 1, 0, st, args, NULL));
    launches++;
}

/* ---- attr-same, attr-smem, attr-policy (mode 0, 1, 2) ---- */
static void attr_iteration(int mode, int it, int every)
{
    int second = (it / every) % 2;
    int smem = mode == 1 && second ? 2048 : 1024;
    int policy = mode == 2 && second ? CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING
                                     : CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    add(&a, s);
    add(&a, s);
    CK(cuFuncSetAttribute(add_one, SMEM, smem));
    neg(&b, s);
    add(&c, s);
    add(&b, s);
    CK(cuFuncSetAttribute(scale, POLICY, policy));
    neg(&a, s);
    add(&a, s);
    neg(&b, s);
    neg(&a, s);
    CK(cuStreamSynchronize(s));
}

/* ---- smem-lower ---- */

static int lowered_fails;            /* launches over the lowered limit that failed */
static int through_kernel;           /* smem-lower-kernel: limits set with cuKernelSetAttribute */

static void set_add_one_smem(int bytes)
{
    if (through_kernel)
        CK(cuKernelSetAttribute(SMEM, bytes, (CUkernel)add_one, 0));
    else
        CK(cuFuncSetAttribute(add_one, SMEM, bytes));
}

static void smem_lower_iteration(int it)
{
    void *args[] = { &a, &n };
    int lowered = it % 5 == 4;
    if (lowered)
        set_add_one_smem(49152);
    if (cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, 61440, s, args, NULL) == CUDA_SUCCESS)
        launches++;
    else
        lowered_fails++;
    neg(&b, s);
    add(&c, s);
    neg(&a, s);
    add(&b, s);
    neg(&c, s);
    add(&a, s);
    neg(&b, s);
    CK(cuStreamSynchronize(s));
    if (lowered)
        set_add_one_smem(65536);
}

/* ---- smem-toggle ---- */

static void add_asking(CUdeviceptr *p, int smem)
{
    void *args[] = { p, &n };
    CK(cuLaunchKernel(add_one, 1, 1, 1, PROG_N, 1, 1, (unsigned)smem, s, args, NULL));
    launches++;
}

static void smem_toggle_iteration(int it, int every)
{
    CUdeviceptr *turn[3] = { &a, &b, &c };
    set_add_one_smem(4096);
    add_asking(turn[it % 3], 4096);
    neg(&b, s);
    add(&c, s);
    set_add_one_smem(1024);
    if (every > 0 && it % every == every - 1)
        neg(&c, s);                  /* where add_one was held: a mismatch */
    else
        add_asking(&a, 1024);
    neg(&a, s);
    CK(cuStreamSynchronize(s));
}

/* ---- threads ---- */

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int turn;                     /* 0: the main thread's, 1: the second thread's */
static int iters;

static void wait_turn(int me)
{
    pthread_mutex_lock(&turn_lock);
    while (turn != me)
        pthread_cond_wait(&turn_cond, &turn_lock);
    pthread_mutex_unlock(&turn_lock);
}

static void pass_turn(int to)
{
    pthread_mutex_lock(&turn_lock);
    turn = to;
    pthread_cond_broadcast(&turn_cond);
    pthread_mutex_unlock(&turn_lock);
}

static void *second_thread(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(ctx));
    pass_turn(0);                    /* ready */
    for (int it = 0; it < iters; it++) {
        wait_turn(1);
        add(&a, s);
        neg(&b, s);
        CK(cuEventRecord(e1, s));
        CK(cuStreamWaitEvent(s2, e1, 0));
        add(&c, s2);
        add(&c, s2);
        neg(&c, s2);
        CK(cuEventRecord(e2, s2));
        pass_turn(0);
    }
    return NULL;
}

/* A thread running fn; exits the program when it cannot be made. */
static pthread_t start_thread(void *(*fn)(void *))
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, NULL) != 0) {
        fprintf(stderr, "engine_cases: pthread_create failed\n");
        exit(1);
    }
    return t;
}

static void run_threads(void)
{
    pthread_t t;
    turn = 1;
    t = start_thread(second_thread);
    for (int it = 0; it < iters; it++) {
        wait_turn(0);
        add(&a, s);
        neg(&a, s);
        add(&b, s);
        pass_turn(1);
        wait_turn(0);
        CK(cuStreamWaitEvent(s, e2, 0));
        neg(&c, s);
        neg(&a, s);
        add(&a, s);
        neg(&b, s);
        CK(cuStreamSynchronize(s));
    }
    pthread_join(t, NULL);
}

/* slow-helper's second thread: one launch onto c on s, synchronized, in its context. */
static void *helper_thread(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(ctx));
    add(&c, s);
    CK(cuStreamSynchronize(s));
    return NULL;
}

/* `count` launches on s, add_one on a and scale on b in turn, the program busy for
 * `busy` microseconds before each (0: not at all), then cuStreamSynchronize(s). */
static void alternate_on_s(int count, int busy)
{
    for (int k = 0; k < count; k++) {
        if (busy > 0)
            prog_busy_us(busy);
        if (k % 2)
            neg(&b, s);
        else
            add(&a, s);
    }
    CK(cuStreamSynchronize(s));
}

/* ---- unload ---- */

static void unload_iteration(CUmodule *mod, int it, int every)
{
    CUmodule other;
    CK(cuModuleLoadData(&other, "sim-module"));
    CK(cuModuleUnload(other));
    if (every > 0 && it % every == every - 1) {
        CK(cuModuleUnload(*mod));
        CK(cuModuleLoadData(mod, "sim-module"));
        CK(cuModuleGetFunction(&add_one, *mod, "add_one"));
        CK(cuModuleGetFunction(&scale, *mod, "scale"));
    }
    alternate_on_s(12, 0);
}

/* ---- unload-patched ---- */

/* 12 launches on s as alternate_on_s makes them, but the sixth is add_two on a: in
 * odd iterations from the sixth on, a second module's (until the half of the
 * iterations, which unloads that module), else the program's module's.  The graph
 * made from the first iterations is patched to the second module's function in odd
 * ones: its unload must drop it. */
static void unload_patched_iteration(CUmodule *other, CUfunction *other_two,
                                     CUfunction own_two, int it)
{
    void *args[] = { &a, &n };
    if (it == iters / 2) {
        CK(cuModuleUnload(*other));
        *other = NULL;
    }
    for (int k = 0; k < 12; k++) {
        if (k == 5) {
            CUfunction f = *other && it % 2 && it > 5 ? *other_two : own_two;
            CK(cuLaunchKernel(f, 1, 1, 1, PROG_N, 1, 1, 0, s, args, NULL));
            launches++;
        } else if (k % 2) {
            neg(&b, s);
        } else {
            add(&a, s);
        }
    }
    CK(cuStreamSynchronize(s));
}

/* ---- event-churn ---- */

static CUevent last_fork;
static int fork_reused;              /* iterations whose new event had the last one's handle */

/* 2 launches on s, fork recorded there, s2 waits for it, 2 launches on s2, join
 * recorded there, s waits for it (event-churn and event-mid). */
static void fork_and_join(CUevent fork, CUevent join)
{
    add(&a, s);
    neg(&a, s);
    CK(cuEventRecord(fork, s));
    CK(cuStreamWaitEvent(s2, fork, 0));
    add(&b, s2);
    neg(&b, s2);
    CK(cuEventRecord(join, s2));
    CK(cuStreamWaitEvent(s, join, 0));
}

static void churn_iteration(void)
{
    CUevent fork;
    CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    fork_reused += fork == last_fork;
    last_fork = fork;
    fork_and_join(fork, e2);
    add(&c, s);
    neg(&c, s);
    CK(cuStreamSynchronize(s));
    CK(cuEventDestroy(fork));
}

/* The start of a churn iteration, on the last one's event (destroyed): the record
 * must fail, at that call, with the driver's own error. */
static void record_destroyed(void)
{
    CUresult rc;
    add(&a, s);
    neg(&a, s);
    rc = cuEventRecord(last_fork, s);
    printf("engine_cases: record of a destroyed event: %d\n", (int)rc);
    CK(cuStreamSynchronize(s));
}

/* ---- event-mid ---- */

static CUevent last_join;

static int destroy_twice;            /* event-twice: fork's destroy is made twice */

static void mid_iteration(int it, int every)
{
    CUevent fork, join;
    int swap = every > 0 && it % every == every - 1;
    CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    fork_reused += fork == last_fork || fork == last_join || join == last_fork ||
                   join == last_join;
    last_fork = fork;
    last_join = join;
    fork_and_join(fork, join);
    CK(cuEventDestroy(fork));
    if (destroy_twice)
        printf("engine_cases: a second destroy of an event: %d\n", (int)cuEventDestroy(fork));
    if (swap) {
        neg(&c, s);
        add(&c, s);
    } else {
        add(&c, s);
        neg(&c, s);
    }
    add(&a, s);
    neg(&a, s);
    CK(cuEventDestroy(join));
    add(&b, s);
    CK(cuStreamSynchronize(s));
}

/* ---- ex-attrs ---- */

static void ex_launch(CUfunction fn, void **args, unsigned grid, int priority)
{
    CUlaunchAttribute attrs[2] = {
        { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .value.priority = priority },
        { .id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
          .value.programmaticStreamSerializationAllowed = 1 },
    };
    CUlaunchConfig cfg = { .gridDimX = grid, .gridDimY = 1, .gridDimZ = 1,
                           .blockDimX = PROG_N / grid, .blockDimY = 1, .blockDimZ = 1,
                           .hStream = s, .attrs = attrs, .numAttrs = 2 };
    CK(cuLaunchKernelEx(&cfg, fn, args, NULL));
    launches++;
}

static void ex_attrs_iteration(int it, int every)
{
    CUdeviceptr *buf[3] = { &a, &b, &c };
    int odd = every > 0 && it % every == every - 1;
    for (int k = 0; k < 6; k++) {
        void *add_args[] = { buf[k % 3], &n };
        void *neg_args[] = { buf[k % 3], &minus, &n };
        if (k % 2 == 0)
            ex_launch(add_one, add_args, 1, 0);
        else
            ex_launch(scale, neg_args, 2, k == 3 && odd);
    }
    CK(cuStreamSynchronize(s));
}

/* ---- fork-join ---- */

static void fork_join_iteration(void)
{
    CK(cuEventRecord(e1, s));
    CK(cuStreamWaitEvent(s2, e1, 0));
    for (int i = 0; i < 6; i++) {
        add(&a, s);
        neg(&b, s2);
    }
    CK(cuEventRecord(e2, s2));
    CK(cuStreamWaitEvent(s, e2, 0));
    neg(&a, s);
    add(&c, s);
    CK(cuStreamSynchronize(s));
}

/* ---- legacy-nonblocking, legacy-blocking ---- */

static void legacy_implicit_iteration(void)
{
    CUstream legacy = NULL;
    add(&a, s);
    neg(&a, legacy);
    add(&a, s);
    neg(&a, legacy);
    add(&b, legacy);
    neg(&b, s);
    add(&b, legacy);
    add(&c, s);
    neg(&c, legacy);
    CK(cuStreamSynchronize(s));
}

static void legacy_iteration(void)
{
    CUstream legacy = NULL;
    add(&a, legacy);
    CK(cuEventRecord(e1, legacy));
    CK(cuStreamWaitEvent(s, e1, 0));
    add(&b, s);
    add(&a, legacy);
    neg(&b, s);
    neg(&a, legacy);
    CK(cuEventRecord(e2, s));
    CK(cuStreamWaitEvent(legacy, e2, 0));
    add(&a, legacy);
    neg(&a, legacy);
    neg(&b, legacy);
    CK(cuStreamSynchronize(legacy));
}

int main(int argc, char **argv)
{
    CUmodule mod;
    const char *mode = argc > 1 ? argv[1] : "";
    int every = argc > 3 ? atoi(argv[3]) : 1, host[PROG_N];
    int helper = !strcmp(mode, "slow-helper");
    int slow = helper || !strcmp(mode, "slow"), unload = !strcmp(mode, "unload");
    int unload_patched = !strcmp(mode, "unload-patched");
    int dead = !strcmp(mode, "event-dead"), churn = dead || !strcmp(mode, "event-churn");
    int lower = !strcmp(mode, "smem-lower") || !strcmp(mode, "smem-lower-kernel");
    int toggle = !strcmp(mode, "smem-toggle");
    int attr = !strcmp(mode, "attr-same") ? 0 : !strcmp(mode, "attr-smem") ? 1
             : !strcmp(mode, "attr-policy") ? 2 : -1;
    int legacy = !strcmp(mode, "legacy-nonblocking") || !strcmp(mode, "legacy-blocking");
    int implicit = !strcmp(mode, "legacy-implicit");
    int fork_join = !strcmp(mode, "fork-join"), twice = !strcmp(mode, "event-twice");
    int mid = twice || !strcmp(mode, "event-mid"), ex_attrs = !strcmp(mode, "ex-attrs");

    iters = argc > 2 ? atoi(argv[2]) : 0;
    if ((attr < 0 && !legacy && !implicit && !fork_join && !slow && !unload && !churn && !lower &&
         !unload_patched &&
         !toggle && !mid && !ex_attrs && strcmp(mode, "threads")) ||
        iters <= 0 || every < (slow || unload || toggle || mid || ex_attrs ? 0 : 1)) {
        fprintf(stderr, "usage: engine_cases attr-same|attr-smem|attr-policy|threads|"
                        "legacy-nonblocking|legacy-blocking|legacy-implicit|fork-join|slow|slow-helper|unload|"
                        "unload-patched|event-churn|"
                        "event-dead|event-mid|event-twice|smem-lower|smem-lower-kernel|smem-toggle|ex-attrs "
                        "ITER "
                        "[EVERY [kernel]]\n");
        return 2;
    }
    prog_setup(&ctx, &mod);
    CK(cuModuleGetFunction(&add_one, mod, "add_one"));
    CK(cuModuleGetFunction(&scale, mod, "scale"));
    CK(cuStreamCreate(&s, !strcmp(mode, "legacy-blocking") || implicit ? CU_STREAM_DEFAULT
                                                                       : CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&a, sizeof host));
    CK(cuMemAlloc(&b, sizeof host));
    CK(cuMemAlloc(&c, sizeof host));
    CK(cuMemsetD32(a, 1u, PROG_N));
    CK(cuMemsetD32(b, 2u, PROG_N));
    CK(cuMemsetD32(c, 3u, PROG_N));

    if (attr >= 0) {
        for (int it = 0; it < iters; it++)
            attr_iteration(attr, it, every);
    } else if (lower) {
        through_kernel = !strcmp(mode, "smem-lower-kernel");
        add(&a, s);                  /* the engine is on: a change of scale's limit */
        CK(cuFuncSetAttribute(scale, SMEM, 2048));  /* has it check every launch's */
        set_add_one_smem(65536);
        for (int it = 0; it < iters; it++)
            smem_lower_iteration(it);
        printf("engine_cases: launches over the lowered limit that failed: %d\n",
               lowered_fails);
    } else if (toggle) {
        through_kernel = argc > 4 && !strcmp(argv[4], "kernel");
        for (int it = 0; it < iters; it++)
            smem_toggle_iteration(it, argc > 3 ? every : 0);
    } else if (ex_attrs) {
        for (int it = 0; it < iters; it++)
            ex_attrs_iteration(it, argc > 3 ? every : 0);
    } else if (legacy) {
        for (int it = 0; it < iters; it++)
            legacy_iteration();
    } else if (implicit) {
        for (int it = 0; it < iters; it++)
            legacy_implicit_iteration();
    } else if (fork_join) {
        for (int it = 0; it < iters; it++)
            fork_join_iteration();
    } else if (slow) {
        if (helper)
            pthread_join(start_thread(helper_thread), NULL);
        for (int it = 0; it < iters; it++)
            alternate_on_s(40, every);
    } else if (churn) {
        for (int it = 0; it < iters; it++)
            churn_iteration();
        if (dead)
            record_destroyed();
    } else if (mid) {
        for (int it = 0; it < iters; it++)
            mid_iteration(it, argc > 3 ? every : 0);
        destroy_twice = twice;
        if (twice)
            mid_iteration(iters, 0);
    } else if (unload) {
        for (int it = 0; it < iters; it++)
            unload_iteration(&mod, it, argc > 3 ? every : 0);
    } else if (unload_patched) {
        CUmodule other;
        CUfunction own_two, other_two;
        CK(cuModuleGetFunction(&own_two, mod, "add_two"));
        CK(cuModuleLoadData(&other, "sim-module"));
        CK(cuModuleGetFunction(&other_two, other, "add_two"));
        for (int it = 0; it < iters; it++)
            unload_patched_iteration(&other, &other_two, own_two, it);
    } else {
        run_threads();
    }

    CK(cuMemcpyDtoH(host, a, sizeof host));
    printf("engine_cases: a sum %ld\n", prog_sum_int(host, PROG_N));
    CK(cuMemcpyDtoH(host, b, sizeof host));
    printf("engine_cases: b sum %ld\n", prog_sum_int(host, PROG_N));
    CK(cuMemcpyDtoH(host, c, sizeof host));
    printf("engine_cases: c sum %ld\n", prog_sum_int(host, PROG_N));
    if (attr >= 0 || toggle) {
        int v;
        CK(cuFuncGetAttribute(&v, SMEM, add_one));
        printf("engine_cases: add_one max dynamic shared memory %d\n", v);
    }
    if (churn || mid)
        fprintf(stderr, "engine_cases: event handle reused %d\n", fork_reused);
    printf("engine_cases: mode=%s iterations=%d launches=%ld\n", mode, iters, launches);
    return 0;
}
