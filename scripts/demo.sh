#!/usr/bin/env bash
# demo.sh -- libautograph in one minute: build it, build a small CUDA program, run the
# program without and with the shim, and compare.
#
#   scripts/demo.sh [iterations]        (default 200)
#
# The demo program is tests/gpu/rt_prog.cu built with plain nvcc (static cudart, the
# default): a loop of small dependent kernels with a sync per iteration, some launched
# through the driver's cuLaunchKernel obtained with cudaGetDriverEntryPoint.  It writes
# its result buffers to stdout; the two runs' outputs must be byte for byte identical.
# On a machine without a GPU it builds what it can, says so and exits 0.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
iters=${1:-200}
build=build/demo
shim=$top/build/libautograph.so

say() { printf '%s\n' "$*"; }

say "==> make (builds build/libautograph.so)"
make -s
say "    built $shim"

nvcc=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
mkdir -p "$build"
if [ -x "$nvcc" ]; then
    say "==> nvcc -O2 tests/gpu/rt_prog.cu -o $build/demo_app"
    if [ ! "$build/demo_app" -nt tests/gpu/rt_prog.cu ]; then
        "$nvcc" -O2 -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90 \
            -o "$build/demo_app" tests/gpu/rt_prog.cu
    fi
else
    say "no nvcc found (looked for nvcc on PATH and $nvcc): cannot build the demo program."
    say "Install the CUDA toolkit, then run this again on a machine with an NVIDIA GPU."
    exit 0
fi

why=""
if ! command -v nvidia-smi >/dev/null 2>&1; then
    why="nvidia-smi is not installed"
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    why="nvidia-smi lists no GPU"
fi
if [ -n "$why" ]; then
    say ""
    say "No GPU on this machine ($why)."
    say "Everything is built; to see the shim at work, run on a machine with an NVIDIA GPU:"
    say "    scripts/demo.sh"
    say "or by hand:"
    say "    LD_PRELOAD=$shim AUTOGRAPH_SUMMARY=1 $build/demo_app >/dev/null"
    exit 0
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

# run SIDE: runs the demo program, output in $tmp/SIDE.out, seconds in $tmp/SIDE.time
run() {
    local side=$1 t0 t1
    t0=$(now)
    if [ "$side" = with ]; then
        LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/summary.%p" \
            "$build/demo_app" "$iters" >"$tmp/$side.out" 2>"$tmp/$side.err"
    else
        env -u LD_PRELOAD "$build/demo_app" "$iters" >"$tmp/$side.out" 2>"$tmp/$side.err"
    fi || {
        say "the demo program failed ($side the shim):"
        sed 's/^/    /' "$tmp/$side.err"
        exit 1
    }
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >"$tmp/$side.time"
}

say "==> running $build/demo_app $iters on $gpu: once to warm up, then without and with the shim"
run without   # warm-up: the first run pays for cold caches; not reported
run without
run with

launched() { awk '$1 == "expected_launches" { print $2 }' "$tmp/$1.err"; }
shim_count=$(cat "$tmp"/summary.* 2>/dev/null | awk '$1 == "kernel_launches" { s += $2 } END { print s + 0 }')
mode=$(head -n 1 "$tmp"/summary.* 2>/dev/null | sed -n 's/.*mode \([a-z]*\).*/\1/p' | head -n 1)
if cmp -s "$tmp/without.out" "$tmp/with.out"; then same=yes; else same=no; fi

say ""
printf '%-34s %-16s %s\n' "" "without shim" "with shim (mode ${mode:-?})"
printf '%-34s %-16s %s\n' "wall time (s)" "$(cat "$tmp/without.time")" "$(cat "$tmp/with.time")"
printf '%-34s %-16s %s\n' "kernels launched (program's count)" "$(launched without)" "$(launched with)"
printf '%-34s %-16s %s\n' "kernels the shim counted" "-" "$shim_count"
printf '%-34s %s\n' "outputs identical" "$same ($(wc -c <"$tmp/with.out") bytes compared)"
say ""
say "Try it on your own program:  LD_PRELOAD=$shim AUTOGRAPH_SUMMARY=1 ./your_app"
[ "$same" = yes ]
