#!/usr/bin/env bats
# bench_lib.bats -- tests/bench/compare_lib.bash (the driver of loose_bench.sh and
# dyn_bench.sh) without a GPU: the alternating timing processes, their medians per side,
# and each pair's own ratio (a pair: a process without the shim, then one with it),
# checked with a fake program whose processes differ more than its sides do.

setup() {
    cd "$BATS_TEST_DIRNAME/../.." || return 1
    tmp=$BATS_TEST_TMPDIR
    : >"$tmp/lib.so"                   # only named by LD_PRELOAD: the fake ignores it
    # process k of the run prints its p50: pair (k+1)/2, side from LD_PRELOAD
    cat >"$tmp/fake.sh" <<'FAKE'
n=$(($(cat "$COUNTER" 2>/dev/null || echo 0) + 1))
echo "$n" >"$COUNTER"
case $(( (n + 1) / 2 )):${LD_PRELOAD:+on} in
1:) p=151 ;; 1:on) p=100 ;; 2:) p=301 ;; 2:on) p=200 ;; 3:) p=91 ;; *) p=150 ;;
esac
echo "result 42"
echo "per_iter_us p50 $p p90 $p"
FAKE
}

# lib_run REPS: time_sides of the fake with REPS processes a side; prints its results
lib_run() {
    run env COUNTER="$tmp/count" BENCH_CPUS=none bash -c '
        set -u
        prog=bench_lib keys=result check_runs=0 TMO=20
        # shellcheck source=tests/bench/compare_lib.bash
        . tests/bench/compare_lib.bash
        cmp_init "$1" 0 "$2" "$3"
        time_sides fake "" bash "$4" 2>/dev/null
        echo "m_off=$m_off m_on=$m_on ratio=$ratio pairs=$pairs"' _ "$1" "$tmp/lib.so" "$tmp/out" \
        "$tmp/fake.sh"
    echo "$output"
}

@test "bench lib: medians per side, and each pair run in turn with its own ratio and their median" {
    lib_run 3
    [ "$status" -eq 0 ]
    # no shim 151, 301, 91; shim 100, 200, 150: medians 151 / 150; pairs 1.51, 1.505, 0.607
    [[ "$output" == *"m_off=151.00 m_on=150.00 ratio=1.007 pairs=1.505 (1.510, 1.505, 0.607)"* ]]
}

@test "bench lib: processes that give no p50: no medians, no pairs" {
    printf 'echo "result 42"\n' >"$tmp/fake.sh"
    lib_run 2
    [ "$status" -eq 0 ]
    [[ "$output" == *"m_off= m_on= ratio=? pairs=?"* ]]
}
