#!/usr/bin/env bash
# cold_bench.sh -- the cache lines the shim misses per held launch when the caches are
# cold between launches, as in a Python program (make bench-cold; no GPU needed).
#
# A held launch of a PyTorch step costs the host about 2.5 us (README, PyTorch), most
# of it cache misses: between two ops Python evicts the shim's data.  This counts them
# on the CPU simulator, where they can be counted exactly: build/sim/progs/held_cold
# (tests/sim/progs/held_cold.c) launches 20 kernels per window, 100 windows, writing
# 1 MiB before each launch, under valgrind's cachegrind with a 256 KiB last-level
# cache; the misses of the shim's own functions (source files under shim/), over the
# whole run, are divided by the launches its replays held (launches_held_fast).  Two
# paths: the runtime's launch call (cudaLaunchKernel of a shared libcudart, held
# there: shim/intercept_cudart.c) and the driver's cuLaunchKernel.  The program's own
# argument values, read when the shim copies them, count too (about 3 lines a
# launch).  The figures are counts, nearly the same on every run of one build (runs of
# one build measured 2026-11-24: instructions within 3 a launch, data lines within
# 0.5, instruction lines within 0.8; which of a build's lines share a cache set
# decides part of it, and code that moves elsewhere can move the instruction lines by
# 1.5): a change to the held path's data layout or instruction count shows in it at
# once, where its time on the GPU machine drowns in process-to-process noise; compare
# builds over a few runs each.
#
# Environment: AG_COLD_WINDOWS (default 100).  Needs valgrind (cg_annotate): prints
# "skipped: no valgrind" and exits 0 without it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
if ! command -v valgrind >/dev/null 2>&1 || ! command -v cg_annotate >/dev/null 2>&1; then
    echo "skipped: no valgrind"
    exit 0
fi
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
windows=${AG_COLD_WINDOWS:-100}
$MAKE -s all sim >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# count PATH: "held Ir I1/L misses data-read-misses data-write-misses" of the shim
count() {
    local path=$1 held
    LD_LIBRARY_PATH="$BUILD/sim" LD_PRELOAD="$top/$BUILD/libautograph.so" \
        AUTOGRAPH_SUMMARY_FILE="$out/sum.$path" \
        valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 \
        --LL=262144,16,64 --cachegrind-out-file="$out/cg.$path" \
        "$BUILD/sim/progs/held_cold" "$windows" "$path" >"$out/out.$path" 2>"$out/err.$path"
    held=$(awk '$1 == "launches_held_fast" { print $2 }' "$out/sum.$path")
    # cg_annotate's function table: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw file:function,
    # each count followed by its share in parentheses
    cg_annotate --threshold=0 --auto=no "$out/cg.$path" | awk -v top="$top/shim/" -v held="$held" '
        index($NF, top) == 1 {
            n = 0
            for (i = 1; i < NF; i++) if ($i ~ /^[0-9,]+$/) { gsub(",", "", $i); v[++n] = $i }
            ir += v[1]; il += v[3]; dr += v[6]; dw += v[9]
        }
        END { printf "%d %d %d %d %d\n", held, ir, il, dr, dw }'
}

echo "## libautograph: cache lines the shim misses per held launch, caches cold between launches"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- command: tests/bench/cold_bench.sh (held_cold $windows windows x 20 launches, 1 MiB written before each; cachegrind, LL 256 KiB)"
echo "- shim: $BUILD/libautograph.so ($(git describe --always --dirty 2>/dev/null || echo '?'))"
echo
echo "| launch path | held launches | data lines missed per held launch (read + write) | instruction lines missed per held launch | instructions per held launch |"
echo "|---|---|---|---|---|"
for path in rt drv; do
    read -r held ir il dr dw < <(count "$path")
    if [ -z "$held" ] || [ "$held" -eq 0 ]; then
        echo "cold_bench: $path: nothing was held (see $out/err.$path)" >&2
        trap - EXIT
        exit 1
    fi
    name="runtime (cudaLaunchKernel, shared libcudart)"
    [ "$path" = drv ] && name="driver (cuLaunchKernel)"
    awk -v n="$name" -v h="$held" -v ir="$ir" -v il="$il" -v dr="$dr" -v dw="$dw" 'BEGIN {
        printf "| %s | %d | %.1f (%.1f + %.1f) | %.1f | %.0f |\n", n, h, (dr + dw) / h,
               dr / h, dw / h, il / h, ir / h }'
done
