#!/usr/bin/env bash
# loose_bench.sh -- realistic loops (a solver, alloc and free per iteration, a C trainer,
# loops shaped like the CUDA samples, PyTorch and JAX training loops) with and without
# libautograph, side by side: same output?  how much faster?  how much graphed?
#
# usage: loose_bench.sh [--dry-run] [--no-build] [--reps N] [--only NAME,...]
#                       [--alt 'VAR=VAL ...'] LIBAUTOGRAPH_SO OUTDIR
#
#   Builds those of solver_prog, alloc_loop_prog, trainer_prog (cuBLASLt), samples_prog
#   (Thrust, cuRAND), numlib_prog (cuSPARSE, cuBLAS, cuFFT) and churn_prog (-rdc=true,
#   cudadevrt) that the wanted workloads
#   run with nvcc into OUTDIR/bin, then for each workload
#     (a) runs it without the shim                     -> OUTDIR/<name>.off.{out,err}
#     (b) runs it with LD_PRELOAD=LIB AUTOGRAPH_SUMMARY=1 -> OUTDIR/<name>.on.{out,err},
#         the exit summary (its "libautograph:" lines) -> OUTDIR/<name>.summary
#     compares their "result" / "sha256" / "step" lines: SAME or DIFFER
#     then N alternating timing processes per side with --time (off, on, off, on, ...):
#     the median of the per-process "per_iter_us p50" per side, and each pair's own
#     ratio (off over the on run just after it) with their median
#   and prints a markdown table last (also in OUTDIR/table.md).
#   Workloads (names for --only): solver, solver_k4 (--kernels 4), solver_stream
#   (--stream), alloc_loop, alloc_async (--async), trainer, trainer_par (--reduce
#   parallel), samples_thrust, samples_symbol, samples_pitch2d, samples_timing,
#   samples_streams, samples_query, samples_hostfunc, samples_curand (samples_prog --mode
#   thrust ... curand), samples_hostfunc_graphed (hostfunc with AUTOGRAPH_HOST_FUNCS=1),
#   numlib_cg, numlib_cg_device, numlib_fft, numlib_managed (numlib_prog --mode cg ...
#   managed), churn_events, churn_streams, churn_texture, churn_pinned, churn_cdp
#   (churn_prog --mode events ... cdp: objects made and destroyed every iteration, a
#   kernel launching kernels), torch_train (torch_train_loop.py, when python3 can import torch with a
#   GPU), torch_modern and torch_modern_bf16 (torch_modern_loop.py: fp16 and GradScaler;
#   bf16, fused AdamW), jax_train, jax_nocb and jax_eager (jax_train_loop.py: a jit step,
#   the same with XLA's command buffers off, and op by op, when it can import jax).
#
#   --dry-run   print what would be built and run, run nothing
#   --no-build  use the programs already in OUTDIR/bin
#   --reps N    timing processes per side (default 5)
#   --alt W     a third side: the shim with the switches W ("AUTOGRAPH_LAUNCH_THREAD=0",
#               words VAR=VALUE), checked for the same output and timed in the same
#               turns (no shim, shim, alt); two more columns: its p50 and no-shim/alt
#   --only L    a comma-separated list of workload names
#   Environment: NVCC (nvcc), NVCC_ARCH (-gencode arch=compute_90,code=sm_90), PYTHON
#   (python3), TMO (per-process timeout in seconds, default 60), SRC_DIR (where the sources
#   are; default: this script's folder, then ../gpu and ../bench beside it), BENCH_CPUS
#   (the CPUs both sides are pinned to with taskset; default 2-5 with 8 or more CPUs;
#   "none": not pinned).
set -u

prog=loose_bench.sh keys='result|sha256|step' check_runs=0 TMO=${TMO:-60}
# shellcheck source=tests/bench/compare_lib.bash
. "$(dirname "$0")/compare_lib.bash"
cmp_init 5 1 "$@"

# --- build ----------------------------------------------------------------------------------
if [ $build -eq 1 ]; then
    wanted_any solver && build_prog solver_prog
    wanted_any alloc_ && build_prog alloc_loop_prog
    wanted_any trainer && build_prog trainer_prog -lcublasLt
    wanted_any samples_ && build_prog samples_prog -lcurand
    wanted_any numlib_ && build_prog numlib_prog -lcusparse -lcublas -lcufft
    wanted_any churn_ && build_prog churn_prog -rdc=true -lcudadevrt
fi

# --- workloads: name and command ---------------------------------------------------------------
names=() cmds=()
add() { wanted "$1" || return 0; names+=("$1"); cmds+=("$2"); }
add solver "$bin/solver_prog"
add solver_k4 "$bin/solver_prog --kernels 4"
add solver_stream "$bin/solver_prog --stream"
add alloc_loop "$bin/alloc_loop_prog"
add alloc_async "$bin/alloc_loop_prog --async"
add trainer "$bin/trainer_prog"
add trainer_par "$bin/trainer_prog --reduce parallel"
add samples_thrust "$bin/samples_prog --mode thrust"
add samples_symbol "$bin/samples_prog --mode symbol"
add samples_pitch2d "$bin/samples_prog --mode pitch2d"
add samples_timing "$bin/samples_prog --mode timing"
add samples_streams "$bin/samples_prog --mode streams"
add samples_query "$bin/samples_prog --mode query"
add samples_hostfunc "$bin/samples_prog --mode hostfunc"
add samples_hostfunc_graphed "env AUTOGRAPH_HOST_FUNCS=1 $bin/samples_prog --mode hostfunc"
add samples_curand "$bin/samples_prog --mode curand"
add numlib_cg "$bin/numlib_prog --mode cg"
add numlib_cg_device "$bin/numlib_prog --mode cg_device"
add numlib_fft "$bin/numlib_prog --mode fft"
add numlib_managed "$bin/numlib_prog --mode managed"
for m in events streams texture pinned cdp; do
    add "churn_$m" "$bin/churn_prog --mode $m"
done
if pysrc=$(find_src torch_train_loop.py 2>/dev/null); then
    if torch_cuda_ok; then
        add torch_train "$PYTHON $pysrc"
    else
        say "torch (with CUDA) not importable by $PYTHON: torch_train skipped"
    fi
else
    say "torch_train_loop.py not found: torch_train skipped"
fi
if msrc=$(find_src torch_modern_loop.py 2>/dev/null); then
    if torch_cuda_ok; then
        add torch_modern "$PYTHON $msrc"
        add torch_modern_bf16 "$PYTHON $msrc --amp bf16 --fused"
    else
        say "torch (with CUDA) not importable by $PYTHON: torch_modern skipped"
    fi
else
    say "torch_modern_loop.py not found: torch_modern skipped"
fi
if jsrc=$(find_src jax_train_loop.py 2>/dev/null) && "$PYTHON" -c 'import jax' 2>/dev/null; then
    add jax_train "$PYTHON $jsrc --steps 100"
    add jax_nocb "$PYTHON $jsrc --steps 100 --no-command-buffer"
    add jax_eager "$PYTHON $jsrc --mode eager --steps 30 --warmup 5"
else
    say "jax_train_loop.py or jax not found: jax_train and jax_eager skipped"
fi
need_workloads
rows=()
for i in "${!names[@]}"; do
    name=${names[$i]}
    measure_workload "$i" ""
    label=${cmds[$i]##*/}           # the program and its arguments, after env's settings
    [[ ${cmds[$i]} != env\ * ]] ||
        label="$(awk '{ for (k = 2; k <= NF && $k ~ /=/; k++) printf "%s ", $k }' <<< "${cmds[$i]}")$label"
    rows+=("| $label | ${m_off:-?} | ${m_on:-?} | $ratio |$(alt_row) $pairs | $(guard_col "$name") | $same | $(sumstat graphed_share "$out/$name.summary") |")
done

{
    echo
    echo "libautograph: $lib; $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
    echo "p50: median over $reps processes per side of each process's per-iteration p50"
    echo "pairs: each pair of processes run in turn (no shim, then shim) gives its own ratio;"
    echo "their median, then each pair's"
    echo "in process: the speed guard's verdicts in the timing runs with the shim, median"
    echo "(eager time over graphed time, measured in blocks of one process; '-': no trial)"
    echo
    echo "| workload | no shim p50 us | shim p50 us | ratio no-shim/shim |$(alt_head) pairs in turn | in process | same output | graphed share |"
    echo "|---|---|---|---|$(alt_sep)---|---|---|---|"
    for row in "${rows[@]}"; do
        echo "$row"
    done
} | tee "$out/table.md"
