#!/usr/bin/env bash
# bench.sh -- libautograph's passthrough cost per kernel launch (make bench).
#
# Runs launch-bound loops of empty kernels (tests/bench/launch_bench.cu) alternately
# without and with LD_PRELOAD=build/libautograph.so, many times in one run, and prints
# a markdown table: median ns per launch on each side, the difference (goal <= 60 ns per
# launch) and the ratio (goal <= 2% on the launch-bound loop).
#   loop: N launches back to back then one sync (end to end, what a program sees)
#   call: the host time of the launch calls alone (batches of 256, queue never full)
# Programs: static cudart <<<>>>, shared cudart <<<>>>, driver cuLaunchKernel (exported).
# Process-to-process noise (a few hundred ns on a VM) is far above the 60 ns goal, so the
# difference is taken from pairs of adjacent runs (same round, same rep) and its spread
# is printed: a goal is only met or missed where that spread allows telling.  A second,
# in-process A/B (launch_bench inproc) alternates blocks of 256 calls between the
# exported cuLaunchKernel (the shim's wrapper) and the driver's own function in one
# process, which cancels that drift and resolves the wrapper's cost to a few ns.
#
# Environment: AG_BENCH_ROUNDS (default 12; each round runs every program once per side,
# alternating which side goes first), AG_BENCH_LAUNCHES (30000 per rep), AG_BENCH_REPS
# (3 per process), AG_BENCH_MODE (the shim's AUTOGRAPH mode, default off = passthrough),
# AG_BENCH_INPROC_ROUNDS (4: processes per side of the in-process A/B below),
# AG_BENCH_OUT (a folder to keep the raw samples in), AG_BENCH_CPU (the CPU both sides
# are pinned to with taskset, default 2 where there are 4 or more; "none": no pinning --
# pinning removes the run-to-run noise of landing on different cores).
# No GPU: prints "skipped: no GPU" and exits 0.
set -euo pipefail
# shellcheck source=tests/bench/bench_setup.bash
. "$(dirname "$0")/bench_setup.bash"   # top (the working folder), BUILD, MAKE, cmdline
rounds=${AG_BENCH_ROUNDS:-12}
inproc_rounds=${AG_BENCH_INPROC_ROUNDS:-4}
launches=${AG_BENCH_LAUNCHES:-30000}
reps=${AG_BENCH_REPS:-3}
mode=${AG_BENCH_MODE:-off}
bench_setup "${AG_BENCH_CPU:-}"

raw=${AG_BENCH_OUT:-$(mktemp -d)}
mkdir -p "$raw"

variants=(static shared drv)
declare -A prog=([static]="$bin/launch_bench_static rt" [shared]="$bin/launch_bench_shared rt"
    [drv]="$bin/launch_bench_drv drv")
declare -A label=([static]="static cudart, <<<>>>" [shared]="shared cudart, <<<>>>"
    [drv]="driver cuLaunchKernel (linked)")

run_side() { # variant side round
    local v=$1 side=$2 r=$3 out
    local -a cmd
    read -r -a cmd <<<"${prog[$v]}"
    if [ "$side" = with ]; then
        out=$(env LD_PRELOAD="$shim" AUTOGRAPH="$mode" \
            AUTOGRAPH_SUMMARY_FILE="$raw/sum.$v.$r.%p" "${pin[@]}" "${cmd[@]}" "$launches" "$reps")
    else
        out=$(env -u LD_PRELOAD "${pin[@]}" "${cmd[@]}" "$launches" "$reps")
    fi
    local m
    for m in loop call; do
        awk -v k="${m}_reps" '$1 == k { for (i = 2; i <= NF; i++) print $i }' <<<"$out" \
            >"$raw/$m.$v.$side.$r"
        cat "$raw/$m.$v.$side.$r" >>"$raw/$m.$v.$side"
    done
    awk '$1 == "launches_total" { print $2 }' <<<"$out" >"$raw/expect.$v"
}

# in-process A/B (drv build): exported cuLaunchKernel vs the driver's own, alternating
# blocks in one process; with the shim that is wrapper vs real, without it a control.
run_inproc() { # side
    local side=$1 out
    if [ "$side" = with ]; then
        out=$(env LD_PRELOAD="$shim" AUTOGRAPH="$mode" "${pin[@]}" \
            "$bin/launch_bench_drv" inproc "$launches" "$reps")
    else
        out=$(env -u LD_PRELOAD "${pin[@]}" "$bin/launch_bench_drv" inproc "$launches" "$reps")
    fi
    awk '$1 == "inproc_exported_reps" { for (i = 2; i <= NF; i++) e[i] = $i }
         $1 == "inproc_real_reps" { for (i = 2; i <= NF; i++) r[i] = $i }
         END { for (i in e) printf "%s %s %.1f\n", e[i], r[i], e[i] - r[i] }' <<<"$out" \
        >>"$raw/inproc.$side"
    awk '$1 == "inproc_bypassed" { print $2 }' <<<"$out" >>"$raw/inproc.bypassed.$side"
}

rm -f "$raw"/loop.* "$raw"/call.* "$raw"/sum.* "$raw"/diff.* "$raw"/expect.* "$raw"/inproc.*
for ((r = 1; r <= rounds; r++)); do
    for v in "${variants[@]}"; do
        if ((r % 2)); then
            run_side "$v" without "$r"
            run_side "$v" with "$r"
        else
            run_side "$v" with "$r"
            run_side "$v" without "$r"
        fi
        # paired differences: rep k with the shim minus rep k without, same round
        for m in loop call; do
            paste "$raw/$m.$v.with.$r" "$raw/$m.$v.without.$r" |
                awk '{ printf "%.1f\n", $1 - $2 }' >>"$raw/diff.$m.$v"
        done
    done
    echo "bench: round $r/$rounds done" >&2
done
for ((r = 1; r <= inproc_rounds; r++)); do
    if ((r % 2)); then run_inproc with; run_inproc without; else run_inproc without; run_inproc with; fi
done
echo "bench: in-process A/B done ($inproc_rounds rounds)" >&2

# q FILE P: the P-quantile (0..1) of the numbers in FILE (nearest rank, median averaged)
q() {
    sort -g "$1" | awk -v p="$2" '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        if (p == 0.5 && NR % 2 == 0) { printf "%.1f\n", (v[NR/2] + v[NR/2+1]) / 2; exit }
        i = int(p * (NR - 1) + 0.5) + 1; printf "%.1f\n", v[i] }'
}

echo
echo "## libautograph passthrough cost per launch"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- GPU: $gpu"
echo "- command: make bench (tests/bench/bench.sh: rounds=$rounds, launches=$launches," \
    "reps=$reps per process, AUTOGRAPH=$mode, pinned to CPU $cpu; each round runs every program once per side," \
    "sides alternate first)"
echo "- shim: $BUILD/libautograph.so${rev:+ ($rev)}"
echo "- samples per cell: $((rounds * reps)) (one process gives $reps); ns/launch = median" \
    "[p25, p75]; diff = median of paired differences (same round and rep) [p25, p75];" \
    "ratio = 1 + diff / without"
echo
echo "| program | metric | without shim ns/launch | with shim ns/launch | diff ns (paired) | ratio | goal |"
echo "|---|---|---|---|---|---|---|"
for v in "${variants[@]}"; do
    for m in loop call; do
        a=$(q "$raw/$m.$v.without" 0.5)
        b=$(q "$raw/$m.$v.with" 0.5)
        a25=$(q "$raw/$m.$v.without" 0.25) a75=$(q "$raw/$m.$v.without" 0.75)
        b25=$(q "$raw/$m.$v.with" 0.25) b75=$(q "$raw/$m.$v.with" 0.75)
        d=$(q "$raw/diff.$m.$v" 0.5)
        d25=$(q "$raw/diff.$m.$v" 0.25) d75=$(q "$raw/diff.$m.$v" 0.75)
        read -r ds ratio verdict < <(awk -v a="$a" -v d="$d" -v lo="$d25" -v hi="$d75" \
            -v m="$m" 'BEGIN {
            r = 1 + d / a
            ok = (d <= 60) && (m == "call" || r <= 1.02)
            if (hi - lo > 60) v = "unresolved_(paired_spread_>_60_ns:_see_in-process_A/B)"
            else v = ok ? "ok" : "MISSED"
            printf "%+.1f %.4f %s\n", d, r, v }')
        verdict=${verdict//_/ }
        if [ "$m" = loop ]; then
            mname="loop: $launches launches + sync"
            goal="<= 60 ns and <= 2%: $verdict"
        else
            mname="launch call only"
            goal="<= 60 ns: $verdict"
        fi
        echo "| ${label[$v]} | $mname | $a [$a25, $a75] | $b [$b25, $b75] | $ds [$d25, $d75] | $ratio | $goal |"
    done
done
echo
echo "In-process A/B, driver cuLaunchKernel, host time of the call (blocks of 256 alternating" \
    "in one process, $inproc_rounds processes per side x $reps reps x $launches calls per side):"
echo
echo "| process | real driver ns/call | exported symbol ns/call | diff ns (per rep) | ratio | goal |"
echo "|---|---|---|---|---|---|"
for side in with without; do
    f=$raw/inproc.$side
    awk '{ print $1 }' "$f" >"$f.e"
    awk '{ print $2 }' "$f" >"$f.r"
    awk '{ print $3 }' "$f" >"$f.d"
    e=$(q "$f.e" 0.5) re=$(q "$f.r" 0.5)
    d=$(q "$f.d" 0.5) d25=$(q "$f.d" 0.25) d75=$(q "$f.d" 0.75)
    byp=$(sort -u "$raw/inproc.bypassed.$side" | paste -sd, -)
    if [ "$side" = with ]; then
        what="with shim: exported = shim's wrapper (bypassed=$byp)"
        goal=$(awk -v d="$d" 'BEGIN { print (d <= 60) ? "<= 60 ns: ok" : "<= 60 ns: MISSED" }')
    else
        what="without shim: control, both are the driver's (bypassed=$byp)"
        goal="noise floor"
    fi
    ratio=$(awk -v d="$d" -v r="$re" 'BEGIN { printf "%.4f", 1 + d / r }')
    echo "| $what | $re | $e | $(printf '%+.1f' "$d") [$d25, $d75] | $ratio | $goal |"
done
echo
# sanity: the shim saw every launch of the last round (passthrough counts them)
for v in "${variants[@]}"; do
    got=$(cat "$raw"/sum."$v"."$rounds".* 2>/dev/null | awk '$1 == "kernel_launches" { s += $2 } END { print s + 0 }')
    want=$(cat "$raw/expect.$v" 2>/dev/null || echo '?')
    echo "- shim kernel_launches, $v, round $rounds: $got (the program made $want)"
done
echo "- raw samples: $raw"
