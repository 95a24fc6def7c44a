#!/usr/bin/env bats
# sim.bats -- the CPU driver simulator (tests/sim, build/sim/libcuda.so.1) and
# the shim running on it.  Every test program is run without the shim and with
# it (LD_PRELOAD): stdout, SIM_LOG and exit code must be identical, and the
# shim's exit summary must count exactly the launches the program made through
# each door.  The simulator's own checks live in build/sim/progs/selftest.

setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}"   # AG_TEST_ROOT: see tests/run.sh
    [ -f build/sim/libcuda.so.1 ] || skip "simulator not built (make sim)"
    progs=build/sim/progs
    tmp="$BATS_TEST_TMPDIR"
}

need_shim() {
    [ -f build/libautograph.so ] || skip "shim not built"
}

# run_both PROG [ARGS...]: runs PROG without and with the shim (same environment).
# Sets plain_rc / shim_rc; leaves *.out, *.err, *.log and summary in $tmp.
run_both() {
    local prog=$1
    shift
    rm -f "$tmp"/plain.* "$tmp"/shim.* "$tmp/summary"
    plain_rc=0
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/plain.log" SIM_LOG_STREAMS=hide \
        "$progs/$prog" "$@" >"$tmp/plain.out" 2>"$tmp/plain.err" || plain_rc=$?
    shim_rc=0
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/shim.log" SIM_LOG_STREAMS=hide \
        LD_PRELOAD="$PWD/build/libautograph.so" \
        AUTOGRAPH_SUMMARY_FILE="$tmp/summary" \
        "$progs/$prog" "$@" >"$tmp/shim.out" 2>"$tmp/shim.err" || shim_rc=$?
    echo "--- without the shim (rc $plain_rc)"; cat "$tmp/plain.out" "$tmp/plain.err"
    echo "--- with the shim (rc $shim_rc)"; cat "$tmp/shim.out" "$tmp/shim.err"
    echo "--- summary"; cat "$tmp/summary" 2>/dev/null || true
}

# Both runs behaved the same; the logs are compared as they are, or sorted
# (sorted: for programs whose threads interleave).
assert_same() {
    [ "$plain_rc" -eq "$shim_rc" ]
    cmp "$tmp/plain.out" "$tmp/shim.out"
    if [ "${1:-}" = sorted ]; then
        diff <(sort "$tmp/plain.log") <(sort "$tmp/shim.log")
    else
        diff "$tmp/plain.log" "$tmp/shim.log"
    fi
    grep -qx "door unmapped 0" "$tmp/summary"
}

# assert_count LINE-PREFIX N: the summary line "<prefix> N" (a missing line is 0).
assert_count() {
    local got
    got=$(sed -n "s/^$1 //p" "$tmp/summary")
    echo "summary: $1 = ${got:-0} (want $2)"
    [ "${got:-0}" -eq "$2" ]
}

@test "sim: exports the driver's symbols (every wrapped entry among them), SONAME libcuda.so.1" {
    stub="${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so"
    [ -f "$stub" ] || skip "no CUDA driver stub to compare with"
    nm -D --defined-only "$stub" | awk '{print $3}' | sort >"$tmp/stub"
    nm -D --defined-only build/sim/libcuda.so.1 | awk '{print $3}' | grep -v '^sim_' | sort >"$tmp/sim"
    sed -n 's/^AG_ENTRY(\([A-Za-z0-9_]*\),.*/\1/p' shim/entry_points.def | sort >"$tmp/table"
    # Nothing the real driver lacks.  (Stubs of some toolkits also export the GL, EGL,
    # VDPAU and debugger entry points of cudaGL.h & co, which the simulator leaves out.)
    comm -13 "$tmp/stub" "$tmp/sim" >"$tmp/extra"
    echo "exports the stub lacks:"; cat "$tmp/extra"
    [ ! -s "$tmp/extra" ]
    # Every entry point the shim wraps.
    comm -23 "$tmp/table" "$tmp/sim" >"$tmp/missing"
    echo "wrapped entry points the simulator lacks:"; cat "$tmp/missing"
    [ ! -s "$tmp/missing" ]
    readelf -d build/sim/libcuda.so.1 | grep -q 'Library soname: \[libcuda.so.1\]'
}

@test "sim: selftest (resolver, memory, launches, graphs, capture rules, VMM, faults)" {
    run env LD_LIBRARY_PATH=build/sim "$progs/selftest"
    echo "$output"
    [ "$status" -eq 0 ]
    ! grep -q "^not ok" <<<"$output" || false
    grep -q "checks, 0 failed" <<<"$output"
}

@test "sim: results and logs are deterministic across runs" {
    for i in 1 2; do
        LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/run$i.log" "$progs/graph_basic" >"$tmp/run$i.out"
    done
    cmp "$tmp/run1.out" "$tmp/run2.out"
    cmp "$tmp/run1.log" "$tmp/run2.log"
    grep -qx "kernel scale grid=1x1x1 block=256x1x1 smem=0 stream=s2 args=a2+0,03000000,00010000" \
        "$tmp/run1.log"
    grep -q "^checksum a1 device bytes=1024 fnv1a=" "$tmp/run1.log"
}

@test "sim: a graph replay logs like the eager code it was captured from" {
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/eager.log" SIM_LOG_SKIP=event \
        "$progs/log_replay" eager >"$tmp/eager.out"
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/graph.log" SIM_LOG_SKIP=event \
        "$progs/log_replay" graph >"$tmp/graph.out"
    cmp "$tmp/eager.out" "$tmp/graph.out"
    diff "$tmp/eager.log" "$tmp/graph.log"
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/marked.log" SIM_LOG_SKIP=event SIM_LOG_GRAPH=marked \
        "$progs/log_replay" graph >/dev/null
    grep -q "^g:graph_launch graph[0-9]* stream=s1$" "$tmp/marked.log"
    grep -q "^g:kernel saxpy .* stream=s2 " "$tmp/marked.log"
    diff "$tmp/eager.log" <(grep -v "^g:graph_launch" "$tmp/marked.log" | sed 's/^g://')
}

@test "sim: SIM_TRACE names each driver call; malformed SIM_FAIL is reported once" {
    run env LD_LIBRARY_PATH=build/sim SIM_TRACE=1 "$progs/door_dlsym"
    [ "$status" -eq 0 ]
    grep -q "^sim: cuLaunchKernel_ptsz$" <<<"$output"
    run env LD_LIBRARY_PATH=build/sim SIM_FAIL="cuLaunchKernel:x" "$progs/faults"
    [ "$status" -eq 0 ]
    [ "$(grep -c "malformed SIM_FAIL" <<<"$output")" -eq 1 ]
    ! grep -q -- "-> [1-9]" <<<"$output" || false
}

@test "door 1 (linked): same behaviour with the shim; launches counted per export" {
    need_shim
    run_both door_linked
    assert_same
    grep -qx "door_linked: y\[0\]=1.0 y\[255\]=1531.0 sum(y)=196096.0" "$tmp/plain.out"
    grep -qx "door_linked: sum(a)=3328 sum(b)=26880" "$tmp/plain.out"
    assert_count "call cuLaunchKernel" 6
    assert_count "call cuLaunchKernel_ptsz" 3
    assert_count "call cuLaunchKernelEx" 1
    assert_count "call cuLaunchCooperativeKernel" 1
    assert_count kernel_launches 11
}

@test "door 2 (dlsym): same behaviour with the shim; launches counted per export" {
    need_shim
    run_both door_dlsym
    assert_same
    grep -qx "door_dlsym: p\[0\]=66 sum=16896" "$tmp/plain.out"
    assert_count "call cuLaunchKernel" 4
    assert_count "call cuLaunchKernel_ptsz" 2
    assert_count kernel_launches 6
    [ "$(sed -n 's/^door dlsym //p' "$tmp/summary")" -gt 0 ]
}

@test "door 3 (cuGetProcAddress): same answers and behaviour with the shim" {
    need_shim
    run_both door_procaddr
    assert_same
    grep -qx "cuGetProcAddress@11030 -> cuGetProcAddress" "$tmp/plain.out"
    grep -qx "cuGetProcAddress@12000 -> cuGetProcAddress_v2" "$tmp/plain.out"
    grep -qx "resolve cuMemAlloc@3000/default: rc=0 status=0 -> cuMemAlloc" "$tmp/plain.out"
    out="$tmp/plain.out"
    grep -qx "resolve cuLaunchKernel@12000/ptds: rc=0 status=0 -> cuLaunchKernel_ptsz" "$out"
    grep -qx "resolve cuLaunchKernel@3000/default: rc=500 status=2 -> NULL" "$tmp/plain.out"
    grep -qx "resolve cuGraphInstantiate@12000/default: rc=0 status=0 -> cuGraphInstantiateWithFlags" \
        "$out"
    grep -qx "resolve cuDoesNotExist@12000/default: rc=500 status=1 -> NULL" "$tmp/plain.out"
    grep -qx "legacy ABI: allocated=1 sum=1536" "$tmp/plain.out"
    assert_count "call cuLaunchKernel" 3
    assert_count "call cuLaunchKernel_ptsz" 4
    assert_count "call cuLaunchGrid" 1
    assert_count "call cuGetProcAddress" 1
    assert_count kernel_launches 8
    [ "$(sed -n 's/^door getprocaddress //p' "$tmp/summary")" -gt 0 ]
}

@test "graphs: capture, explicit graph, update and set-params behave the same with the shim" {
    need_shim
    run_both graph_basic
    assert_same
    grep -qx "captured: nodes=7 edges=7 roots=1 types=2,0,2,0,0,3,1" "$tmp/plain.out"
    grep -qx "captured run: a=3 b=6 sum(a)=768 host_calls=2" "$tmp/plain.out"
    grep -qx "explicit run: b=12 host_calls=12" "$tmp/plain.out"
    grep -qx "update same topology: result=0 b=18" "$tmp/plain.out"
    grep -qx "update changed topology: rc=910 result=2" "$tmp/plain.out"
    grep -qx "exec node params: b=24" "$tmp/plain.out"
    grep -qx "source node params: b\[0\]=24 b\[255\]=24 host_calls=42" "$tmp/plain.out"
    grep -qx "illegal alloc in capture: rc=900 status=2" "$tmp/plain.out"
    grep -qx "end invalidated capture: rc=901 graph=NULL status=0" "$tmp/plain.out"
    assert_count "call cuLaunchKernel" 3
    assert_count "call cuGraphLaunch" 6
    assert_count "call cuGraphInstantiateWithFlags" 2
}

@test "faults: injected errors reach the program with the same codes, with or without the shim" {
    need_shim
    run_both faults
    assert_same
    ! grep -q -- "-> [1-9]" "$tmp/plain.out" || false
    assert_count kernel_launches 6
    export SIM_FAIL="cuLaunchKernel:3,cuMemcpyHtoD_v2:2:700,cuGraphInstantiateWithFlags:1:201"
    run_both faults
    assert_same
    grep -qx "cuLaunchKernel #3 -> 999" "$tmp/plain.out"
    grep -qx "cuMemcpyHtoD_v2 #2 -> 700" "$tmp/plain.out"
    grep -qx "cuGraphInstantiateWithFlags #1 -> 201" "$tmp/plain.out"
    grep -qx "cuGraphInstantiateWithFlags #2 -> 0" "$tmp/plain.out"
    [ "$(grep -c -- "-> [1-9]" "$tmp/plain.out")" -eq 3 ]
    assert_count "call cuLaunchKernel" 6
    assert_count kernel_launches 5
}

@test "faults: a failing setup call ends the program the same way with the shim" {
    need_shim
    export SIM_FAIL="cuModuleGetFunction:1:500"
    run_both faults
    [ "$plain_rc" -eq 1 ]
    [ "$shim_rc" -eq 1 ]
    grep -q "cuModuleGetFunction.* failed: 500" "$tmp/plain.err"
    grep -q "cuModuleGetFunction.* failed: 500" "$tmp/shim.err"
}

@test "threads: 8 threads on 8 streams, same results and (sorted) log with the shim" {
    need_shim
    run_both threads
    assert_same sorted
    grep -qx "thread 7: p\[0\]=472 sum=120832" "$tmp/plain.out"
    assert_count "call cuLaunchKernel" 200
    assert_count kernel_launches 200
}

@test "log normal form holds through the shim" {
    need_shim
    export SIM_LOG_SKIP=event
    run_both log_replay graph
    assert_same
    mv "$tmp/shim.log" "$tmp/graph.log"
    run_both log_replay eager
    diff "$tmp/graph.log" "$tmp/shim.log"
}
