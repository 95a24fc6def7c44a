#!/usr/bin/env bash
# dyn_bench.sh -- dynamic-shape workloads (decoding whose launch sizes grow every
# token, variable batch sizes) with and without libautograph, side by side: same output?
# how much faster?  how much graphed?
#
# usage: dyn_bench.sh [--dry-run] [--no-build] [--reps N] [--only NAME,...]
#                     [--alt 'VAR=VAL ...'] LIBAUTOGRAPH_SO OUTDIR
#
#   Builds decode_prog with nvcc into OUTDIR/bin, then for each workload
#     (a) runs it without the shim                       -> OUTDIR/<name>.off.{out,err}
#     (b) runs it with LD_PRELOAD=LIB AUTOGRAPH_SUMMARY=1 -> OUTDIR/<name>.on.{out,err},
#         the exit summary (its "libautograph:" lines)   -> OUTDIR/<name>.summary
#     compares their "result" / "sha256" / "tokens" / "token_ids" lines: SAME or DIFFER
#     then N alternating timing processes per side with --time (off, on, off, on, ...):
#     the median of the per-process "per_iter_us p50" per side, each pair's own ratio
#     (off over the on run just after it) with their median; the timing runs' result
#     lines must match too (else "DIFFER (timing run SIDE N)")
#   and prints a markdown table last (also in OUTDIR/table.md).
#   Workloads (names for --only):
#     decode         decode_prog                     (400 tokens, no sync in the loop)
#     decode_sync1   decode_prog --sync-every 1      (a D2H of the token + sync per token)
#     decode_grow    decode_prog --memset-grow --memcpy-grow  (+ a memset per token and a D2D
#                    memcpy per layer whose sizes grow with the position)
#     torch_loop     torch_decode.py --mode loop     (GPT-2, 400 tokens, DynamicCache, no sync)
#     torch_generate torch_decode.py --mode generate (HF generate, 200 new tokens)
#     torch_batches  torch_decode.py --mode batches  (GPT-2 forward, batch 1..8 cycling, 200)
#     mlp_batches    torch_decode.py --mode batches --model mlp --no-fill  (an MLP, the
#                    same cycling, without deterministic mode's fill of new tensors; its
#                    timing runs take 1500 steps, long enough for a speed guard trial:
#                    the in-process column, where processes differ by more than the shim)
#   The torch ones need python with torch and CUDA; loop and generate need transformers
#   (without it they are skipped and batches uses --model mlp).
#   p50 is per token (per step for batches). Where the loop never syncs (decode, torch_loop)
#   a process gives one sample: its timed tokens' time up to the final sync / their number
#   (p50 = p90); generate: each timed call's time / its tokens (a warm-up call, then 3 calls,
#   each prompt one token longer); see the programs' headers.
#
#   --dry-run   print what would be built and run, run nothing
#   --no-build  use the decode_prog already in OUTDIR/bin
#   --reps N    timing processes per side (default 3)
#   --alt W     a third side: the shim with the switches W ("AUTOGRAPH_LAUNCH_THREAD=0",
#               words VAR=VALUE), checked for the same output and timed in the same
#               turns (no shim, shim, alt); two more columns: its p50 and no-shim/alt
#   --only L    a comma-separated list of workload names
#   Environment: NVCC (nvcc), NVCC_ARCH (-gencode arch=compute_90,code=sm_90), PYTHON
#   (python3), TMO (per-process timeout in seconds, default 120), SRC_DIR (where the sources
#   are; default: this script's folder, then ../gpu and ../bench beside it), TORCH_ARGS
#   (added to every torch_decode.py command, e.g. "--dtype bf16"), LOOP_TIME_TOKENS
#   (torch_loop's --tokens in timing runs, default 450: 400 timed after the 50 warm-up
#   tokens, the issue's 400-token decode; fewer timed tokens weigh the first replays'
#   template building more), GEN_TIME_ARGS (added to torch_generate's timing
#   runs, default empty; e.g. "--calls 2" or "--tokens 100" to save time), BENCH_CPUS (the
#   CPUs both sides are pinned to with taskset; default 2-5 with 8 or more CPUs; "none":
#   not pinned).
set -u

prog=dyn_bench.sh keys='result|sha256|tokens|token_ids|steps' check_runs=1 TMO=${TMO:-120}
# shellcheck source=tests/bench/compare_lib.bash
. "$(dirname "$0")/compare_lib.bash"
cmp_init 3 1 "$@"
TORCH_ARGS=${TORCH_ARGS:-}
LOOP_TIME_TOKENS=${LOOP_TIME_TOKENS:-450}
GEN_TIME_ARGS=${GEN_TIME_ARGS:-}
t_begin=$(date +%s)

# --- build ----------------------------------------------------------------------------------
if [ $build -eq 1 ]; then
    build_prog decode_prog
fi

# --- workloads: name, command, extra words for timing runs ------------------------------------
names=() cmds=() tcmds=()
add() {
    wanted "$1" || return 0
    names+=("$1")
    cmds+=("$2")
    tcmds+=("$3")
}
add decode "$bin/decode_prog" ""
add decode_sync1 "$bin/decode_prog --sync-every 1" ""
add decode_grow "$bin/decode_prog --memset-grow --memcpy-grow" ""
if pysrc=$(find_src torch_decode.py 2>/dev/null); then
    tok=0 hf=0
    if torch_cuda_ok; then
        tok=1
        if [ $dry -eq 1 ] || timeout "$TMO" "$PYTHON" -c 'import transformers' >/dev/null 2>&1; then
            hf=1
        fi
    fi
    [ $tok -eq 1 ] && add mlp_batches "$PYTHON $pysrc --mode batches --model mlp --no-fill $TORCH_ARGS" \
        "--steps 1500"
    if [ $tok -eq 0 ]; then
        say "torch (with CUDA) not importable by $PYTHON: torch workloads skipped"
    elif [ $hf -eq 0 ]; then
        say "transformers not importable by $PYTHON: torch_loop and torch_generate skipped, torch_batches uses --model mlp"
        add torch_batches "$PYTHON $pysrc --mode batches --model mlp $TORCH_ARGS" ""
    else
        add torch_loop "$PYTHON $pysrc --mode loop $TORCH_ARGS" "--tokens $LOOP_TIME_TOKENS"
        add torch_generate "$PYTHON $pysrc --mode generate $TORCH_ARGS" "$GEN_TIME_ARGS"
        add torch_batches "$PYTHON $pysrc --mode batches $TORCH_ARGS" ""
    fi
else
    say "torch_decode.py not found: torch workloads skipped"
fi
need_workloads
rows=()
for i in "${!names[@]}"; do
    name=${names[$i]}
    t_wl=$(date +%s)
    measure_workload "$i" "${tcmds[$i]}"
    sm=$out/$name.summary
    say "$name: $(($(date +%s) - t_wl)) s"
    wl=${cmds[$i]##*/}
    wl=${wl% "$TORCH_ARGS"}
    rows+=("| $wl | ${m_off:-?} | ${m_on:-?} | $ratio |$(alt_row) $pairs | $(guard_col "$name") | $same | $(sumstat graphed_share "$sm") | $(sumstat templates "$sm") | $(sumstat patches "$sm") |")
done

# decode_prog prints the same result whatever its sync / memset / copy options: say so
cross=
if [ $dry -eq 0 ]; then
    dn=0
    dres=$(for n in "${names[@]}"; do
        case $n in decode*) grep '^result ' "$out/$n.off.out" ;; esac
    done | sort -u | wc -l)
    for n in "${names[@]}"; do case $n in decode*) dn=$((dn + 1)) ;; esac; done
    if [ "$dn" -ge 2 ]; then
        if [ "$dres" -eq 1 ]; then
            cross="decode_prog: the same result line in all its modes"
        else
            cross="decode_prog: WARNING: the result differs between its modes (see *.off.out)"
        fi
        say "$cross"
    fi
fi

{
    echo
    echo "libautograph: $lib; $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)${TORCH_ARGS:+; torch args: $TORCH_ARGS}"
    echo "p50: median over $reps processes per side of each process's per-token (per-step) p50 in us;"
    echo "graphed_share, templates, patches: the correctness run's exit summary (<name>.summary);"
    echo "total $(($(date +%s) - t_begin)) s; timing runs add --time (torch_loop also --tokens $LOOP_TIME_TOKENS${GEN_TIME_ARGS:+, torch_generate also $GEN_TIME_ARGS})"
    [ -n "$cross" ] && echo "$cross"
    echo
    echo "pairs: each pair of processes run in turn (no shim, then shim) gives its own ratio;"
    echo "their median, then each pair's"
    echo "in process: the speed guard's verdicts in the timing runs with the shim, median"
    echo "(eager time over graphed time, measured in blocks of one process; '-': no trial)"
    echo
    echo "| workload | no shim p50 | shim p50 | ratio |$(alt_head) pairs in turn | in process | same | graphed_share | templates | patches |"
    echo "|---|---|---|---|$(alt_sep)---|---|---|---|---|---|"
    for row in "${rows[@]}"; do
        echo "$row"
    done
} | tee "$out/table.md"
