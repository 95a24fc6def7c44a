#!/usr/bin/env bash
# engine_bench.sh -- what the auto-graphing engine gains on launch-bound loops (make bench,
# after bench.sh; or alone: make bench-engine, or bash tests/bench/engine_bench.sh).
#
# Loops of tiny kernels (tests/bench/engine_bench.cu), N kernels then a stream sync per
# iteration, for N = 10, 100, 1000, built with static and shared cudart.  Per (N, cudart):
#   eager  the eager program without the shim
#   shim   the same eager program with LD_PRELOAD=build/libautograph.so (engine on: the
#          default; AG_EBENCH_MODE sets AUTOGRAPH explicitly)
#   graph  a hand-written graph: the same N launches captured once, instantiated, then
#          cudaGraphLaunch + sync per iteration (no shim): the target
#   tuned  the shim with AUTOGRAPH_CHUNK_TUNE=AG_EBENCH_TUNE (default 32): its chunk plan
#          chosen by timing the candidates in the process (tuning runs during the timed
#          iterations, so its cost is in the figures)
#   grown  the shim with AUTOGRAPH_CHUNK_GROWTH=AG_EBENCH_GROWTH (default 2: the shim's
#          default before it became 3): another chunk plan beside the default
#   chunked  the same by hand, but captured into the graphs of the shim's default chunk
#          plan (8, 24, 72, ... launches) launched one after the other (no shim): what
#          cutting a window into chunks costs by itself, without holding or matching;
#          graph / chunked and chunked / shim split the shim's gap to the target
# plus GPU-bound loops (AG_EBENCH_SPIN): N_spin kernels of one block per SM that take
# SPIN dependent steps each, a few us, longer than their launch, so the launches queue up
# and the GPU is the bottleneck; eager, shim and hand-written graph: graphing must not be
# slower there (goal >= 0.98 of eager),
# plus the non-repeating loop (N_nr launches then a sync, kernel/grid/block changing every
# launch, so no window ever repeats) without and with the shim: the engine's overhead
# where it cannot help.  Process-to-process noise (several % on a VM) is above that goal
# (<= 2%), so that loop runs more processes (AG_EBENCH_NR_ROUNDS pairs) and its ratio is
# also given as the median of paired ratios (a shim process over the no-shim process run
# next to it).
# Process-to-process drift shifts even the paired ratio by a few %, so the engine's cost
# on that loop is also measured inside one process (launch_bench nrinproc, driver API:
# blocks of 100 non-repeating launches + a sync alternate between the shim's exported
# functions and the driver's own ones; AG_EBENCH_INPROC_ROUNDS processes): ns per launch
# added by the shim (engine on), median of the paired block differences, over the
# median driver launch.  This is the goal's figure; the process rows are shown beside it.
# Each process runs WARMUP iterations first (the engine builds its graphs there), then
# times every iteration (launches + sync); us/kernel = median over all timed iterations of
# all processes of a cell.  Sides run alternately within each round (the order rotates
# from round to round); a round runs one process of every cell.  Every process prints a
# hash of its result buffer: all sides of one N must agree (exit status 1 otherwise).
#
# Environment (not AUTOGRAPH_*: those of the caller reach the shim side unchanged):
#   AG_EBENCH_ROUNDS   processes per cell (default 7)
#   AG_EBENCH_NR_ROUNDS  processes per side of the non-repeating loop (default 20)
#   AG_EBENCH_KERNELS  timed kernels per process and cell (default 100000; iterations =
#                      KERNELS / N, at least AG_EBENCH_MIN_ITERS = 50)
#   AG_EBENCH_WARMUP   untimed iterations first (default 20)
#   AG_EBENCH_NS       the values of N (default "10 100 1000")
#   AG_EBENCH_NR_N     launches per sync of the non-repeating loop (default 100)
#   AG_EBENCH_SPIN     the SPIN values of the GPU-bound loops (default "2000 8000"; "":
#                      none), AG_EBENCH_SPIN_N kernels per sync (default 100),
#                      AG_EBENCH_SPIN_ITERS timed iterations per process (default 200)
#   AG_EBENCH_INPROC_ROUNDS  in-process A/B processes (default 4, 2000 blocks each)
#   AG_EBENCH_CUDART   "static shared" (default) or one of them
#   AG_EBENCH_TUNE     AUTOGRAPH_CHUNK_TUNE of the tuned side (default 32; 0: no tuned side)
#   AG_EBENCH_GROWTH   AUTOGRAPH_CHUNK_GROWTH of the growth side (default 2, the default until
#                      2026-11-23; 0: no such side)
#   AG_EBENCH_MODE     AUTOGRAPH=<value> on the shim side (default: unset = the default, on)
#   AG_EBENCH_CPU      the CPU(s) both sides are pinned to with taskset (default 2 where
#                      there are 4 or more and taskset exists, as bench.sh; "none": no
#                      pinning; a list such as 2-3 if the engine ever gets a helper thread;
#                      on the H100 one CPU gave less process-to-process noise than 2-3)
#   AG_EBENCH_OUT      a folder to keep the raw samples and the shim's summaries in
# Without a GPU: prints "skipped: no GPU" and exits 0.  ~3 minutes on an H100 by default.
set -euo pipefail
# shellcheck source=tests/bench/bench_setup.bash
. "$(dirname "$0")/bench_setup.bash"   # top (the working folder), BUILD, MAKE, cmdline
rounds=${AG_EBENCH_ROUNDS:-7}
nr_rounds=${AG_EBENCH_NR_ROUNDS:-20}
kernels=${AG_EBENCH_KERNELS:-100000}
min_iters=${AG_EBENCH_MIN_ITERS:-50}
warmup=${AG_EBENCH_WARMUP:-20}
read -r -a ns <<<"${AG_EBENCH_NS:-10 100 1000}"
nr_n=${AG_EBENCH_NR_N:-100}
read -r -a spins <<<"${AG_EBENCH_SPIN-2000 8000}"
spin_n=${AG_EBENCH_SPIN_N:-100}
spin_iters=${AG_EBENCH_SPIN_ITERS:-200}
inproc_rounds=${AG_EBENCH_INPROC_ROUNDS:-4}
read -r -a cudarts <<<"${AG_EBENCH_CUDART:-static shared}"
mode=${AG_EBENCH_MODE:-}
tune=${AG_EBENCH_TUNE:-32}
growth=${AG_EBENCH_GROWTH:-2}
bench_setup "${AG_EBENCH_CPU:-}"

raw=${AG_EBENCH_OUT:-$(mktemp -d)}
mkdir -p "$raw"
rm -f "$raw"/s.* "$raw"/sub.* "$raw"/h.* "$raw"/sum.* "$raw"/err.* "$raw"/pm.* "$raw"/pr.* "$raw"/nri.*
t_start=$(date +%s)

echo "## libautograph engine: tiny-kernel loops, eager vs shim vs hand-written graph"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- GPU: $gpu"
echo "- command: $cmdline (rounds=$rounds, nr_rounds=$nr_rounds, kernels=$kernels timed per process, warmup=$warmup" \
    "iterations, N=${ns[*]}, non-repeating N=$nr_n, GPU-bound N=$spin_n SPIN=${spins[*]:-none}," \
    "cudart=${cudarts[*]}," \
    "AUTOGRAPH=${mode:-<default>}, tuned side AUTOGRAPH_CHUNK_TUNE=$tune, growth side" \
    "AUTOGRAPH_CHUNK_GROWTH=$growth, pinned to CPU $cpu)"
echo "- shim: $BUILD/libautograph.so${rev:+ ($rev)}"

iters_for() { # N
    local i=$((kernels / $1))
    ((i < min_iters)) && i=$min_iters
    echo "$i"
}

# run_one CUDART SIDE N ROUND [SPIN] : one process; appends its samples and hash to $raw
# (files keyed by N, or spinSPIN.N for a GPU-bound loop)
run_one() {
    local c=$1 side=$2 count=$3 r=$4 spin=${5:-} prog what shimmed=0 out iters n=$3
    local -a extra=()
    prog=$bin/engine_bench_$c
    iters=$(iters_for "$count")
    if [ -n "$spin" ]; then
        extra=("$spin") iters=$spin_iters
        n=spin$spin.$count
    fi
    case $side in
    eager) what=eager ;;
    shim) what=eager shimmed=1 ;;
    tuned) what=eager shimmed=1 ;;
    grown) what=eager shimmed=1 ;;
    graph) what=graph ;;
    chunked) what=chunked ;;
    nr_plain) what=norepeat ;;
    nr_shim) what=norepeat shimmed=1 ;;
    esac
    local -a env_cmd=(env -u LD_PRELOAD)
    if [ "$shimmed" = 1 ]; then
        env_cmd=(env LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$raw/sum.$c.$side.$n.$r.%p")
        [ -n "$mode" ] && env_cmd+=(AUTOGRAPH="$mode")
        [ "$side" = tuned ] && env_cmd+=(AUTOGRAPH_CHUNK_TUNE="$tune")
        [ "$side" = grown ] && env_cmd+=(AUTOGRAPH_CHUNK_GROWTH="$growth")
    fi
    if ! out=$("${env_cmd[@]}" "${pin[@]}" "$prog" "$what" "$count" "$iters" "$warmup" \
        "${extra[@]}" 2>"$raw/err.$c.$side.$n.$r"); then
        echo "engine_bench: $c $side N=$n round $r failed:" >&2
        sed 's/^/    /' "$raw/err.$c.$side.$n.$r" | tail -n 20 >&2
        exit 1
    fi
    awk '$1 == "us_per_kernel_samples" { for (i = 2; i <= NF; i++) print $i }' <<<"$out" \
        >>"$raw/s.$c.$side.$n"
    awk '$1 == "hash" { print $2 }' <<<"$out" >>"$raw/h.$c.$side.$n"
    awk -v r="$r" '$1 == "median_us_per_kernel" { print r, $2 }' <<<"$out" >>"$raw/pm.$c.$side.$n"
    awk '$1 == "median_submit_us_per_kernel" { print $2 }' <<<"$out" >>"$raw/sub.$c.$side.$n"
}

tiny_sides=(eager shim graph chunked) spin_sides=(eager shim graph)
[ "$tune" != 0 ] && tiny_sides+=(tuned)
[ "$growth" != 0 ] && tiny_sides+=(grown)
for ((r = 1; r <= rounds; r++)); do
    for n in "${ns[@]}"; do
        for c in "${cudarts[@]}"; do
            for ((k = 0; k < ${#tiny_sides[@]}; k++)); do   # rotate which side goes first
                run_one "$c" "${tiny_sides[$(((k + r) % ${#tiny_sides[@]}))]}" "$n" "$r"
            done
        done
    done
    for spin in "${spins[@]}"; do
        for c in "${cudarts[@]}"; do
            for ((k = 0; k < 3; k++)); do
                run_one "$c" "${spin_sides[$(((k + r) % 3))]}" "$spin_n" "$r" "$spin"
            done
        done
    done
    echo "engine_bench: round $r/$rounds done ($(($(date +%s) - t_start)) s)" >&2
done
for ((r = 1; r <= nr_rounds; r++)); do
    for c in "${cudarts[@]}"; do
        if ((r % 2)); then
            run_one "$c" nr_plain "$nr_n" "$r"
            run_one "$c" nr_shim "$nr_n" "$r"
        else
            run_one "$c" nr_shim "$nr_n" "$r"
            run_one "$c" nr_plain "$nr_n" "$r"
        fi
    done
done
echo "engine_bench: non-repeating loop done, $nr_rounds pairs ($(($(date +%s) - t_start)) s)" >&2
for ((r = 1; r <= inproc_rounds; r++)); do
    env_cmd=(env LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$raw/sum.drv.nri.$nr_n.$r.%p")
    [ -n "$mode" ] && env_cmd+=(AUTOGRAPH="$mode")
    if ! "${env_cmd[@]}" "${pin[@]}" "$bin/launch_bench_drv" nrinproc 200000 >"$raw/nri.$r" \
        2>"$raw/err.nri.$r"; then
        echo "engine_bench: in-process A/B round $r failed:" >&2
        tail -n 20 "$raw/err.nri.$r" >&2
        exit 1
    fi
done
echo "engine_bench: in-process A/B done, $inproc_rounds processes ($(($(date +%s) - t_start)) s)" >&2

# q FILE P [DIGITS]: the P-quantile (0..1) of the numbers in FILE (nearest rank; median
# averaged), with DIGITS decimals (default 3)
q() {
    sort -g "$1" | awk -v p="$2" -v d="${3:-3}" '{ v[NR] = $1 } END {
        f = "%." d "f\n"
        if (NR == 0) { print "nan"; exit }
        if (p == 0.5 && NR % 2 == 0) { printf f, (v[NR/2] + v[NR/2+1]) / 2; exit }
        i = int(p * (NR - 1) + 0.5) + 1; printf f, v[i] }'
}
mean() { awk '{ s += $1 } END { if (NR) printf "%.3f\n", s / NR; else print "nan" }' "$1"; }

# graphed CUDART SIDE N: launches_graphed as a percentage of graphed + eager, summed over
# the cell's summaries ("n/a" when the summaries have no such keys: no engine)
graphed() {
    cat "$raw"/sum."$1"."$2"."$3".* 2>/dev/null | awk '
        $1 == "launches_graphed" && NF == 2 { g += $2; seen = 1 }
        $1 == "launches_eager" && NF == 2 { e += $2; seen = 1 }
        END { if (!seen) print "n/a"; else if (g + e == 0) print "0%";
              else printf "%.1f%%\n", 100 * g / (g + e) }'
}

echo "- us/kernel = median over every timed iteration of $rounds processes per cell" \
    "(iterations per process: $(for n in "${ns[@]}"; do printf '%s for N=%s, ' "$(iters_for "$n")" "$n"; done)$(iters_for "$nr_n") for the non-repeating loop, $nr_rounds processes per side)"
echo "- graphed = launches_graphed / (launches_graphed + launches_eager) in the shim's summaries"
echo
echo "| N kernels / sync | cudart | eager us/kernel | shim us/kernel | hand-written graph us/kernel | shim / graph throughput | goal >= 0.95 (N >= 100) | shim speedup over eager | graphed | hand-written, in the shim's chunks, us/kernel | graph / chunked | chunked / shim | shim, plan tuned, us/kernel | tuned / graph |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in "${ns[@]}"; do
    for c in "${cudarts[@]}"; do
        e=$(q "$raw/s.$c.eager.$n" 0.5)
        s=$(q "$raw/s.$c.shim.$n" 0.5)
        g=$(q "$raw/s.$c.graph.$n" 0.5)
        k=$(q "$raw/s.$c.chunked.$n" 0.5)
        u=-
        [ -s "$raw/s.$c.tuned.$n" ] && u=$(q "$raw/s.$c.tuned.$n" 0.5)
        read -r ratio speedup verdict gk ks gu < <(awk -v e="$e" -v s="$s" -v g="$g" -v k="$k" \
            -v u="$u" -v n="$n" 'BEGIN {
            r = g / s; v = (n < 100) ? "-" : (r >= 0.95 ? "ok" : "MISSED")
            printf "%.3f %.2fx %s %.3f %.3f %s\n", r, e / s, v, g / k, k / s,
                   u == "-" ? "-" : sprintf("%.3f", g / u) }')
        echo "| $n | $c | $e | $s | $g | $ratio | $verdict | $speedup | $(graphed "$c" shim "$n") | $k | $gk | $ks | $u | $gu |"
    done
done
echo
echo "Host time to submit, us per kernel (from an iteration's start to the return of its last launch call: the launches, or the held ops and the chunk graphs launched among them; median over processes of each one's median), and the shim with chunks growing AUTOGRAPH_CHUNK_GROWTH=$growth times:"
echo
echo "| N kernels / sync | cudart | eager submit | shim submit | hand-written graph submit | hand-written, chunked, submit | shim, growth $growth, us/kernel | growth $growth / graph | shim, growth $growth, submit |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in "${ns[@]}"; do
    for c in "${cudarts[@]}"; do
        v=-; vg=-; vs=-
        if [ -s "$raw/s.$c.grown.$n" ]; then
            v=$(q "$raw/s.$c.grown.$n" 0.5)
            vg=$(awk -v g="$(q "$raw/s.$c.graph.$n" 0.5)" -v v="$v" 'BEGIN { printf "%.3f", g / v }')
            vs=$(q "$raw/sub.$c.grown.$n" 0.5)
        fi
        echo "| $n | $c | $(q "$raw/sub.$c.eager.$n" 0.5) | $(q "$raw/sub.$c.shim.$n" 0.5) | $(q "$raw/sub.$c.graph.$n" 0.5) | $(q "$raw/sub.$c.chunked.$n" 0.5) | $v | $vg | $vs |"
    done
done
if [ "${#spins[@]}" -gt 0 ]; then
    echo
    echo "| GPU-bound loop: $spin_n kernels / sync, one block of 128 threads per SM each, SPIN steps | cudart | eager us/kernel | shim us/kernel | hand-written graph us/kernel | shim speedup over eager | goal >= 0.98 | shim / graph throughput | graphed |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for spin in "${spins[@]}"; do
        for c in "${cudarts[@]}"; do
            key=spin$spin.$spin_n
            e=$(q "$raw/s.$c.eager.$key" 0.5) s=$(q "$raw/s.$c.shim.$key" 0.5)
            g=$(q "$raw/s.$c.graph.$key" 0.5)
            read -r speedup verdict ratio < <(awk -v e="$e" -v s="$s" -v g="$g" 'BEGIN {
                printf "%.3fx %s %.3f\n", e / s, (e / s >= 0.98 ? "ok" : "MISSED"), g / s }')
            echo "| SPIN=$spin | $c | $e | $s | $g | $speedup | $verdict | $ratio | $(graphed "$c" shim "$key") |"
        done
    done
fi
echo
echo "| non-repeating loop ($nr_n launches / sync, kernel+grid+block change every launch) | cudart | no shim us/kernel | shim us/kernel | shim / no shim | paired shim / no shim, median [p25, p75] | goal <= 1.02 (paired median) | graphed |"
echo "|---|---|---|---|---|---|---|---|"
for c in "${cudarts[@]}"; do
    a=$(q "$raw/s.$c.nr_plain.$nr_n" 0.5)
    b=$(q "$raw/s.$c.nr_shim.$nr_n" 0.5)
    # paired: each shim process over the no-shim process of the same round
    awk 'NR == FNR { shim[$1] = $2; next }
         ($1 in shim) && $2 > 0 { printf "%.4f\n", shim[$1] / $2 }' \
        "$raw/pm.$c.nr_shim.$nr_n" "$raw/pm.$c.nr_plain.$nr_n" >"$raw/pr.$c.nr.$nr_n"
    pmed=$(q "$raw/pr.$c.nr.$nr_n" 0.5 4) p25=$(q "$raw/pr.$c.nr.$nr_n" 0.25 4)
    p75=$(q "$raw/pr.$c.nr.$nr_n" 0.75 4)
    read -r ratio verdict < <(awk -v a="$a" -v b="$b" -v p="$pmed" 'BEGIN {
        printf "%.4f %s\n", b / a, (p <= 1.02 ? "ok" : "MISSED") }')
    echo "| non-repeating | $c | $a | $b | $ratio | $pmed [$p25, $p75] | $verdict | $(graphed "$c" nr_shim "$nr_n") |"
done
# in-process A/B: per block, exported (shim) minus driver's own, ns per launch
awk '$1 == "nr_exported_blocks" { for (i = 2; i <= NF; i++) e[i] = $i; n = NF }
     $1 == "nr_real_blocks" { for (i = 2; i <= NF; i++) print e[i] - $i, $i }' \
    "$raw"/nri.* >"$raw/nri.pairs"
awk '{ print $1 }' "$raw/nri.pairs" >"$raw/nri.diff"
awk '{ print $2 }' "$raw/nri.pairs" >"$raw/nri.real"
d=$(q "$raw/nri.diff" 0.5 1) d25=$(q "$raw/nri.diff" 0.25 1) d75=$(q "$raw/nri.diff" 0.75 1)
rl=$(q "$raw/nri.real" 0.5 1)
read -r ratio verdict < <(awk -v d="$d" -v r="$rl" 'BEGIN {
    x = 1 + d / r; printf "%.4f %s\n", x, (x <= 1.02 ? "ok" : "MISSED") }')
echo
echo "| non-repeating loop, in one process (driver API, $inproc_rounds processes x 2000 blocks of $nr_n launches + sync, sides alternating) | driver launch ns | shim adds ns per launch, median [p25, p75] | shim / no shim | goal <= 1.02 | graphed |"
echo "|---|---|---|---|---|---|"
echo "| non-repeating, in-process A/B | $rl | $d [$d25, $d75] | $ratio | $verdict | $(graphed drv nri "$nr_n") |"
echo
echo "Means over every timed iteration (us/kernel; a periodic cost the median hides shows here) [p10, p90]:"
echo
echo "| loop | cudart | eager / no shim | shim | hand-written graph | hand-written, chunked | shim, plan tuned |"
echo "|---|---|---|---|---|---|---|"
cell() { [ -s "$1" ] && echo "$(mean "$1") [$(q "$1" 0.1), $(q "$1" 0.9)]" || echo "-"; }
for n in "${ns[@]}"; do
    for c in "${cudarts[@]}"; do
        echo "| tiny N=$n | $c | $(cell "$raw/s.$c.eager.$n") | $(cell "$raw/s.$c.shim.$n") | $(cell "$raw/s.$c.graph.$n") | $(cell "$raw/s.$c.chunked.$n") | $(cell "$raw/s.$c.tuned.$n") |"
    done
done
for c in "${cudarts[@]}"; do
    echo "| non-repeating N=$nr_n | $c | $(cell "$raw/s.$c.nr_plain.$nr_n") | $(cell "$raw/s.$c.nr_shim.$nr_n") | - | - | - |"
done
echo

# every side of one loop computed the same bytes (same kernels, same iteration count)
bad=0
# same_hashes LABEL FILE... : the hashes in the FILEs (one per process) all agree, else a
# line naming LABEL and bad=1
same_hashes() {
    local label=$1 hs
    shift
    hs=$(cat "$@" | sort -u)
    if [ "$(wc -l <<<"$hs")" -ne 1 ]; then
        echo "- RESULT MISMATCH, $label: result hashes differ between sides: $(paste -sd' ' <<<"$hs")"
        bad=1
    fi
}
for n in "${ns[@]}"; do
    tuned=("$raw"/h.*.tuned."$n")
    [ -e "${tuned[0]}" ] || tuned=()
    same_hashes "N=$n" "$raw"/h.*.eager."$n" "$raw"/h.*.shim."$n" "$raw"/h.*.graph."$n" \
        "$raw"/h.*.chunked."$n" "${tuned[@]}"
done
for spin in "${spins[@]}"; do
    key=spin$spin.$spin_n
    same_hashes "GPU-bound SPIN=$spin" "$raw"/h.*.eager."$key" "$raw"/h.*.shim."$key" \
        "$raw"/h.*.graph."$key"
done
same_hashes "non-repeating loop" "$raw"/h.*.nr_plain."$nr_n" "$raw"/h.*.nr_shim."$nr_n"
[ "$bad" = 0 ] && echo "- results: every process of every side computed the same bytes (hash per loop)"
echo "- took $(($(date +%s) - t_start)) s; raw samples, stderr and shim summaries: $raw"
exit "$bad"
