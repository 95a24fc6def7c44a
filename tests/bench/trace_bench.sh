#!/usr/bin/env bash
# trace_bench.sh -- what AUTOGRAPH_TRACE costs (make bench-trace, part of make bench; or
# bash tests/bench/trace_bench.sh).
#
# Three GPU workloads, each run with the shim (engine on, defaults) without and with
# AUTOGRAPH_TRACE, ROUNDS processes per side, sides alternating (which goes first
# rotates):
#   branches  build/gpu/branches_static ITERS 16 3: the 16-branch fork-join graph of
#             tests/gpu/trace.bats (48 kernels of ~30 us per iteration, graphed;
#             AUTOGRAPH_CHUNK=256): GPU-bound, a few records per 100 us
#   tiny      build/bench/engine_bench_static eager 100 ITERS 20: 100 tiny kernels per
#             sync, graphed by the shim: a kernel record every ~1 us
#   norepeat  build/bench/engine_bench_static norepeat 100 ITERS 20: eager launches (no
#             window repeats): a kernel and a driver API record per launch, the most
#             records per second a program makes
# Per process: the program's own steady-state figure (branches: loop_us_per_iter;
# engine_bench: median_us_per_kernel) and the whole process (wall seconds: CUPTI's start,
# the exit flush and the file included; peak RSS with /usr/bin/time).  The table has
# medians over the processes and the ratio traced / not traced; every traced process's
# file is checked (records > 0, none dropped) and its size reported.
#
# Environment: AG_TBENCH_ROUNDS (processes per side, default 7), AG_TBENCH_ITERS
# (branches iterations, default 300), AG_TBENCH_KITERS (engine_bench iterations of 100
# kernels, default 1000), AG_TBENCH_CPU (taskset CPU list, default 2-3 where there are
# 4 or more CPUs: CUPTI has a worker thread; "none": no pinning), AG_TBENCH_OUT (keep the
# raw figures, traces and summaries there; default a temporary folder, traces deleted).
# Without a GPU: prints "skipped: no GPU" and exits 0.
set -euo pipefail
# shellcheck source=tests/bench/bench_setup.bash
. "$(dirname "$0")/bench_setup.bash"   # top (the working folder), BUILD, MAKE, cmdline
rounds=${AG_TBENCH_ROUNDS:-7}
iters=${AG_TBENCH_ITERS:-300}
kiters=${AG_TBENCH_KITERS:-1000}
cpu=${AG_TBENCH_CPU:-}
if [ -z "$cpu" ]; then
    cpu=none
    [ "$(nproc 2>/dev/null || echo 1)" -ge 4 ] && command -v taskset >/dev/null 2>&1 && cpu=2-3
fi
bench_setup "$cpu"
$MAKE -s "$BUILD/gpu/branches_static" >&2
keep=${AG_TBENCH_OUT:-}
raw=${keep:-$(mktemp -d)}
mkdir -p "$raw"
rm -rf "$raw"/fig.* "$raw"/wall.* "$raw"/rss.* "$raw"/mb.* "$raw"/rec.* "$raw"/t.*

# libcupti for the shim's dlopen, wherever the toolkit keeps it
cuda=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")
for dir in "${CUDA_HOME:-$cuda}"/extras/CUPTI/lib64 "${CUDA_HOME:-$cuda}"/lib64 \
    "${CUDA_HOME:-$cuda}"/targets/*/lib; do
    if [ -e "$dir/libcupti.so.13" ] || [ -e "$dir/libcupti.so" ]; then
        export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        break
    fi
done
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%M' -o "$raw/rss.tmp")

# workload NAME : the command line of a workload
workload() {
    case $1 in
    branches) echo "$top/$BUILD/gpu/branches_static $iters 16 3" ;;
    tiny) echo "$bin/engine_bench_static eager 100 $kiters 20" ;;
    norepeat) echo "$bin/engine_bench_static norepeat 100 $kiters 20" ;;
    esac
}

# run_one NAME SIDE ROUND : one process; appends its figure, wall seconds, peak RSS
run_one() {
    local w=$1 side=$2 r=$3 out t0 t1 fig env_cmd
    env_cmd=(env LD_PRELOAD="$shim" AUTOGRAPH_CHUNK=256)
    [ "$w" = branches ] || env_cmd=(env LD_PRELOAD="$shim")
    [ "$side" = trace ] && env_cmd+=(AUTOGRAPH_TRACE="$raw/t.$w.$r.json")
    t0=$(date +%s.%N)
    # shellcheck disable=SC2046
    if ! out=$("${env_cmd[@]}" "${timer[@]}" "${pin[@]}" $(workload "$w") 2>&1); then
        echo "trace_bench: $w $side round $r failed:" >&2
        echo "$out" | tail -n 20 >&2
        exit 1
    fi
    t1=$(date +%s.%N)
    fig=$(awk '$1 == "loop_us_per_iter" || $1 == "median_us_per_kernel" { print $2 }' <<<"$out")
    echo "$fig" >>"$raw/fig.$w.$side"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$raw/wall.$w.$side"
    [ -f "$raw/rss.tmp" ] && tail -n 1 "$raw/rss.tmp" >>"$raw/rss.$w.$side"
    [ "$side" = trace ] && check_trace "$raw/t.$w.$r.json" "$w"
    return 0
}

# check_trace FILE NAME : the trace is complete, has records and none dropped; its size
check_trace() {
    if ! python3 - "$1" >>"$raw/rec.$2" <<'EOF'; then
import json, sys
t = json.load(open(sys.argv[1]))["autographTrace"]
assert t["records"] > 0 and t["dropped"] == 0, t
print(t["records"])
EOF
        echo "trace_bench: $1 is not a complete trace with records and no drops" >&2
        exit 1
    fi
    stat -c %s "$1" | awk '{ printf "%.1f\n", $1 / 1e6 }' >>"$raw/mb.$2"
    [ -n "$keep" ] || rm -rf "$1" "$1.graphs"
}

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (!NR) { print "n/a"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0) printf "%.3f\n", b / a; else print "n/a" }'; }

for ((r = 1; r <= rounds; r++)); do
    for w in branches tiny norepeat; do
        if ((r % 2)); then run_one "$w" plain "$r"; run_one "$w" trace "$r"
        else run_one "$w" trace "$r"; run_one "$w" plain "$r"; fi
    done
    echo "trace_bench: round $r/$rounds done" >&2
done

echo "## AUTOGRAPH_TRACE overhead"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); GPU: $gpu"
echo "- command: $cmdline (rounds=$rounds processes per side, branches iterations=$iters," \
    "engine_bench iterations=$kiters, pinned to CPU $cpu); shim engine on, both sides"
echo "- medians over the processes; ratio = with trace / without"
echo
echo "| workload | metric | without trace | with AUTOGRAPH_TRACE | ratio |"
echo "|---|---|---|---|---|"
declare -A label=([branches]="branches: 16 x 3 kernels of ~30 us per iteration, graphed"
                  [tiny]="tiny: 100 tiny kernels per sync, graphed"
                  [norepeat]="norepeat: 100 launches per sync, eager")
declare -A unit=([branches]="us per iteration" [tiny]="us per kernel" [norepeat]="us per kernel")
for w in branches tiny norepeat; do
    a=$(median "$raw/fig.$w.plain") b=$(median "$raw/fig.$w.trace")
    echo "| ${label[$w]} | ${unit[$w]} | $a | $b | $(ratio "$a" "$b") |"
    a=$(median "$raw/wall.$w.plain") b=$(median "$raw/wall.$w.trace")
    echo "| ${label[$w]} | process wall s | $a | $b | $(ratio "$a" "$b") |"
    if [ -f "$raw/rss.$w.plain" ]; then
        a=$(median "$raw/rss.$w.plain") b=$(median "$raw/rss.$w.trace")
        echo "| ${label[$w]} | peak RSS KiB | $a | $b | $(ratio "$a" "$b") |"
    fi
    echo "| ${label[$w]} | records, trace MB (per process) | - | $(median "$raw/rec.$w"), $(median "$raw/mb.$w") MB | - |"
done
