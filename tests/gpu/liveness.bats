#!/usr/bin/env bats
# liveness.bats -- issue 4 on the GPU: memory freed while graphs point into it, dead-
# pointer reports (AUTOGRAPH_CHECK_LIVENESS), and the shim's own driver calls failed by
# AUTOGRAPH_INJECT_FAULTS.  Programs: build/gpu/liveness_{static,shared}
# (tests/gpu/liveness_prog.cu) and build/gpu/engine_static (engine_prog.cu).  Every run
# is compared with a run without the shim: same stdout, byte for byte.
# Needs a usable GPU; every test says `skip "no GPU"` otherwise.

load gpu_helpers

setup_file() { ag_setup_file; }

setup() { ag_setup; }

# lv_run TAG VAR=VALUE... -- CMD... : CMD with the shim (engine on) and the switches;
# rc in LV_RC, summary in TAG.sum.<pid>.
lv_run() {
    local tag=$1 vars=()
    shift
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    ag_env_clean
    LV_RC=0
    timeout -k 10 300 "${AG_ENV[@]}" LD_PRELOAD="$AG_SHIM" \
        AUTOGRAPH_SUMMARY_FILE="$BATS_TEST_TMPDIR/$tag.sum.%p" "${vars[@]}" "$@" \
        >"$BATS_TEST_TMPDIR/$tag.out" 2>"$BATS_TEST_TMPDIR/$tag.err" || LV_RC=$?
}

lv_same() {
    if [ "$LV_RC" -ne 0 ] || ! cmp "$BATS_TEST_TMPDIR/a.out" "$BATS_TEST_TMPDIR/$1.out"; then
        echo "rc $LV_RC; stdout without / with the shim:" >&2
        diff "$BATS_TEST_TMPDIR/a.out" "$BATS_TEST_TMPDIR/$1.out" | head >&2
        ag_show "$1" >&2
        return 1
    fi
}

lv_sum() { ag_sum "$1" "$BATS_TEST_TMPDIR/$2".sum.*; }

lv_retire() {
    ag_plain a "$AG_BIN/$1" retire
    lv_run b -- "$AG_BIN/$1" retire
    lv_same b
    ag_log "$1 retire: kept_freed_memory $(lv_sum kept_freed_memory b)" \
        "templates $(lv_sum templates b) launches_graphed $(lv_sum launches_graphed b)"
    [ "$(lv_sum kept_freed_memory b)" -ge 1 ]
    [ "$(lv_sum templates b)" -ge 1 ]
    [ "$(lv_sum launches_graphed b)" -gt 0 ]
}

@test "liveness: freeing memory a graph points into keeps that graph, replayed on new memory; same bytes (static cudart)" {
    lv_retire liveness_static
}

@test "liveness: the same with shared cudart" {
    lv_retire liveness_shared
}

# lv_dead KIND ALLOC FREE SIZE: warn reports the dead pointer once, with the program's
# frames in both backtraces; the program goes on, same stdout
lv_dead() {
    local err="$BATS_TEST_TMPDIR/w.err"
    ag_plain a "$AG_BIN/liveness_static" "$1"
    lv_run w AUTOGRAPH_CHECK_LIVENESS=warn -- "$AG_BIN/liveness_static" "$1"
    lv_same w
    head -n 16 "$err" >&2               # shown if a check below fails
    grep -q "^libautograph: liveness: cuLaunchKernel of kernel .*add_one.* would touch freed memory: argument bytes 0..7 hold 0x[0-9a-f]*, 16 bytes into an allocation that was freed" "$err"
    grep -q "^libautograph: liveness:   allocation 0x[0-9a-f]*, $4 bytes, made by $2 at:" "$err"
    grep -q "^libautograph: liveness:   freed by $3 at:" "$err"
    [ "$(grep -c '^libautograph: liveness:     #. .*liveness_static' "$err")" -ge 2 ]
    [ "$(grep -c 'would touch freed memory' "$err")" -eq 1 ]
    [ "$(lv_sum launches_graphed w)" -gt 0 ]
    sed -n '1,14p' "$err" | sed 's/^/# /' >&3
}

@test "liveness: warn on device memory (cudaMalloc / cudaFree): one report, both backtraces, same bytes" {
    lv_dead device cuMemAlloc_v2 cuMemFree_v2 16384
}

@test "liveness: warn on mapped pinned host memory (cudaHostAlloc / cudaFreeHost)" {
    lv_dead host cuMemHostAlloc cuMemFreeHost 16384
}

@test "liveness: warn on a VMM mapping (cuMemMap / cuMemUnmap)" {
    lv_dead vmm cuMemMap cuMemUnmap '[0-9]*'
}

@test "liveness: error stops the program with exit status 87 before the dead launch; off says nothing" {
    ag_plain a "$AG_BIN/liveness_static" device
    lv_run e AUTOGRAPH_CHECK_LIVENESS=error -- "$AG_BIN/liveness_static" device
    [ "$LV_RC" -eq 87 ]
    grep -q 'AUTOGRAPH_CHECK_LIVENESS=error: stopping the program with exit status 87' "$BATS_TEST_TMPDIR/e.err"
    ! grep -q 'dead launch issued' "$BATS_TEST_TMPDIR/e.out"
    lv_run o -- "$AG_BIN/liveness_static" device
    lv_same o
    ! grep -q liveness "$BATS_TEST_TMPDIR/o.err"
}

# The backend's driver functions (README, AUTOGRAPH_INJECT_FAULTS)
BACKEND_FNS="cuStreamBeginCapture cuStreamEndCapture cuGraphInstantiateWithFlags cuGraphLaunch
cuGraphExecKernelNodeSetParams cuGraphExecMemsetNodeSetParams cuGraphExecMemcpyNodeSetParams
cuStreamCreate cuEventCreate cuEventRecord cuEventRecordWithFlags cuStreamWaitEvent
cuStreamGetCaptureInfo cuGraphKernelNodeGetParams cuGraphMemsetNodeGetParams
cuGraphMemcpyNodeGetParams cuCtxGetCurrent cuCtxPushCurrent cuStreamSynchronize"

@test "fault injection on the GPU: each of the shim's own driver calls failed on its 1st and 4th use (jacobi, forkjoin, scalar): same bytes, nothing crashes, the explain log says what happened" {
    local w fn at reached=" " runs=0
    for w in "jacobi 60" "forkjoin 40" "scalar 60"; do
        ag_plain a "$AG_BIN/engine_static" $w
        for fn in $BACKEND_FNS; do
            for at in 1 4; do
                lv_run f AUTOGRAPH_INJECT_FAULTS="$fn:$at" AUTOGRAPH_EXPLAIN=1 -- "$AG_BIN/engine_static" $w
                lv_same f
                runs=$((runs + 1))
                if grep -q "injected fault: the shim's use $at of $fn returns error 999" "$BATS_TEST_TMPDIR/f.err"; then
                    [[ "$reached" == *" $fn "* ]] || reached+="$fn "
                    grep -q '^libautograph: explain: .*\(error 999\|driver refused\|failed\|dropped\)' "$BATS_TEST_TMPDIR/f.err" ||
                        { echo "$w $fn:$at: no explanation" >&2; ag_show f >&2; return 1; }
                fi
            done
        done
    done
    ag_log "fault injection: $runs runs, same bytes in all; faults reached in:$reached"
    for fn in cuStreamBeginCapture cuStreamEndCapture cuGraphInstantiateWithFlags cuGraphLaunch \
              cuGraphExecKernelNodeSetParams cuStreamCreate cuEventCreate cuEventRecord; do
        [[ "$reached" == *" $fn "* ]] || { echo "never reached: $fn" >&2; return 1; }
    done
}
