#!/usr/bin/env bats
# safety.bats -- the GPU suite of issue 4 items 3, 4 and 6: the engine (AUTOGRAPH on, the
# default) next to the program's own captures and graphs and next to profiling and
# checking tools (coexistence), with launches from many threads (threads), and the
# program's own errors (error transparency).
#
# Run from the repository root:  bats tests/gpu/safety.bats   (or .carry/bats/bin/bats)
# Needs a usable GPU; every test says `skip "no GPU"` otherwise.  Builds what it needs
# with `make all gpu-progs` (tests/gpu/gpu.mk) when a GPU is there.
#
# Programs (tests/gpu/): capture_prog.cu, threads_prog.cu, errors_prog.cu (each built with
# static and shared cudart, threads_prog also with --default-stream per-thread),
# torch_capture.py, torch_profile.py; ncu and compute-sanitizer from the toolkit.  Every
# test runs its program without the shim (a) and with it (b) and compares stdout byte for
# byte: result hashes, and for errors_prog every call's error code.  The shim's exit
# summary (AUTOGRAPH_SUMMARY_FILE) shows that the engine was at work: launches_graphed > 0
# (a test the engine passes by doing nothing is no test), and the calls and flushes named
# in each test.  The numbers go to the TAP log ("# ..." lines).
#
# Knobs: AG_ENGINE_TIMEOUT (seconds one program may run; default here 120: a deadlock
# fails the test).  AUTOGRAPH_* of the caller's environment are cleared for every run.

load gpu_helpers

setup_file() {
    export AG_ENGINE_TIMEOUT=${AG_ENGINE_TIMEOUT:-120}
    ag_setup_file || return 1
    ag_setup_python
}

setup() { ag_setup; }

# --- helpers ---------------------------------------------------------------------------

# sf_calls PREFIX TAG : the shim's calls of every entry point whose symbol starts with
# PREFIX, summed over TAG's summary files.
sf_calls() {
    cat "$BATS_TEST_TMPDIR/$2".sum.* 2>/dev/null |
        awk -v p="$1" '$1 == "call" && index($2, p) == 1 { s += $3 } END { printf "%d\n", s }'
}

# sf_fail MESSAGE... : print the message on stderr and fail.
sf_fail() {
    echo "$*" >&2
    return 1
}

# --- item 3: the program's own captures and graphs ---------------------------------------

# sf_capture PROG MODE : capture_prog MODE 3 with and without the shim: same bytes, the
# engine graphed the eager windows, the shim saw the program's 3 captures begin, and the
# window the engine was holding when each began was ended by it (flush app_capture).
sf_capture() {
    local rounds=3 t=$BATS_TEST_TMPDIR/b
    eg_repeating "$1" "$2" "$rounds" || return 1
    local begun flushed
    begun=$(sf_calls cuStreamBeginCapture b)
    flushed=$(ag_sum "flush app_capture" "$t".sum.*)
    ag_log "$1 $2: captures begun $begun (shim's calls), windows ended by a capture $flushed;" \
        "graph_nodes per round: $(awk '$4 == "graph_nodes" { printf "%s ", $5 }' "$t.out")"
    grep -q invalidated "$t.out" && sf_fail "$1 $2: a capture was invalidated"
    [ "$begun" -ge "$rounds" ] ||
        sf_fail "$1 $2: the shim saw $begun cuStreamBeginCapture* calls, the program made $rounds"
    [ "$flushed" -ge "$rounds" ] ||
        sf_fail "$1 $2: only $flushed windows ended at the program's $rounds captures" \
            "(the work held when a capture began was not issued first)"
}

@test "safety: capture global (held work issued before, own graph between replays), static cudart: same bytes" {
    sf_capture capture_static global
}
@test "safety: capture global, shared cudart: same bytes" {
    sf_capture capture_shared global
}
@test "safety: capture thread_local, another thread syncing meanwhile, static cudart: same bytes" {
    sf_capture capture_static thread_local
}
@test "safety: capture thread_local, another thread syncing meanwhile, shared cudart: same bytes" {
    sf_capture capture_shared thread_local
}
@test "safety: capture relaxed (cudaMalloc inside), another thread syncing meanwhile, static cudart: same bytes" {
    sf_capture capture_static relaxed
}
@test "safety: capture relaxed, another thread syncing meanwhile, shared cudart: same bytes" {
    sf_capture capture_shared relaxed
}
@test "safety: cudaStreamBeginCaptureToGraph (relaxed), static cudart: same bytes" {
    sf_capture capture_static tograph
}
@test "safety: cudaStreamBeginCaptureToGraph (relaxed), shared cudart: same bytes" {
    sf_capture capture_shared tograph
}

# CUPTI counts kernel executions, nodes of every graph included: the program's graph, the
# engine's graphs and the eager launches together must run each kernel exactly once.
@test "safety: capture relaxed with CUPTI: every kernel (own graph, engine graphs, eager) runs exactly once" {
    eg_exactly_once 1 capture_static relaxed 2
    [ "$EG_GRAPHED" -gt 0 ]
}

@test "safety: torch.cuda.graph (capture_error_mode global, thread_local, relaxed) + replays between eager steps: same hashes" {
    need_torch
    eg_pair_cmd "torch_capture.py graph" "$AG_PY" tests/gpu/torch_capture.py graph || return 1
    local t=$BATS_TEST_TMPDIR begun
    begun=$(sf_calls cuStreamBeginCapture b)
    ag_log "torch.cuda.graph: captures begun $begun (shim's calls);" \
        "$(grep -c sha256 "$t/a.out") hash lines"
    [ "$(grep -c '^graph_[a-z_]* sha256 [0-9a-f]\{64\}$' "$t/a.out")" -eq 3 ]
    [ "$begun" -ge 3 ] || sf_fail "the shim saw $begun cuStreamBeginCapture* calls, torch made 3"
}

@test "safety: torch.compile(mode=\"reduce-overhead\") (CUDA graph trees) between eager steps: same hashes" {
    need_torch
    [ "${AG_TRITON:-0}" = 1 ] || skip "no triton"
    local t=$BATS_TEST_TMPDIR begun skips
    # One fresh cache, filled by the run without the shim, so that the run with it stays
    # short (compiling under the shim is gpu.bats's Triton test); both capture and replay.
    TORCHINDUCTOR_CACHE_DIR=$t/inductor TRITON_CACHE_DIR=$t/triton TORCHINDUCTOR_COMPILE_THREADS=1 \
        eg_run a plain "$AG_PY" tests/gpu/torch_capture.py compile || { ag_show a; false; }
    TORCHINDUCTOR_CACHE_DIR=$t/inductor TRITON_CACHE_DIR=$t/triton TORCHINDUCTOR_COMPILE_THREADS=1 \
        eg_run b shim "$AG_PY" tests/gpu/torch_capture.py compile || { ag_show b; false; }
    eg_stats b
    begun=$(sf_calls cuStreamBeginCapture b)
    skips=$(awk '$2 == "cudagraph_skips" { print $3 }' "$t/a.out")
    ag_log "torch.compile reduce-overhead: cudagraph_skips ${skips:-?} (without the shim)," \
        "captures begun with the shim $begun; $EG_LINE"
    [ "$skips" = 0 ] || sf_fail "Inductor did not use CUDA graphs even without the shim" \
        "(cudagraph_skips ${skips:-?}): this test checks nothing; stderr:" "$(ag_show a)"
    if ! cmp -s "$t/a.out" "$t/b.out"; then
        diff "$t/a.out" "$t/b.out" >&2
        ag_show b >&2
        sf_fail "torch.compile: output differs with the shim"
    fi
    [ "$begun" -ge 1 ] || sf_fail "the shim saw no cuStreamBeginCapture* call"
}

# gpu.bats runs the profiler with AUTOGRAPH=off; here the engine is on and graphs the loop.
@test "safety: PyTorch profiler on a repeating loop with the engine graphing it: same kernel events, same hash" {
    need_torch
    local t=$BATS_TEST_TMPDIR ka kb
    eg_pair_cmd "torch_profile.py loop 40" "$AG_PY" tests/gpu/torch_profile.py \
        "$t/trace.json" loop 40 || return 1
    ka=$(awk '$1 == "trace_kernels" { print $2 }' "$t/a.out")
    kb=$(awk '$1 == "trace_kernels" { print $2 }' "$t/b.out")
    ag_log "profiler loop 40: trace kernel events without the shim $ka, with $kb"
    [ "$ka" -gt 0 ]                   # equal to kb: eg_pair_cmd compared the whole stdout
    grep -q '"cat": *"kernel"' "$t/trace.json"
    [ "$EG_GRAPHED" -gt 0 ] || sf_fail "the engine graphed nothing of the profiled loop"
}

@test "safety: compute-sanitizer memcheck on capture relaxed with the shim: 0 errors, same bytes, graphed > 0" {
    eg_memcheck capture_static relaxed 2
}

# sf_ncu TAG NCU_ARGS... : ncu NCU_ARGS on engine_static tiny 10 40 with the shim (its own
# output in TAG.log): exit 0 and the program's stdout equal to a run without ncu and the
# shim (a.out).  Sets SF_PROFILED (kernels ncu profiled) and EG_* from the run.
sf_ncu() {
    local tag=$1 t=$BATS_TEST_TMPDIR rc=0
    shift
    # ncu injects itself into the target with LD_PRELOAD (a value set around ncu would
    # be replaced): the target's own shell adds the shim to what ncu set
    eg_run "$tag" plain SF_SHIM="$AG_SHIM" SF_SUM="$t/$tag.sum.%p" \
        "$NCU" "$@" --target-processes all --log-file "$t/$tag.log" \
        sh -c 'LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$SF_SHIM" AUTOGRAPH_SUMMARY_FILE="$SF_SUM" exec "$@"' \
        sh "$AG_BIN/engine_static" tiny 10 40 || rc=$?
    eg_stats "$tag"
    SF_PROFILED=$(grep -c '==PROF== Profiling' "$t/$tag.log" 2>/dev/null || true)
    ag_log "ncu $*: exit $rc, ${SF_PROFILED:-0} kernels profiled; $EG_LINE;" \
        "shim summaries $EG_SUMFILES: $(cat "$t/$tag".sum.* 2>/dev/null |
            grep -E '^(kernel_launches|door|windows) ' | tr '\n' ' ')"
    if [ "$rc" -ne 0 ]; then
        sed 's/^/    ncu: /' "$t/$tag.log" | tail -n 30 >&2
        ag_show "$tag" >&2
        eg_run "$tag.ctl" plain "$NCU" "$@" --target-processes all \
            --log-file "$t/$tag.ctl.log" "$AG_BIN/engine_static" tiny 10 40 &&
            sf_fail "ncu $* exits $rc with the shim, 0 without it"
        sf_fail "ncu $* exits $rc with the shim and fails without it too (see its log above:" \
            "ERR_NVGPUCTRPERM means no permission for GPU performance counters)"
    fi
    cmp -s "$t/a.out" "$t/$tag.out" ||
        sf_fail "ncu $*: the program's stdout differs with ncu and the shim"
}

@test "safety: ncu --launch-count 5 with the shim: exit 0, same bytes, kernels profiled, the shim loaded in the target" {
    NCU=$(ag_tool ncu) || skip "ncu not found (Nsight Compute CLI; not on PATH nor in $(ag_cuda_home)/bin)"
    eg_run a plain "$AG_BIN/engine_static" tiny 10 40 || { ag_show a; false; }
    sf_ncu n --launch-count 5
    [ "$SF_PROFILED" -ge 1 ] || sf_fail "ncu profiled no kernel"
    [ "$EG_SUMFILES" -ge 1 ] || sf_fail "no exit summary: the shim was not loaded in the target"
}

# Kernels 100.. run inside the engine's graphs: ncu profiles them as graph nodes (node
# mode) or profiles whole graphs (graph mode).
@test "safety: ncu on the engine's graphs (--graph-profiling node and graph) with the shim: exit 0, same bytes" {
    NCU=$(ag_tool ncu) || skip "ncu not found (Nsight Compute CLI; not on PATH nor in $(ag_cuda_home)/bin)"
    eg_run a plain "$AG_BIN/engine_static" tiny 10 40 || { ag_show a; false; }
    sf_ncu node --graph-profiling node --launch-skip 100 --launch-count 3
    [ "$EG_SUMFILES" -ge 1 ]
    sf_ncu graph --graph-profiling graph --launch-skip 20 --launch-count 2
    [ "$EG_SUMFILES" -ge 1 ]
}

# --- item 4: launches from several threads --------------------------------------------------

# sf_threads PROG MODE : threads_prog MODE 8 200, three times with and without the shim,
# each under AG_ENGINE_TIMEOUT (a deadlock fails): every run gives the same bytes.
sf_threads() {
    local t=$BATS_TEST_TMPDIR i
    for i in 1 2 3; do
        rm -f "$t"/b.sum.*
        eg_pair "$1" "$2" 8 200 || return 1
        ag_log "$1 $2 run $i: skip threads $(ag_sum "skip threads" "$t"/b.sum.*)," \
            "skip ptds_threads $(ag_sum "skip ptds_threads" "$t"/b.sum.*)"
        [ "$i" = 1 ] && cp "$t/a.out" "$t/first.out"
        cmp -s "$t/first.out" "$t/b.out" ||
            sf_fail "$1 $2: run $i with the shim differs from run 1 without it"
    done
}

@test "safety: 8 threads, own streams, cross-thread event waits, static cudart: same bytes x3, no deadlock" {
    sf_threads threads_static streams
}
@test "safety: 8 threads, own streams, cross-thread event waits, shared cudart: same bytes x3, no deadlock" {
    sf_threads threads_shared streams
}
@test "safety: 8 threads, own streams, cross-thread event waits, per-thread default stream build: same bytes x3" {
    sf_threads threads_ptds streams
}
@test "safety: 8 threads sharing one stream under a mutex, static cudart: same bytes x3, no deadlock" {
    sf_threads threads_static shared
}
@test "safety: 8 threads sharing one stream under a mutex, shared cudart: same bytes x3, no deadlock" {
    sf_threads threads_shared shared
}
@test "safety: 8 threads on the legacy default stream, static cudart: same bytes x3, no deadlock" {
    sf_threads threads_static default
}
@test "safety: 8 threads on their per-thread default streams (--default-stream per-thread): same bytes x3" {
    sf_threads threads_ptds default
}

@test "safety: 8 threads with CUPTI: every kernel runs exactly once (streams, shared, default)" {
    local m i=0 bad=0
    for m in streams shared default; do
        i=$((i + 1))
        eg_exactly_once "$i" threads_static "$m" 8 100 || bad=1
    done
    [ "$bad" = 0 ]
}

# --- item 6: the program's own errors ---------------------------------------------------------

# sf_errors CASE CALL... : errors_prog CASE, static and shared cudart, runtime and driver
# API, without and with the shim: the same exit status and the same stdout (every call of
# the error segments with its code, then the result hashes); the engine graphed the warm
# windows (so the errors came while it was replaying); and without the shim each CALL
# named returned an error (the program really made it).
sf_errors() {
    local c=$1 dir=$BATS_TEST_TMPDIR prog api a b ra rb bad=0 call code
    shift
    for prog in errors_static errors_shared; do
        for api in rt drv; do
            a=a_${prog}_$api b=b_${prog}_$api ra=0 rb=0
            eg_run "$a" plain "$AG_BIN/$prog" "$c" "$api" || ra=$?
            eg_run "$b" shim "$AG_BIN/$prog" "$c" "$api" || rb=$?
            eg_stats "$b"
            ag_log "$prog $c $api: exit $ra without the shim, $rb with;" \
                "codes: $(awk 'NF == 3 && $3 != 0 { printf "%s=%s ", $2, $3 }' "$dir/$a.out");" \
                "$EG_LINE"
            # 124, 137: timed out (a crash, 128 + signal, is compared like any status)
            if [ "$ra" = 124 ] || [ "$ra" = 137 ] || [ "$rb" = 124 ] || [ "$rb" = 137 ] ||
                [ ! -s "$dir/$a.out" ]; then
                echo "$prog $c $api: timed out or no log (exit $ra without the shim, $rb with)" >&2
                ag_show "$a" >&2
                ag_show "$b" >&2
                bad=1
                continue
            fi
            if [ "$ra" -ne "$rb" ]; then
                echo "$prog $c $api: exit status $ra without the shim, $rb with it" >&2
                ag_show "$b" >&2
                bad=1
            fi
            if ! cmp -s "$dir/$a.out" "$dir/$b.out"; then
                echo "$prog $c $api: the calls' codes differ with the shim (< without, > with):" >&2
                diff "$dir/$a.out" "$dir/$b.out" | head -n 20 >&2
                bad=1
            fi
            if [ "$EG_GRAPHED" -le 0 ]; then
                echo "$prog $c $api: launches_graphed 0: the engine was not replaying" >&2
                bad=1
            fi
            for call in "$@"; do
                code=$(awk -v c="$call" '$2 == c { print $3; exit }' "$dir/$a.out")
                if [ -z "$code" ] || [ "$code" = 0 ]; then
                    echo "$prog $c $api: without the shim, $call returned '${code:-nothing}'" \
                        "(expected an error): the case does not make its error" >&2
                    bad=1
                fi
            done
        done
    done
    [ "$bad" = 0 ]
}

@test "safety: invalid launch configuration (block 2048, grid 0) first and mid-replay: same call, same code (rt, drv; static, shared)" {
    sf_errors config first_launch_block_2048 first_launch_grid_0 mid_launch_block_2048 \
        mid_launch_grid_0
}
@test "safety: too much dynamic shared memory, first and mid-replay: same call, same code" {
    sf_errors smem first_launch_smem_1MiB mid_launch_smem_1MiB
}
@test "safety: dynamic shared memory over a limit lowered after the window was graphed: the launch fails at its call" {
    sf_errors smem_attr op11:launch
}
# Invalid handles the driver checks (a destroyed stream or event is not checked: using
# one crashes inside the driver, with or without the shim).
@test "safety: invalid event handles (record, wait on a NULL event) mid-replay: same call, same code" {
    sf_errors event record_null_event wait_null_event
}
@test "safety: invalid function handles (a launch of no kernel) mid-replay: same call, same code" {
    sf_errors stream launch_invalid_function
}
@test "safety: out of memory (cudaMalloc, cudaMallocAsync, cudaMallocHost of 1 PiB) mid-replay: same call, same code" {
    sf_errors oom malloc_1PiB malloc_async_1PiB malloc_host_1PiB
}
@test "safety: a kernel writing to an illegal address mid-replay: the error surfaces at the same sync (700), same codes after" {
    sf_errors fault sync
    local f
    for f in "$BATS_TEST_TMPDIR"/a_errors_*.out; do
        grep -q '^[0-9]* sync 700$' "$f" || sf_fail "$f: the sync after the fault did not return 700"
    done
}

# memcheck reports the kernel's invalid writes (compared) and API errors (only logged: the
# shim's own calls after the fault may add some).
@test "safety: compute-sanitizer memcheck on the faulting kernel with the shim: the same invalid accesses, same codes" {
    local cs t=$BATS_TEST_TMPDIR side wa wb
    cs=$(ag_tool compute-sanitizer) || skip "no compute-sanitizer"
    for side in plain shim; do
        eg_run "san_$side" "$side" "$cs" --tool memcheck --log-file "$t/san_$side.log" \
            "$AG_BIN/errors_static" fault rt || { ag_show "san_$side"; false; }
    done
    wa=$(grep -c 'Invalid __global__ \(read\|write\)' "$t/san_plain.log" || true)
    wb=$(grep -c 'Invalid __global__ \(read\|write\)' "$t/san_shim.log" || true)
    [ "$wa" -gt 0 ] || { echo "memcheck without the shim reports no invalid access:" >&2
                         head -n 30 "$t/san_plain.log" >&2; }
    eg_stats san_shim
    ag_log "memcheck on the fault: invalid __global__ accesses $wa without the shim, $wb with;" \
        "ERROR SUMMARY $(grep -o 'ERROR SUMMARY: [0-9]*' "$t/san_plain.log" | tail -n 1)" \
        "/ $(grep -o 'ERROR SUMMARY: [0-9]*' "$t/san_shim.log" | tail -n 1); $EG_LINE"
    [ "$wa" -gt 0 ]
    [ "$wa" = "$wb" ]
    if ! cmp -s "$t/san_plain.out" "$t/san_shim.out"; then
        diff "$t/san_plain.out" "$t/san_shim.out" | head -n 20 >&2
        sf_fail "under memcheck the calls' codes differ with the shim"
    fi
}
