#!/usr/bin/env bash
# gpu_check.sh -- one batched GPU session: build, the GPU suites side by side, trace.bats
# alone, optionally the analyzer's GPU validation and benches; every log goes into one
# tarball, so a device tool that brings back a few files brings back all of it.
#
#   scripts/gpu_check.sh [--validate] [--bench loose|dyn|both] [--reps N] [--only SUITE,...]
#                        OUTDIR
#
#   --validate   tests/analyzer/gpu_validate.sh first, on an idle GPU
#   --bench      tests/bench/loose_bench.sh and/or dyn_bench.sh last, on an idle GPU
#   --reps N     timing processes per side for the benches (default 3)
#   --only       GPU suites to run (default: engine,safety,liveness,gpu,introspect,
#                resolver,torch,realistic,multi_device (skips with fewer than 2 GPUs),
#                then trace alone)
# Writes OUTDIR/gpu_check.tgz (logs, TAP files, tables) and prints per-suite counts, the
# failures and the realistic suite's graphed shares.  Runs the bats of PATH, or .carry's
# (make carry).  Waits on its own background jobs only (`wait`): never on pgrep, which
# would find the shell running it.
set -uo pipefail

validate=0 bench= reps=3 suites="engine,safety,liveness,gpu,introspect,resolver,torch,realistic,multi_device"
while [ $# -gt 1 ]; do
    case $1 in
    --validate) validate=1; shift ;;
    --bench) bench=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --only) suites=$2; shift 2 ;;
    *) echo "gpu_check.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: gpu_check.sh [--validate] [--bench loose|dyn|both] [--reps N] [--only SUITE,...] OUTDIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$(mkdir -p "$1" && cd "$1" && pwd)/gpu_check
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
bats=$(command -v bats || echo "$top/.carry/bats/bin/bats")

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  git log -1 --format='%h %s' 2>/dev/null; date -u; } > "$out/machine.txt" 2>&1
if ! make -j"$(nproc)" -s all gpu-progs > "$out/build.log" 2>&1; then
    tail -30 "$out/build.log"
    tar czf "$out.tgz" -C "$(dirname "$out")" gpu_check
    exit 1
fi
if [ "$validate" = 1 ]; then
    timeout 300 bash tests/analyzer/gpu_validate.sh "$out/validate" > "$out/validate.log" 2>&1
    echo "gpu_validate.sh: exit $?" >> "$out/validate.log"
    tail -8 "$out/validate.log"
fi
IFS=, read -ra list <<< "$suites"
for s in "${list[@]}"; do
    [ "$s" = trace ] && continue
    timeout 540 "$bats" --tap "tests/gpu/$s.bats" > "$out/$s.tap" 2>&1 &
done
wait
timeout 300 "$bats" --tap tests/gpu/trace.bats > "$out/trace.tap" 2>&1
for f in "$out"/*.tap; do
    echo "$(basename "$f" .tap): $(grep -c '^ok' "$f") ok, $(grep -c '^not ok' "$f") failed," \
         "$(grep -c '# skip' "$f") skipped"
done
grep -h -A10 '^not ok' "$out"/*.tap | head -80
grep -h '^# [a-z0-9-]*: graphed' "$out/realistic.tap" 2>/dev/null | cut -c1-140
case $bench in
loose|both) TMO=90 timeout 900 tests/bench/loose_bench.sh --reps "$reps" build/libautograph.so \
                "$out/loose" > "$out/loose.log" 2>&1; tail -12 "$out/loose.log" ;;
esac
case $bench in
dyn|both) TMO=120 timeout 900 tests/bench/dyn_bench.sh --reps "$reps" build/libautograph.so \
              "$out/dyn" > "$out/dyn.log" 2>&1; tail -12 "$out/dyn.log" ;;
esac
tar czf "$out.tgz" -C "$(dirname "$out")" gpu_check && rm -rf "$out"
echo "gpu_check.sh: $out.tgz"
