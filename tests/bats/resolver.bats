#!/usr/bin/env bats
# resolver.bats -- door 3 against the CPU simulator: every wrapped family asked of
# cuGetProcAddress(_v2) at many cudaVersions and both stream flavours comes back
# mapped to the wrapper of the exact symbol the driver chose (door unmapped 0), and
# the program sees the same answers with and without the shim.

setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}"   # AG_TEST_ROOT: see tests/run.sh
    [ -f build/sim/libcuda.so.1 ] || skip "simulator not built (make sim)"
    [ -f build/libautograph.so ] || skip "shim not built (make)"
    summary="$BATS_TEST_TMPDIR/summary"
}

@test "resolver sweep: same answers with and without the shim, nothing unmapped" {
    run env LD_LIBRARY_PATH=build/sim build/progs/resolver_sweep
    [ "$status" -eq 0 ]
    without="$output"
    run env LD_LIBRARY_PATH=build/sim LD_PRELOAD="$PWD/build/libautograph.so" \
        AUTOGRAPH_SUMMARY_FILE="$summary" build/progs/resolver_sweep
    echo "without: $without"
    echo "with:    $output"
    [ "$status" -eq 0 ]
    [ "$output" = "$without" ]
    grep -qx "door unmapped 0" "$summary"
    found=$(sed -n 's/.* \([0-9]*\) found.*/\1/p' <<<"$output")
    swapped=$(sed -n 's/^door getprocaddress //p' "$summary")
    # every successful lookup, plus the resolver asking for itself, was swapped
    [ "$swapped" -eq $((found + 1)) ]
}
