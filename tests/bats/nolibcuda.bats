#!/usr/bin/env bats
# nolibcuda.bats -- no libcuda on the machine gives the program the same error it gets
# without the shim.
#
# Fixtures (tests/bats/fixtures/), built once per run into a temporary folder:
#   nolib.cu          cudaGetDeviceCount + cudaMalloc, prints code and name, exits with it;
#                     built with nvcc's default (static cudart) and with -cudart=shared
#   dlopen_probe.c    dlopen("libcuda.so.1") / ("libcuda.so"), prints dlerror()'s text
#   driver_linked.c   linked with -lcuda (toolkit stub); the loader refuses to start it
# Each one runs without the shim, with LD_PRELOAD=build/libautograph.so, and with the shim
# and AUTOGRAPH=off; stdout, stderr and exit status must be identical.
#
# Skips: every test when a libcuda.so.1 is present (a GPU machine: reason "libcuda
# present"); the nvcc-built tests when nvcc is not found.

setup_file() {
    export TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
    export SHIM="$TOP/build/libautograph.so"
    export FIX="$BATS_TEST_DIRNAME/fixtures"
    export BIN="$BATS_FILE_TMPDIR/bin"
    mkdir -p "$BIN"

    NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    export NVCC
    export CUDA_HOME="${CUDA_HOME:-$(dirname "$(dirname "$NVCC")")}"
    CC=${CC:-cc}

    "$CC" -std=c11 -Wall -Wextra -o "$BIN/dlopen_probe" "$FIX/dlopen_probe.c" -ldl \
        >"$BIN/dlopen_probe.log" 2>&1 || true

    export LIBCUDA_PRESENT=""
    if ldconfig -p 2>/dev/null | grep -qE '(^|[[:space:]])libcuda\.so\.1[[:space:]]'; then
        LIBCUDA_PRESENT="ldconfig lists libcuda.so.1"
    elif [ -x "$BIN/dlopen_probe" ] && env -u LD_PRELOAD "$BIN/dlopen_probe" >/dev/null 2>&1; then
        LIBCUDA_PRESENT="dlopen(libcuda.so.1) succeeds"
    fi
    [ -z "$LIBCUDA_PRESENT" ] || return 0

    if [ -x "$NVCC" ]; then
        "$NVCC" -o "$BIN/nolib_static" "$FIX/nolib.cu" >"$BIN/nolib_static.log" 2>&1 || true
        "$NVCC" -cudart=shared -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" \
            -o "$BIN/nolib_shared" "$FIX/nolib.cu" >"$BIN/nolib_shared.log" 2>&1 || true
    fi
    if [ -f "$CUDA_HOME/include/cuda.h" ] && [ -f "$CUDA_HOME/lib64/stubs/libcuda.so" ]; then
        "$CC" -std=c11 -I"$CUDA_HOME/include" -o "$BIN/driver_linked" "$FIX/driver_linked.c" \
            -L"$CUDA_HOME/lib64/stubs" -lcuda >"$BIN/driver_linked.log" 2>&1 || true
    fi
}

setup() {
    [ -z "$LIBCUDA_PRESENT" ] || skip "libcuda present ($LIBCUDA_PRESENT)"
    [ -f "$SHIM" ] || { echo "missing $SHIM (run make)" >&2; return 1; }
}

# need_exe NAME: fail with the build log when the fixture did not build
need_exe() {
    if [ ! -x "$BIN/$1" ]; then
        echo "fixture $1 did not build:" >&2
        cat "$BIN/$1.log" >&2 2>/dev/null
        return 1
    fi
}

# run_three EXE: run EXE without the shim, with it, and with it and AUTOGRAPH=off;
# fail unless stdout, stderr and exit status are identical.  Leaves the baseline's
# exit status in $base_rc and its stdout in $BIN/out.0.
run_three() {
    local exe=$1 i rc
    local -a rcs=(0 0 0)
    # (bats runs tests under set -e: catch the statuses with ||)
    ( cd "$BIN" && env -u LD_PRELOAD "$exe" >"$BIN/out.0" 2>"$BIN/err.0" ) || rcs[0]=$?
    ( cd "$BIN" && env LD_PRELOAD="$SHIM" "$exe" >"$BIN/out.1" 2>"$BIN/err.1" ) || rcs[1]=$?
    ( cd "$BIN" && env LD_PRELOAD="$SHIM" AUTOGRAPH=off "$exe" >"$BIN/out.2" 2>"$BIN/err.2" ) || rcs[2]=$?
    base_rc=${rcs[0]}
    echo "--- without shim: exit ${rcs[0]}"; cat "$BIN/out.0" "$BIN/err.0"
    for i in 1 2; do
        rc=0
        [ "${rcs[$i]}" = "${rcs[0]}" ] || { echo "run $i: exit ${rcs[$i]} != ${rcs[0]}"; rc=1; }
        diff -u "$BIN/out.0" "$BIN/out.$i" || { echo "run $i: stdout differs"; rc=1; }
        diff -u "$BIN/err.0" "$BIN/err.$i" || { echo "run $i: stderr differs"; rc=1; }
        [ "$rc" -eq 0 ] || { [ "$i" = 1 ] && echo "(run 1: LD_PRELOAD=shim)" || echo "(run 2: LD_PRELOAD=shim AUTOGRAPH=off)"; return 1; }
    done
}

@test "no libcuda: dlopen(libcuda.so.1) fails the same way with the shim" {
    need_exe dlopen_probe
    run_three "$BIN/dlopen_probe"
    [ "$base_rc" -eq 1 ]
    grep -q '^dlopen(libcuda.so.1) = NULL: ' "$BIN/out.0"
}

@test "no libcuda: static-cudart program (nvcc default) gets the same error with the shim" {
    [ -x "$NVCC" ] || skip "nvcc not found (looked for ${NVCC})"
    need_exe nolib_static
    run_three "$BIN/nolib_static"
    [ "$base_rc" -ne 0 ]
    grep -q '^cudaGetDeviceCount [1-9][0-9]* cudaError' "$BIN/out.0"
}

@test "no libcuda: shared-cudart program (-cudart=shared) gets the same error with the shim" {
    [ -x "$NVCC" ] || skip "nvcc not found (looked for ${NVCC})"
    need_exe nolib_shared
    run_three "$BIN/nolib_shared"
    [ "$base_rc" -ne 0 ]
    grep -q '^cudaGetDeviceCount [1-9][0-9]* cudaError' "$BIN/out.0"
}

@test "no libcuda: program linked with -lcuda is refused by the loader the same way with the shim" {
    [ -f "$CUDA_HOME/lib64/stubs/libcuda.so" ] || skip "no libcuda stub in $CUDA_HOME/lib64/stubs"
    need_exe driver_linked
    run_three "$BIN/driver_linked"
    [ "$base_rc" -ne 0 ]
    grep -q 'libcuda.so.1' "$BIN/err.0"
}
