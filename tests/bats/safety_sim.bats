#!/usr/bin/env bats
# safety_sim.bats -- issue 4 on the CPU simulator: memory the program frees while
# graphs point into it (AUTOGRAPH_CHECK_LIVENESS), the shim's own capture mode, and
# the shim's own driver calls failed by AUTOGRAPH_INJECT_FAULTS.  Every run is
# compared with a run without the shim: same stdout, same simulator log, same exit.

setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}"   # AG_TEST_ROOT: see tests/run.sh
    [ -f build/sim/libcuda.so.1 ] || skip "simulator not built (make sim)"
    [ -f build/libautograph.so ] || skip "shim not built (make)"
    tmp="$BATS_TEST_TMPDIR"
}

# plain ARGS... : build/sim/progs/liveness without the shim
plain() {
    rm -f "$tmp/plain.log"       # the simulator appends to SIM_LOG
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/plain.log" SIM_LOG_STREAMS=hide \
        build/sim/progs/liveness "$@" >"$tmp/plain.out" 2>"$tmp/plain.err" || return 1
}

# shim VAR=VALUE... -- ARGS... : the same under the shim; rc in $shim_rc
shim() {
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    rm -f "$tmp/shim.log" "$tmp/summary"
    shim_rc=0
    env LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/shim.log" SIM_LOG_STREAMS=hide \
        LD_PRELOAD="$PWD/build/libautograph.so" AUTOGRAPH_SUMMARY_FILE="$tmp/summary" \
        "${vars[@]}" build/sim/progs/liveness "$@" >"$tmp/shim.out" 2>"$tmp/shim.err" ||
        shim_rc=$?
    echo "--- shim rc $shim_rc, stderr:"; cat "$tmp/shim.err"
}

# same_as_plain [masked]: masked: the raw address the simulator logs for a pointer
# into freed memory (it differs from run to run) is masked in both logs
same_as_plain() {
    local mask='s/args=[0-9a-f]\{16\}/args=DEAD/'
    [ "$shim_rc" -eq 0 ]
    cmp "$tmp/plain.out" "$tmp/shim.out"
    [ "${1:-}" = masked ] || mask=''
    diff <(sed "$mask" "$tmp/plain.log") <(sed "$mask" "$tmp/shim.log")
}

count() {
    local got
    got=$(sed -n "s/^$1 //p" "$tmp/summary")
    echo "summary: $1 = ${got:-0}" >&2
    echo "${got:-0}"
}

@test "liveness: freeing memory a graph points into keeps that graph; the window on new memory replays it, patched; same results" {
    plain retire
    shim -- retire
    same_as_plain
    [ "$(count kept_freed_memory)" -ge 1 ]
    [ "$(count templates)" -ge 1 ]
    [ "$(count replays)" -ge 12 ]
    [ ! -s "$tmp/shim.err" ]
}

@test "liveness: off by default: a launch with a dead pointer gives no report" {
    plain device
    shim -- device
    same_as_plain masked
    ! grep -q liveness "$tmp/shim.err"
}

# dead_report KIND ALLOC_ENTRY FREE_ENTRY: the report names the pointer, the size,
# both entry points and has both backtraces with a frame of the program
dead_report() {
    grep -q "^libautograph: liveness: cuLaunchKernel of kernel add_one would touch freed memory: argument bytes 0..7 hold 0x[0-9a-f]*, 16 bytes into an allocation that was freed" "$tmp/shim.err"
    grep -q "^libautograph: liveness:   allocation 0x[0-9a-f]*, $2 bytes, made by $3 at:" "$tmp/shim.err"
    grep -q "^libautograph: liveness:   freed by $4 at:" "$tmp/shim.err"
    # (the program's path as it was started: absolute under make memcheck's valgrind)
    [ "$(grep -c '^libautograph: liveness:     #0 \(/.*/\)\?build/sim/progs/liveness' "$tmp/shim.err")" -eq 2 ]
    ! grep -q 'libautograph.so' "$tmp/shim.err"       # the shim's own frames left out
}

@test "liveness: warn reports a dead pointer into device memory once (allocation and free backtraces), the program goes on unchanged" {
    plain device
    shim AUTOGRAPH_CHECK_LIVENESS=warn -- device
    same_as_plain masked
    dead_report device 1024 cuMemAlloc_v2 cuMemFree_v2
    [ "$(grep -c 'would touch freed memory' "$tmp/shim.err")" -eq 1 ]
    [ "$(count launches_graphed)" -gt 0 ]
}

@test "liveness: warn on pinned host memory (cuMemHostAlloc / cuMemFreeHost) and a VMM mapping (cuMemMap / cuMemUnmap)" {
    plain host
    shim AUTOGRAPH_CHECK_LIVENESS=warn -- host
    same_as_plain masked
    dead_report host 1024 cuMemHostAlloc cuMemFreeHost
    plain vmm
    shim AUTOGRAPH_CHECK_LIVENESS=warn -- vmm
    same_as_plain masked
    dead_report vmm 2097152 cuMemMap cuMemUnmap
}

@test "liveness: error stops the program with exit status 87 after the report, before the call" {
    plain device
    grep -q 'dead launch issued' "$tmp/plain.out"
    shim AUTOGRAPH_CHECK_LIVENESS=error -- device
    [ "$shim_rc" -eq 87 ]
    dead_report device 1024 cuMemAlloc_v2 cuMemFree_v2
    grep -q 'AUTOGRAPH_CHECK_LIVENESS=error: stopping the program with exit status 87' "$tmp/shim.err"
    ! grep -q 'dead launch issued' "$tmp/shim.out"
}

@test "capture mode: relaxed, thread_local and global give the same results, graphed" {
    local mode
    plain retire
    for mode in relaxed thread_local global; do
        shim AUTOGRAPH_CAPTURE_MODE=$mode -- retire
        same_as_plain
        [ "$(count replays)" -ge 12 ]
        [ ! -s "$tmp/shim.err" ]
    done
}

# The backend's driver functions (README: AUTOGRAPH_INJECT_FAULTS); this program must
# reach those in MUST_REACH (else the test would test nothing).
BACKEND_FNS="cuStreamBeginCapture cuStreamEndCapture cuGraphInstantiateWithFlags cuGraphLaunch
cuGraphExecKernelNodeSetParams cuGraphExecMemsetNodeSetParams cuGraphExecMemcpyNodeSetParams
cuStreamCreate cuEventCreate cuEventRecord cuEventRecordWithFlags cuStreamWaitEvent
cuStreamGetCaptureInfo cuGraphKernelNodeGetParams cuGraphMemsetNodeGetParams
cuGraphMemcpyNodeGetParams cuCtxGetCurrent cuCtxPushCurrent cuStreamSynchronize"
MUST_REACH="cuStreamBeginCapture cuStreamEndCapture cuGraphInstantiateWithFlags cuGraphLaunch
cuGraphExecKernelNodeSetParams cuStreamCreate cuEventCreate cuEventRecord cuStreamWaitEvent
cuStreamGetCaptureInfo cuGraphKernelNodeGetParams cuCtxGetCurrent"

@test "fault injection: each of the shim's own driver calls failed on its 1st, 2nd and 5th use: same results, one line per fault, the explain log says what was done" {
    local fn at reached=" "
    plain retire
    for fn in $BACKEND_FNS; do
        for at in 1 2 5; do
            shim AUTOGRAPH_INJECT_FAULTS="$fn:$at:2" AUTOGRAPH_EXPLAIN=1 -- retire
            same_as_plain
            if grep -q "injected fault: the shim's use $at of $fn returns error 2" "$tmp/shim.err"; then
                reached+="$fn "
                grep -q '^libautograph: explain: .*\(error 2\|driver refused\|failed\|dropped\)' "$tmp/shim.err" ||
                    { echo "no explanation for $fn:$at"; return 1; }
            fi
        done
    done
    echo "reached: $reached"
    for fn in $MUST_REACH; do
        [[ "$reached" == *" $fn "* ]] || { echo "never reached: $fn"; return 1; }
    done
}

# The sorted logs match, except that a graph launched over two streams adds the
# shim's own join events (record + wait on events the program never names).
same_sorted_log_but_join_events() {
    local ours='^event_[a-z]* \(e[0-9]*\) .*' own
    own=$(sed -n "s/$ours/\1/p" "$tmp/plain.log" | sort -u | paste -sd'|')
    [ -n "$own" ]
    diff <(grep -Ev "^event_[a-z]+ ($own) " "$tmp/plain.log" | sort) \
         <(grep -Ev "^event_[a-z]+ ($own) " "$tmp/shim.log" | grep -v '^event_' | sort)
    diff <(grep -E "^event_[a-z]+ ($own) " "$tmp/plain.log" | sort) \
         <(grep -E "^event_[a-z]+ ($own) " "$tmp/shim.log" | sort)
}

@test "threads: 8 threads, own streams with graphs, cross-thread event waits, one shared stream: same results and (sorted) log, 5 runs, no deadlock" {
    local run
    rm -f "$tmp/plain.log"
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/plain.log" SIM_LOG_STREAMS=hide \
        build/sim/progs/threads_stress >"$tmp/plain.out"
    for run in 1 2 3 4 5; do
        rm -f "$tmp/shim.log" "$tmp/summary"
        timeout -k 5 120 env LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/shim.log" SIM_LOG_STREAMS=hide \
            LD_PRELOAD="$PWD/build/libautograph.so" AUTOGRAPH_SUMMARY_FILE="$tmp/summary" \
            build/sim/progs/threads_stress >"$tmp/shim.out"
        cmp "$tmp/plain.out" "$tmp/shim.out"
        same_sorted_log_but_join_events
        [ "$(count kernel_launches)" -eq 2016 ]
        [ "$(count launches_graphed)" -gt 0 ]
    done
}
