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

# alt_run REPS ALT [RESULT_OF_ALT]: check_same and time_sides of a fake whose p50 is set by
# its side (no shim 150, shim 100, alt 60), with --alt ALT; each process logs its side
alt_run() {
    cat >"$tmp/fake3.sh" <<'FAKE'
if [ -n "${AG_FAKE_ALT:-}" ]; then s=alt p=60 r=${ALT_RESULT:-42}
elif [ -n "${LD_PRELOAD:-}" ]; then s=on p=100 r=42
else s=off p=150 r=42; fi
echo "$s" >>"$SIDES"
echo "result $r"
echo "per_iter_us p50 $p p90 $p"
FAKE
    run env SIDES="$tmp/sides" ALT_RESULT="${3:-42}" BENCH_CPUS=none bash -c '
        set -u
        prog=bench_lib keys=result check_runs=0 TMO=20
        # shellcheck source=tests/bench/compare_lib.bash
        . tests/bench/compare_lib.bash
        cmp_init "$1" 0 --alt "$2" "$3" "$4"
        check_same fake bash "$5" 2>/dev/null
        time_sides fake "" bash "$5" 2>/dev/null
        echo "same=$same m_off=$m_off m_on=$m_on m_alt=$m_alt ratio=$ratio alt=$ratio_alt pairs=$pairs"
        echo "head=$(alt_head) sep=$(alt_sep) row=$(alt_row)"' _ "$1" "$2" "$tmp/lib.so" \
        "$tmp/out" "$tmp/fake3.sh"
    echo "$output"
}

@test "bench lib: --alt times a third side in the same turns, with its own median and ratio" {
    alt_run 2 "AG_FAKE_ALT=1 AUTOGRAPH_LAUNCH_THREAD=0"
    [ "$status" -eq 0 ]
    [[ "$output" == *"same=SAME m_off=150.00 m_on=100.00 m_alt=60.00 ratio=1.500 alt=2.500"* ]]
    [[ "$output" == *"pairs=1.500 (1.500, 1.500)"* ]]   # the pairs stay no shim / shim
    # the correctness runs, then the timing runs in turn
    [ "$(tr '\n' ' ' <"$tmp/sides")" = "off on alt off on alt off on alt " ]
    [[ "$output" == *"head= shim with AG_FAKE_ALT=1 AUTOGRAPH_LAUNCH_THREAD=0 p50 | ratio no-shim/alt |"* ]]
    [[ "$output" == *"sep=---|---| row= 60.00 | 2.500 |"* ]]
    [ -f "$tmp/out/fake.time.alt.2.summary" ]
}

@test "bench lib: an alt side whose output differs is DIFFER (alt)" {
    alt_run 1 "AG_FAKE_ALT=1" 43
    [ "$status" -eq 0 ]
    [[ "$output" == *"same=DIFFER (alt) "* ]]
    [ -s "$tmp/out/fake.alt.diff" ]
}

@test "bench lib: without --alt no third side and no extra columns" {
    lib_run 1
    [ "$status" -eq 0 ]
    run env BENCH_CPUS=none bash -c 'set -u; prog=b keys=result check_runs=0 TMO=5
        . tests/bench/compare_lib.bash; cmp_init 1 0 "$1" "$2"
        echo "[$(alt_head)$(alt_sep)$(alt_row)]"' _ "$tmp/lib.so" "$tmp/out"
    [ "$output" = "[]" ]
}

@test "bench lib: --alt words must be VAR=VALUE" {
    run env BENCH_CPUS=none bash -c 'set -u; prog=b keys=result check_runs=0 TMO=5
        . tests/bench/compare_lib.bash; cmp_init 1 0 --alt "$1" "$2" "$3"' _ \
        "AUTOGRAPH_LAUNCH_THREAD" "$tmp/lib.so" "$tmp/out"
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad --alt word 'AUTOGRAPH_LAUNCH_THREAD' (want VAR=VALUE)"* ]]
    run env BENCH_CPUS=none bash -c 'set -u; prog=b keys=result check_runs=0 TMO=5
        . tests/bench/compare_lib.bash; cmp_init 1 0 --alt " " "$1" "$2"' _ \
        "$tmp/lib.so" "$tmp/out"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--alt needs at least one VAR=VALUE"* ]]
}

@test "bench lib: loose_bench.sh builds only the programs of the workloads in --only" {
    run bash tests/bench/loose_bench.sh --dry-run --only numlib_fft,samples_curand \
        "$tmp/lib.so" "$tmp/out"
    [ "$status" -eq 0 ]
    [[ "$output" == *"building numlib_prog"* ]]
    [[ "$output" == *"building samples_prog"* ]]
    [[ "$output" != *"building solver_prog"* ]]
    [[ "$output" != *"building trainer_prog"* ]]
    [[ "$output" != *"building churn_prog"* ]]
    run bash tests/bench/loose_bench.sh --dry-run "$tmp/lib.so" "$tmp/out"
    [ "$status" -eq 0 ]
    [ "$(grep -c 'building ' <<<"$output")" -eq 6 ]
    [[ "$output" == *"churn_prog.cu -rdc=true -lcudadevrt"* ]]
}
