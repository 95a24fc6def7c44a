#!/usr/bin/env bash
# torch_bench.sh -- what the shim gains on unmodified PyTorch training loops, next to
# PyTorch's own CUDA graphs (make bench-torch; or bash tests/bench/torch_bench.sh).
#
# Workloads: tests/gpu/torch_models.py MODEL (mlp, cnn, transformer; see its header): one
# training step (zero_grad, forward, loss, backward, optimizer.step) then
# torch.cuda.synchronize() per step, the batch copied from pinned host memory each step.
# Sides, one process of each per model and round, in an order that rotates from round to
# round, all on the same GPU in the same run:
#   eager    MODEL eager, without the shim
#   shim     MODEL eager with LD_PRELOAD=build/libautograph.so (engine on, the caller's
#            AUTOGRAPH_* switches, else the defaults); its exit summary gives the graphed
#            share
#   timing   MODEL eager with the shim, AUTOGRAPH=off and AUTOGRAPH_TIMING=FILE: the time
#            spent inside the driver's real launch calls, per window (sync to sync)
#   ab       MODEL eager --ab BLOCK with the shim (engine on, as the shim side): one process
#            alternates blocks of BLOCK steps with graphing off (autograph_disable: the shim
#            passes every call through) and on, in pairs, the side going first alternating
#            from pair to pair (see torch_models.py's header).  Process-to-process noise on
#            a GPU machine is large (p50 to p90 of one process can span 50%); pairs of
#            neighbouring blocks in one process share most of it
#   graph    MODEL graph: PyTorch's own whole-step capture (torch.cuda.graph, replayed per
#            step), without the shim: the hand-written target
#   compile  MODEL compile: torch.compile(mode="reduce-overhead"), without the shim
# Figures:
#   p50 / p90        per process, the quantiles of its timed steps (wall time of step +
#                    synchronize); a cell is the median over its processes
#   launch time      per timing process, the windows with the most common number of
#                    submits (the step windows: every step submits the same work), median of
#                    their launch_ns; the cell is the median over processes, in us: what the
#                    eager step spends inside driver launch calls, all threads
#   recovered        (eager p50 - shim p50) / launch time; goal >= 80%
#   never slower     shim p50 <= eager p50 and shim p90 <= eager p90 (ok / MISSED)
#   in-process A/B   a second table, from the ab side: off and on p50 / p90 (per process
#                    pooled over its blocks of that side, the median over processes), the
#                    paired ratio off/on at p50 and p90 (per pair of blocks, the off block's
#                    quantile over the on block's; the median and quartiles over all pairs
#                    of all processes, from the ab_pair_ratios lines), recovered in process
#                    (off p50 - on p50) / launch time and never slower in process (on p50 <=
#                    off p50 and on p90 <= off p90).  Its off side has the shim loaded and
#                    passing through: it measures graphing, not the shim's wrapper cost
#   graphed          launches_graphed / (launches_graphed + launches_eager), summed over the
#                    shim side's summaries
#   all-thread check PyTorch launches the backward pass's kernels from its autograd
#                    thread, which does not itself wait for the device (the main thread's
#                    torch.cuda.synchronize() does).  An AUTOGRAPH_TIMING window counts the
#                    calls of every thread made since the previous window ended (in any
#                    thread), so the step windows, and the launch-time column, cover all
#                    threads.  The details table cross-checks that: kernel launches per step
#                    from the timing run's own summary (all threads: kernel_launches / steps
#                    run), the launch time extrapolated to them (launch_ns per submit of the
#                    step windows x launches per step) and the share recovered against that
#                    figure; a note warns where the step windows hold fewer submits than 90%
#                    of those launches (the launch-time figure may then be low)
# Results: every eager, shim, timing and ab process of one model must print the same
# sha256 (bit-identical with and without the shim, graphing on or off; exit status 1
# otherwise); the graph and compile sides print their own (other kernels, other
# numerics), shown, not compared.
# Before the rounds one unpinned compile process per model fills the Inductor and Triton
# caches (so the timed compile processes load kernels instead of compiling them) and
# finds out whether torch.compile works here: where it does not, its column says
# "unavailable" (torch_models.py exits 3 with "compile unavailable: <reason>").
#
# Environment (not AUTOGRAPH_*: those of the caller reach the shim and ab sides unchanged):
#   AG_TORCH_BENCH_ROUNDS   processes per side and model (default 3)
#   AG_TORCH_BENCH_STEPS    timed steps per process (default 200; the ab side runs as many
#                           steps in its blocks, and needs a multiple of 2 x BLOCK so that
#                           its hash can match)
#   AG_TORCH_BENCH_WARMUP   untimed steps first (default 30; the engine builds its graphs
#                           there)
#   AG_TORCH_BENCH_MODELS   the models (default "mlp cnn transformer")
#   AG_TORCH_BENCH_SIDES    the sides (default "eager shim timing ab graph compile")
#   AG_TORCH_BENCH_AB_BLOCK the ab side's BLOCK: steps per block, the first of each untimed
#                           (default 10; at least 2)
#   AG_TORCH_BENCH_ARGS     more arguments for torch_models.py on every side, e.g.
#                           "--infer" (forward only) or "--data device"
#   AG_TORCH_BENCH_CPU      the CPUs every side is pinned to with taskset, a list such as
#                           "2-5" or "2", or "none" (no pinning).  Default "2-5" where there
#                           are 8 or more CPUs, else what the other benches do (CPU 2 where
#                           there are 4 or more, else none): PyTorch runs the backward pass
#                           on its autograd thread, and one CPU would make it share a core
#                           with the main thread, as no training run does; four leave room
#                           for both and for the CUDA driver's and PyTorch's helper threads.
#                           The compile pre-warm runs unpinned
#   AG_TORCH_BENCH_CACHE    TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR go under it unless
#                           set (default $BUILD/bench/torch_cache, kept between runs)
#   AG_TORCH_BENCH_TIMEOUT  seconds one process may run (default 300)
#   AG_TORCH_BENCH_OUT      a folder to keep every process's output, summary and timing
#                           file in (default a temporary folder)
#   PYTHON                  the python with PyTorch (default python3)
# Without a GPU: "skipped: no GPU", without PyTorch: "skipped: no python3 with PyTorch and
# CUDA"; both exit 0.  About 4-5 minutes on an H100 by default (54 processes of ~3-5 s,
# most of it Python and PyTorch start-up, and the first compile when the cache is cold).
set -euo pipefail
# shellcheck source=tests/bench/bench_setup.bash
. "$(dirname "$0")/bench_setup.bash"   # top (the working folder), BUILD, MAKE, cmdline
rounds=${AG_TORCH_BENCH_ROUNDS:-3}
steps=${AG_TORCH_BENCH_STEPS:-200}
warmup=${AG_TORCH_BENCH_WARMUP:-30}
read -r -a models <<<"${AG_TORCH_BENCH_MODELS:-mlp cnn transformer}"
read -r -a sides <<<"${AG_TORCH_BENCH_SIDES:-eager shim timing ab graph compile}"
ab_block=${AG_TORCH_BENCH_AB_BLOCK:-10}
read -r -a extra <<<"${AG_TORCH_BENCH_ARGS:-}"
tmo=${AG_TORCH_BENCH_TIMEOUT:-300}
py=${PYTHON:-python3}
prog=tests/gpu/torch_models.py

has_side() { # SIDE: is it one of the sides run?
    local s
    for s in "${sides[@]}"; do [ "$s" = "$1" ] && return 0; done
    return 1
}

cpus=${AG_TORCH_BENCH_CPU:-}
if [ -z "$cpus" ] && command -v taskset >/dev/null 2>&1 &&
    [ "$(nproc 2>/dev/null || echo 1)" -ge 8 ]; then
    cpus=2-5 # the main thread and the autograd thread each get a core (see above)
fi
bench_setup "$cpus"

if ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
    >/dev/null 2>&1; then
    echo "skipped: no python3 with PyTorch and CUDA ($py)"
    exit 0
fi
for s in "${sides[@]}"; do
    case $s in eager | shim | timing | ab | graph | compile) ;;
    *)
        echo "torch_bench: unknown side '$s' (eager shim timing ab graph compile)" >&2
        exit 2
        ;;
    esac
done
if [[ ! $ab_block =~ ^[0-9]+$ ]] || [ "$ab_block" -lt 2 ]; then
    echo "torch_bench: AG_TORCH_BENCH_AB_BLOCK must be a whole number >= 2 ('$ab_block')" >&2
    exit 2
fi
if [[ $steps =~ ^[0-9]+$ ]] && [ $((steps % (2 * ab_block))) != 0 ] && has_side ab; then
    echo "torch_bench: the ab side runs whole pairs of blocks: AG_TORCH_BENCH_STEPS ($steps)" \
        "must be a multiple of 2 x AG_TORCH_BENCH_AB_BLOCK ($((2 * ab_block))) for its" \
        "sha256 to match the eager side's" >&2
    exit 2
fi

cache=${AG_TORCH_BENCH_CACHE:-$top/$BUILD/bench/torch_cache}
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$cache/inductor}
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$cache/triton}
export PYTHONUNBUFFERED=1
mkdir -p "$TORCHINDUCTOR_CACHE_DIR" "$TRITON_CACHE_DIR"
raw=${AG_TORCH_BENCH_OUT:-$(mktemp -d)}
mkdir -p "$raw"
rm -f "$raw"/out.* "$raw"/err.* "$raw"/f.* "$raw"/h.* "$raw"/sum.* "$raw"/timing.* \
    "$raw"/lt.* "$raw"/fail.* "$raw"/unavail.* "$raw"/skips.* "$raw"/v.* "$raw"/ab.* \
    "$raw"/abr.*
lim=()
command -v timeout >/dev/null 2>&1 && lim=(timeout -k 10 "$tmo")

torchv=$("$py" -c 'import sys, torch
print("torch %s (CUDA %s, cuDNN %s), Python %s" % (torch.__version__, torch.version.cuda,
      torch.backends.cudnn.version(), sys.version.split()[0]))' 2>/dev/null || echo "torch ?")
t_start=$(date +%s)

echo "## libautograph on PyTorch training steps: eager vs shim vs PyTorch's own CUDA graphs"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- GPU: $gpu"
echo "- $torchv"
echo "- command: $cmdline (rounds=$rounds processes per side, steps=$steps timed after" \
    "warmup=$warmup, models=${models[*]}, sides=${sides[*]}${extra[*]:+, torch_models.py args: ${extra[*]}}," \
    "pinned to CPU $cpu)"
echo "- shim: $BUILD/libautograph.so${rev:+ ($rev)}"

# compile pre-warm: fills the caches; exit 3 = unavailable
if has_side compile; then
    for m in "${models[@]}"; do
        rc=0
        plim=()
        command -v timeout >/dev/null 2>&1 && plim=(timeout -k 10 "$((tmo * 2))")
        "${plim[@]}" env -u LD_PRELOAD "$py" "$prog" "$m" compile --steps 3 --warmup 2 \
            "${extra[@]}" >"$raw/out.$m.prewarm" 2>"$raw/err.$m.prewarm" || rc=$?
        if [ "$rc" = 3 ]; then
            sed -n 's/^compile unavailable: //p' "$raw/out.$m.prewarm" | head -n 1 >"$raw/unavail.$m"
            echo "torch_bench: $m: compile unavailable: $(cat "$raw/unavail.$m")" >&2
        elif [ "$rc" != 0 ]; then
            echo "pre-warm exit status $rc" >"$raw/fail.$m.compile"
            echo "torch_bench: $m: the compile pre-warm failed (exit status $rc):" >&2
            tail -n 20 "$raw/err.$m.prewarm" | sed 's/^/    /' >&2
        fi
    done
    echo "torch_bench: compile pre-warm done ($(($(date +%s) - t_start)) s)" >&2
fi

# run_one MODEL SIDE ROUND : one process; its figures appended to $raw/f.MODEL.SIDE (the
# ab side: to $raw/ab.MODEL, its per-pair ratios to $raw/abr.MODEL.p50 and .p90), its hash
# to $raw/h.MODEL.SIDE
run_one() {
    local m=$1 side=$2 r=$3 mode=eager rc=0 o key=step_us
    local -a env_cmd=(env -u LD_PRELOAD) args=()
    case $side in
    shim | ab) env_cmd=(env LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$raw/sum.$m.$side.$r.%p") ;;
    timing)
        env_cmd=(env LD_PRELOAD="$shim" AUTOGRAPH=off AUTOGRAPH_TIMING="$raw/timing.$m.$r.%p"
            AUTOGRAPH_SUMMARY_FILE="$raw/sum.$m.timing.$r.%p")
        ;;
    graph) mode=graph ;;
    compile) mode=compile ;;
    esac
    # a compile that is unavailable or failed its pre-warm is not run again
    if [ "$side" = compile ] && { [ -e "$raw/unavail.$m" ] || [ -e "$raw/fail.$m.compile" ]; }; then
        return 0
    fi
    [ "$side" = ab ] && { args=(--ab "$ab_block"); key=ab_step_us; }
    o=$raw/out.$m.$side.$r
    "${lim[@]}" "${env_cmd[@]}" "${pin[@]}" "$py" "$prog" "$m" "$mode" --steps "$steps" \
        --warmup "$warmup" "${args[@]}" "${extra[@]}" >"$o" 2>"$raw/err.$m.$side.$r" || rc=$?
    if [ "$rc" = 3 ] && [ "$side" = compile ]; then
        sed -n 's/^compile unavailable: //p' "$o" | head -n 1 >"$raw/unavail.$m"
        return 0
    fi
    if [ "$rc" != 0 ] || ! grep -q "^$key " "$o"; then
        echo "round $r exit status $rc" >>"$raw/fail.$m.$side"
        echo "torch_bench: $m $side round $r failed (exit status $rc):" >&2
        tail -n 20 "$raw/err.$m.$side.$r" | sed 's/^/    /' >&2
        return 0
    fi
    awk '$1 == "step_us" { print $3, $5, $7, $9 }' "$o" >>"$raw/f.$m.$side"
    [ "$side" = ab ] && ab_collect "$o" "$raw/ab.$m" "$raw/abr.$m"
    awk '$1 == "sha256" { print $2 }' "$o" >>"$raw/h.$m.$side"
    awk '$1 == "compile_cudagraph_skips" { print $2 }' "$o" >>"$raw/skips.$m"
}

# ab_collect OUT FIGS RATIOS : from an ab process's output, "off_p50 off_p90 on_p50 on_p90
# pairs" appended to FIGS, its per-pair ratios one a line to RATIOS.p50 and RATIOS.p90
ab_collect() {
    awk '$1 == "ab_step_us" && $2 == "off" && $11 == "on" { f = $4 " " $6 " " $13 " " $15 }
        $1 == "ab_pairs" { n = $2 }
        END { print f, n }' "$1" >>"$2"
    awk -v o="$3" '$1 == "ab_pair_ratios" {
        for (i = 2; i <= NF; i++) if ($i == "p50" || $i == "p90") q = $i; else print $i >>(o "." q) }' "$1"
}

for ((r = 1; r <= rounds; r++)); do
    for m in "${models[@]}"; do
        for ((k = 0; k < ${#sides[@]}; k++)); do   # rotate which side goes first
            run_one "$m" "${sides[$(((k + r) % ${#sides[@]}))]}" "$r"
        done
    done
    echo "torch_bench: round $r/$rounds done ($(($(date +%s) - t_start)) s)" >&2
done

# q FILE P [DIGITS]: the P-quantile (0..1) of the numbers in FILE (nearest rank; median
# averaged), with DIGITS decimals (default 1); "nan" for an empty file
q() {
    sort -g "$1" | awk -v p="$2" -v d="${3:-1}" '{ v[NR] = $1 } END {
        f = "%." d "f\n"
        if (NR == 0) { print "nan"; exit }
        if (p == 0.5 && NR % 2 == 0) { printf f, (v[NR/2] + v[NR/2+1]) / 2; exit }
        i = int(p * (NR - 1) + 0.5) + 1; printf f, v[i] }'
}

# colmed FILE COL: the median of column COL of FILE; empty when there is none
colmed() {
    [ -s "$1" ] || return 0
    awk -v c="$2" '{ print $c }' "$1" >"$raw/v.tmp"
    q "$raw/v.tmp" 0.5
}

# med MODEL SIDE COL: the median over the processes of column COL (1 p50, 2 p90, 3 p99,
# 4 mean) of $raw/f.MODEL.SIDE; empty when there is none
med() {
    colmed "$raw/f.$1.$2" "$3"
}

# cell MODEL SIDE: "p50 / p90" or why there is none
cell() {
    local a b
    if ! has_side "$2"; then echo "-"; return; fi
    if [ "$2" = compile ] && [ -e "$raw/unavail.$1" ]; then echo "unavailable"; return; fi
    a=$(med "$1" "$2" 1)
    b=$(med "$1" "$2" 2)
    if [ -z "$a" ]; then echo "FAILED"; return; fi
    [ -e "$raw/fail.$1.$2" ] && { echo "$a / $b (some FAILED)"; return; }
    echo "$a / $b"
}

# launch time: per timing file of MODEL, the median launch_ns of the windows with the most
# common submits count; prints "median_ns submits windows_with_it windows" per process
launch_rows() {
    local f
    for f in "$raw"/timing."$1".*; do
        [ -s "$f" ] || continue
        awk '
            NR == 1 && $0 !~ /^# libautograph timing v1/ {
                print "torch_bench: unexpected timing header in " FILENAME ": " $0 > "/dev/stderr" }
            $1 == "w" && NF >= 5 && $3 > 0 { n++; s[n] = $3; l[n] = $4; c[$3]++ }
            END {
                if (n == 0) exit
                best = -1; bc = 0
                for (k in c) if (c[k] > bc || (c[k] == bc && k + 0 > best)) { best = k + 0; bc = c[k] }
                m = 0
                for (i = 1; i <= n; i++) if (s[i] + 0 == best) {
                    x = l[i] + 0; j = ++m
                    while (j > 1 && v[j - 1] > x) { v[j] = v[j - 1]; j-- }
                    v[j] = x
                }
                med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
                printf "%.0f %d %d %d\n", med, best, bc, n
            }' "$f"
    done
}

# launch_us MODEL: the launch-time cell from $raw/lt.MODEL (us), "n/a" without one
launch_us() {
    if [ -s "$raw/lt.$1" ]; then
        awk '{ print $1 }' "$raw/lt.$1" >"$raw/v.tmp"
        awk '{ printf "%.1f\n", $1 / 1000 }' <<<"$(q "$raw/v.tmp" 0.5 0)"
    else
        echo n/a
    fi
}

# ab_row MODEL: the in-process A/B table's row, from $raw/ab.MODEL ("off_p50 off_p90 on_p50
# on_p90 pairs" per process) and $raw/abr.MODEL.p50 / .p90 (every pair's ratio)
ab_row() {
    local m=$1 off50 off90 on50 on90 pairs r50=- r90=- rest k fails=""
    [ -e "$raw/fail.$m.ab" ] && fails=" (some FAILED)"
    if [ ! -s "$raw/ab.$m" ]; then
        echo "| $m | FAILED | - | - | - | - | - | - |"
        return
    fi
    off50=$(colmed "$raw/ab.$m" 1) off90=$(colmed "$raw/ab.$m" 2)
    on50=$(colmed "$raw/ab.$m" 3) on90=$(colmed "$raw/ab.$m" 4)
    pairs=$(awk '{ n += $5 } END { printf "%d (%d process%s)\n", n, NR, NR == 1 ? "" : "es" }' "$raw/ab.$m")
    for k in p50 p90; do
        [ -s "$raw/abr.$m.$k" ] || continue
        rest="$(q "$raw/abr.$m.$k" 0.5 4) [$(q "$raw/abr.$m.$k" 0.25 4), $(q "$raw/abr.$m.$k" 0.75 4)]"
        if [ "$k" = p50 ]; then r50=$rest; else r90=$rest; fi
    done
    read -r rec slow < <(awk -v f50="$off50" -v f90="$off90" -v n50="$on50" -v n90="$on90" \
        -v lt="$(launch_us "$m")" 'BEGIN {
            slow = (n50 + 0 <= f50 + 0 && n90 + 0 <= f90 + 0) ? "ok" : "MISSED"
            if (lt == "n/a" || lt + 0 <= 0) { print "n/a", slow; exit }
            printf "%.0f%% %s\n", 100 * (f50 - n50) / lt, slow }')
    echo "| $m | $off50 / $off90$fails | $on50 / $on90 | $r50 | $r90 | $rec | $slow | $pairs |"
}

# graphed MODEL: the graphed share over the shim side's summaries ("n/a" without keys)
graphed() {
    cat "$raw"/sum."$1".shim.* 2>/dev/null | awk '
        $1 == "launches_graphed" && NF == 2 { g += $2; seen = 1 }
        $1 == "launches_eager" && NF == 2 { e += $2; seen = 1 }
        END { if (!seen) print "n/a"; else if (g + e == 0) print "0%";
              else printf "%.1f%%\n", 100 * g / (g + e) }'
}

echo "- us per step: median over $rounds processes per side of each process's p50 / p90 of" \
    "$steps timed steps (wall time of one training step + torch.cuda.synchronize())"
echo "- launch time: what the eager step spends inside the driver's launch calls, all threads" \
    "(AUTOGRAPH=off AUTOGRAPH_TIMING: median launch_ns of the step windows, median over processes)"
echo "- recovered = (eager p50 - shim p50) / launch time; graphed = launches_graphed /" \
    "(launches_graphed + launches_eager) in the shim's summaries"
echo
echo "| model | eager p50 / p90 us | shim p50 / p90 us | hand-written graph p50 / p90 us | compile reduce-overhead p50 / p90 us | launch time in eager, us per step | recovered by the shim | goal >= 80% recovered | never slower than eager (p50 and p90) | graphed |"
echo "|---|---|---|---|---|---|---|---|---|---|"
notes=()
for m in "${models[@]}"; do
    launch_rows "$m" >"$raw/lt.$m"
    lt=n/a
    if [ -s "$raw/lt.$m" ]; then
        lt=$(launch_us "$m")
    elif has_side timing; then
        notes+=("$m: no AUTOGRAPH_TIMING data (no file, or no window in it): does this shim have the switch? (see $raw/err.$m.timing.*)")
    fi
    e50=$(med "$m" eager 1) e90=$(med "$m" eager 2)
    s50=$(med "$m" shim 1) s90=$(med "$m" shim 2)
    read -r rec goal slow < <(awk -v e50="$e50" -v e90="$e90" -v s50="$s50" -v s90="$s90" \
        -v lt="$lt" 'BEGIN {
            if (e50 == "" || s50 == "") { print "- - -"; exit }
            slow = (s50 + 0 <= e50 + 0 && s90 + 0 <= e90 + 0) ? "ok" : "MISSED"
            if (lt == "n/a" || lt + 0 <= 0) { print "n/a n/a", slow; exit }
            r = 100 * (e50 - s50) / lt
            printf "%.0f%% %s %s\n", r, (r >= 80 ? "ok" : "MISSED"), slow }')
    echo "| $m | $(cell "$m" eager) | $(cell "$m" shim) | $(cell "$m" graph) | $(cell "$m" compile) | $lt | $rec | $goal | $slow | $(graphed "$m") |"
done

if has_side ab; then
    echo
    echo "In-process A/B (one process alternates blocks of $ab_block steps with graphing off" \
        "(autograph_disable: the shim passes every call through) and on; pairs of blocks, the" \
        "side going first alternating):"
    echo
    echo "| model | off p50 / p90 us | on p50 / p90 us | paired ratio off/on at p50: median [p25, p75] | paired ratio off/on at p90: median [p25, p75] | recovered in process | never slower in process (p50 and p90) | pairs |"
    echo "|---|---|---|---|---|---|---|---|"
    for m in "${models[@]}"; do ab_row "$m"; done
    echo
    echo "- off / on p50 / p90: per ab process, the quantiles of the timed steps of all its off" \
        "(on) blocks pooled ($((ab_block - 1)) per block: a block's first step absorbs the switch" \
        "and is not timed), the median over processes; paired ratio: per pair of blocks, the" \
        "off block's quantile over the on block's (> 1: faster with graphing), the median and" \
        "quartiles over all pairs of all processes; recovered in process = (off p50 - on p50) /" \
        "launch time (the main table's); never slower in process: on p50 <= off p50 and on p90" \
        "<= off p90"
    echo "- the off side runs with the shim loaded and passing through (its wrapper cost, about" \
        "0.1 us per launch, measured by make bench, is on the off side), so this table measures" \
        "graphing, while the main table measures the whole shim against no shim"
fi

echo
echo "Details: the median over processes of each process's mean and p99 (us per step; a periodic" \
    "cost the median hides shows here), the launch-time run's own step time (shim with" \
    "AUTOGRAPH=off and the timing switch), the step windows it saw, and the hashes:"
echo
echo "| model | eager mean / p99 | shim mean / p99 | graph mean / p99 | compile mean / p99 | shim off + timing p50 / p90 | submits per step window (windows with it / all, per process) | kernel launches per step, all threads (timing run's summary) | launch time extrapolated to them, us per step | recovered vs extrapolated | compile cudagraph_skips | sha256 eager = shim = timing = ab | graph sha256 | compile sha256 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
bad=0
mp() { # MODEL SIDE: "mean / p99"
    local a
    a=$(med "$1" "$2" 4)
    [ -n "$a" ] && echo "$a / $(med "$1" "$2" 3)" || echo "-"
}
hashes() { # MODEL SIDE...: the distinct hashes of those sides, first 12 hex digits
    local m=$1 f files=()
    shift
    for f in "$@"; do [ -s "$raw/h.$m.$f" ] && files+=("$raw/h.$m.$f"); done
    [ ${#files[@]} -gt 0 ] || { echo "-"; return; }
    sort -u "${files[@]}" | cut -c1-12 | paste -sd' ' -
}
# kernel launches per step of the timing run, all threads: per summary, kernel_launches /
# the steps it ran (warm-up included; set-up and hashing launches count too: a slight
# overestimate); the median over processes, or empty
launches_per_step() {
    cat "$raw"/sum."$1".timing.* 2>/dev/null |
        awk -v n="$((warmup + steps))" '$1 == "kernel_launches" && NF == 2 { printf "%.1f\n", $2 / n }' \
            >"$raw/v.tmp"
    [ -s "$raw/v.tmp" ] && q "$raw/v.tmp" 0.5
    return 0
}
for m in "${models[@]}"; do
    win=$(awk '{ printf "%s%d (%d/%d)", (NR > 1 ? ", " : ""), $2, $3, $4 }' "$raw/lt.$m")
    kps=$(launches_per_step "$m")
    ext=- rext=-
    if [ -n "$kps" ] && [ -s "$raw/lt.$m" ]; then
        # launch_ns per submit of each process's step windows, median over processes
        awk '$2 > 0 { printf "%.1f\n", $1 / $2 }' "$raw/lt.$m" >"$raw/v.tmp"
        ext=$(awk -v per="$(q "$raw/v.tmp" 0.5)" -v k="$kps" 'BEGIN { printf "%.1f", per * k / 1000 }')
        rext=$(awk -v e="$(med "$m" eager 1)" -v s="$(med "$m" shim 1)" -v x="$ext" 'BEGIN {
            if (e == "" || s == "" || x + 0 <= 0) print "-"; else printf "%.0f%%", 100 * (e - s) / x }')
        awk '{ print $2 }' "$raw/lt.$m" | sort -g | head -n 1 >"$raw/v.tmp"
        if awk -v k="$kps" -v w="$(cat "$raw/v.tmp")" 'BEGIN { exit !(w + 0 < 0.9 * k) }'; then
            notes+=("$m: warning: the step windows of AUTOGRAPH_TIMING hold $(cat "$raw/v.tmp") submits, fewer than 90% of the ~$kps kernel launches per step (all threads, the timing run's summary): the launch-time figure may be low (launches outside the step windows, or a shim whose windows count only the syncing thread's calls); see the extrapolated figure")
        fi
    fi
    skips=$( [ -s "$raw/skips.$m" ] && sort -u "$raw/skips.$m" | paste -sd' ' - || echo "-")
    same=$(hashes "$m" eager shim timing ab)
    n=$(wc -w <<<"$same")
    if [ "$same" != "-" ] && [ "$n" -ne 1 ]; then
        same="MISMATCH: $same"
        bad=1
    elif [ "$same" != "-" ]; then
        same="same ($same)"
    fi
    echo "| $m | $(mp "$m" eager) | $(mp "$m" shim) | $(mp "$m" graph) | $(mp "$m" compile) | $(cell "$m" timing) | ${win:--} | ${kps:--} | $ext | $rext | $skips | $same | $(hashes "$m" graph) | $(hashes "$m" compile) |"
    [ -e "$raw/unavail.$m" ] && notes+=("$m: compile unavailable: $(cat "$raw/unavail.$m")")
    for s in "${sides[@]}"; do
        [ -e "$raw/fail.$m.$s" ] && { notes+=("$m $s: FAILED: $(paste -sd';' "$raw/fail.$m.$s")"); bad=1; }
    done
done
echo
for n in "${notes[@]+"${notes[@]}"}"; do echo "- $n"; done
[ "$bad" = 0 ] && echo "- results: every eager, shim, timing and ab process of a model printed the same sha256"
[ "$bad" != 0 ] && echo "- FAILED or RESULT MISMATCH above: exit status 1"
echo "- took $(($(date +%s) - t_start)) s; outputs, stderr, summaries and timing files: $raw"
exit "$bad"
