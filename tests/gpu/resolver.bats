#!/usr/bin/env bats
# resolver.bats (GPU) -- door 3 against the real driver: every wrapped family asked
# of cuGetProcAddress(_v2) at many cudaVersions and both stream flavours is mapped
# to the wrapper of the exact symbol the driver returned (door unmapped 0).

setup() {
    cd "$BATS_TEST_DIRNAME/../.."
    nvidia-smi -L >/dev/null 2>&1 || skip "no GPU"
    [ -x build/progs/resolver_sweep ] || skip "make progs first"
    summary="$BATS_TEST_TMPDIR/summary"
}

@test "gpu: resolver sweep maps every pointer the real driver returns" {
    run build/progs/resolver_sweep
    [ "$status" -eq 0 ]
    without="$output"
    run env LD_PRELOAD="$PWD/build/libautograph.so" AUTOGRAPH_SUMMARY_FILE="$summary" \
        build/progs/resolver_sweep
    echo "without: $without"
    echo "with:    $output"
    cat "$summary"
    echo "# $output; $(grep '^door' "$summary" | tr '\n' ' ')" >&3
    [ "$status" -eq 0 ]
    [ "$output" = "$without" ]
    grep -qx "door unmapped 0" "$summary"
}
