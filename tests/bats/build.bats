#!/usr/bin/env bats
# build.bats -- properties of the built library and of the build itself.
#
#   - no NEEDED entry for libcuda or libcudart (the shim opens libcuda lazily)
#   - a clean `make` of a copy of the tree prints no warning with -Wall -Wextra
#   - `make install PREFIX=...` (and DESTDIR) installs lib/ and include/; uninstall removes
#   - the dynamic exports are the wrapped cu* entry points, the runtime's four kernel
#     launch calls, dlsym and autograph_*, and nothing else (no internal helpers); every
#     entry of shim/entry_points.def is exported
#   - programs that never touch CUDA run exactly as without the shim
# Needs: make, cc, readelf and nm (binutils), python3.

setup_file() {
    export TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
    export SHIM="$TOP/build/libautograph.so"
}

setup() {
    [ -f "$SHIM" ] || { echo "missing $SHIM (run make)" >&2; return 1; }
}

# exported_names: defined dynamic symbols of the shim, one name a line (no @version)
exported_names() {
    nm -D --defined-only "$SHIM" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u
}

# same_as_without PROGRAM ARGS...: run with and without the shim; identical stdout,
# stderr and exit status, and nothing on stderr with the shim.
same_as_without() {
    local d="$BATS_TEST_TMPDIR" rc0=0 rc1=0
    env -u LD_PRELOAD "$@" >"$d/out.0" 2>"$d/err.0" </dev/null || rc0=$?
    env LD_PRELOAD="$SHIM" "$@" >"$d/out.1" 2>"$d/err.1" </dev/null || rc1=$?
    echo "command: $* -- exit without shim $rc0, with shim $rc1"
    echo "--- stderr with shim:"; cat "$d/err.1"
    [ "$rc0" = "$rc1" ]
    diff -u "$d/out.0" "$d/out.1"
    diff -u "$d/err.0" "$d/err.1"
}

@test "build: no NEEDED entry for libcuda or libcudart" {
    run readelf -d "$SHIM"
    [ "$status" -eq 0 ]
    echo "$output" | grep NEEDED || true
    echo "$output" | grep -q NEEDED
    if echo "$output" | grep NEEDED | grep -Ei 'libcuda|libcudart'; then false; fi
}

@test "build: the flags every held launch reads (AG_HOT, section ag_hot) fit in one 64-byte cache line" {
    local line addr size
    line=$(readelf -SW "$SHIM" | awk '$2 == "ag_hot" || $3 == "ag_hot"')
    echo "section: $line"
    [ -n "$line" ]
    read -r addr size < <(awk '{ for (i = 1; i <= NF; i++) if ($i == "ag_hot") { print $(i + 2), $(i + 4); exit } }' <<<"$line")
    echo "address 0x$addr, size 0x$size"
    [ $((16#$addr % 64)) -eq 0 ] && [ $((16#$size)) -le 64 ]
}

@test "build: clean make of a copy of the tree has no warnings (-Wall -Wextra)" {
    local copy="$BATS_TEST_TMPDIR/tree"
    mkdir -p "$copy"
    (cd "$TOP" && tar -cf - --exclude=./build --exclude=./.git .) | (cd "$copy" && tar -xf -)
    local rc=0
    make -C "$copy" --no-print-directory all >"$copy/build.log" 2>&1 || rc=$?
    cat "$copy/build.log"
    [ "$rc" -eq 0 ]
    [ -f "$copy/build/libautograph.so" ]
    # the flags really reached the compiler
    grep -E -- '-Wall' "$copy/build.log" | grep -qE -- '-Wextra'
    if grep -Ei 'warning' "$copy/build.log"; then false; fi
}

@test "build: make install PREFIX=... installs lib/libautograph.so and include/autograph.h" {
    local p="$BATS_TEST_TMPDIR/prefix"
    run make -C "$TOP" --no-print-directory install PREFIX="$p"
    echo "$output"
    [ "$status" -eq 0 ]
    [ -f "$p/lib/libautograph.so" ]
    [ -x "$p/lib/libautograph.so" ]
    [ -f "$p/include/autograph.h" ]
    cmp "$SHIM" "$p/lib/libautograph.so"
    cmp "$TOP/include/autograph.h" "$p/include/autograph.h"
    run make -C "$TOP" --no-print-directory uninstall PREFIX="$p"
    [ "$status" -eq 0 ]
    [ ! -e "$p/lib/libautograph.so" ]
    [ ! -e "$p/include/autograph.h" ]
}

@test "build: make install honours DESTDIR" {
    local d="$BATS_TEST_TMPDIR/dest"
    run make -C "$TOP" --no-print-directory install DESTDIR="$d" PREFIX=/opt/ag
    echo "$output"
    [ "$status" -eq 0 ]
    [ -f "$d/opt/ag/lib/libautograph.so" ]
    [ -f "$d/opt/ag/include/autograph.h" ]
}

@test "exports: the wrapped entry points, the resolvers, the runtime's launch calls, dlsym and autograph_version" {
    exported_names >"$BATS_TEST_TMPDIR/names"
    local missing=0 s
    for s in cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuGetProcAddress \
             cuGetProcAddress_v2 cudaLaunchKernel cudaLaunchKernel_ptsz __cudaLaunchKernel \
             __cudaLaunchKernel_ptsz dlsym autograph_version; do
        grep -qx "$s" "$BATS_TEST_TMPDIR/names" || { echo "not exported: $s"; missing=1; }
    done
    [ "$missing" -eq 0 ]
}

@test "exports: nothing outside cu*, the runtime's launch calls, dlsym, autograph_* and the linker's own symbols" {
    exported_names >"$BATS_TEST_TMPDIR/names"
    run grep -vxE 'cu[A-Z][A-Za-z0-9_]*|(__)?cudaLaunchKernel(_ptsz)?|dlsym|autograph_[A-Za-z0-9_]+|_init|_fini|_edata|_end|__bss_start' \
        "$BATS_TEST_TMPDIR/names"
    echo "unexpected exports:"; echo "$output"
    [ "$status" -eq 1 ]   # grep found no unexpected name
    [ -z "$output" ]
}

@test "exports: every entry of shim/entry_points.def is an exported function" {
    nm -D --defined-only "$SHIM" | awk 'NF >= 3 && $2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }' \
        | sort -u >"$BATS_TEST_TMPDIR/funcs"
    python3 - "$TOP/shim/entry_points.def" >"$BATS_TEST_TMPDIR/table" <<'EOF'
import re, sys
text = re.sub(r"/\*.*?\*/", "", open(sys.argv[1]).read(), flags=re.S)
for sym, _ in re.findall(r"AG_ENTRY\(\s*(\w+)\s*,\s*(\w+)\s*\)", text):
    print(sym)
EOF
    [ "$(wc -l <"$BATS_TEST_TMPDIR/table")" -gt 50 ]
    run comm -23 <(sort -u "$BATS_TEST_TMPDIR/table") "$BATS_TEST_TMPDIR/funcs"
    echo "table entries not exported as functions:"; echo "$output"
    [ -z "$output" ]
}

@test "unrelated programs: /bin/true runs with the shim, exit 0, nothing on stderr" {
    same_as_without /bin/true
    [ ! -s "$BATS_TEST_TMPDIR/err.1" ]
}

@test "unrelated programs: python3 -c pass runs with the shim, exit 0, nothing on stderr" {
    same_as_without python3 -c pass
    [ ! -s "$BATS_TEST_TMPDIR/err.1" ]
}

@test "unrelated programs: exit status and output pass through (sh)" {
    same_as_without sh -c 'echo out; echo err >&2; exit 3'
    grep -qx out "$BATS_TEST_TMPDIR/out.1"
}

@test "unrelated programs: dlopen/dlsym users (python3 ctypes) behave as without the shim" {
    same_as_without python3 -c '
import ctypes, ctypes.util
libc = ctypes.CDLL(None)
libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
libm.cos.restype = ctypes.c_double; libm.cos.argtypes = [ctypes.c_double]
print(libc.getpid() > 0, libm.cos(0.0))
try:
    libc.no_such_symbol_autograph_test
except AttributeError as e:
    print("AttributeError", "no_such_symbol_autograph_test" in str(e))
'
    [ ! -s "$BATS_TEST_TMPDIR/err.1" ]
    grep -qx 'True 1.0' "$BATS_TEST_TMPDIR/out.1"
    grep -qx 'AttributeError True' "$BATS_TEST_TMPDIR/out.1"
}

@test "unrelated programs: valid switches (AUTOGRAPH=off, AUTOGRAPH_LOG=warn) print nothing" {
    run env LD_PRELOAD="$SHIM" AUTOGRAPH=off AUTOGRAPH_LOG=warn AUTOGRAPH_SUMMARY=0 \
        /bin/true
    echo "$output"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}
