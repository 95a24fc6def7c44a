#!/usr/bin/env bash
# loose_bench.sh -- realistic loops (a solver, alloc and free per iteration, a C trainer, a PyTorch training loop) with and without libautograph, side by
# side: same output?  how much faster?  how much graphed?
#
# usage: loose_bench.sh [--dry-run] [--no-build] [--reps N] LIBAUTOGRAPH_SO OUTDIR
#
#   Builds solver_prog, alloc_loop_prog and trainer_prog (cuBLASLt) with nvcc into
#   OUTDIR/bin, then for each workload
#     (a) runs it without the shim                     -> OUTDIR/<name>.off.{out,err}
#     (b) runs it with LD_PRELOAD=LIB AUTOGRAPH_SUMMARY=1 -> OUTDIR/<name>.on.{out,err},
#         the exit summary (its "libautograph:" lines) -> OUTDIR/<name>.summary
#     compares their "result" / "sha256" / "step" lines: SAME or DIFFER
#     then N alternating timing processes per side with --time (off, on, off, on, ...):
#     the median of the per-process "per_iter_us p50" per side
#   and prints a markdown table last (also in OUTDIR/table.md).
#   Workloads: solver, solver --kernels 4, solver --stream, alloc_loop, alloc_loop --async,
#   trainer, and torch_train_loop.py when python3 can import torch with a GPU.
#
#   --dry-run   print what would be built and run, run nothing
#   --no-build  use the programs already in OUTDIR/bin
#   --reps N    timing processes per side (default 5)
#   Environment: NVCC (nvcc), NVCC_ARCH (-gencode arch=compute_90,code=sm_90), PYTHON
#   (python3), TMO (per-process timeout in seconds, default 60), SRC_DIR (where the sources
#   are; default: this script's folder, then ../gpu and ../bench beside it).
set -u

dry=0 build=1 reps=5
while [ $# -gt 0 ]; do
    case "$1" in
    --dry-run) dry=1; shift ;;
    --no-build) build=0; shift ;;
    --reps) reps=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) echo "loose_bench.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
    esac
done
if [ $# -ne 2 ]; then
    echo "usage: loose_bench.sh [--dry-run] [--no-build] [--reps N] LIBAUTOGRAPH_SO OUTDIR" >&2
    exit 1
fi
case "$reps" in '' | *[!0-9]* | 0) echo "loose_bench.sh: bad --reps $reps" >&2; exit 1 ;; esac

lib=$1 out=$2
if [ ! -f "$lib" ] && [ $dry -eq 0 ]; then
    echo "loose_bench.sh: no such library: $lib" >&2
    exit 1
fi
case "$lib" in /*) ;; *) lib=$PWD/$lib ;; esac
mkdir -p "$out/bin" || exit 1
out=$(cd "$out" && pwd)
bin=$out/bin

NVCC=${NVCC:-nvcc}
NVCC_ARCH=${NVCC_ARCH:--gencode arch=compute_90,code=sm_90}
PYTHON=${PYTHON:-python3}
TMO=${TMO:-60}
here=$(cd "$(dirname "$0")" && pwd)

# find_src FILE: the first of SRC_DIR, this folder, ../gpu, ../bench that has FILE
find_src() {
    local d
    for d in ${SRC_DIR:+"$SRC_DIR"} "$here" "$here/../gpu" "$here/../bench"; do
        if [ -f "$d/$1" ]; then
            echo "$d/$1"
            return 0
        fi
    done
    echo "loose_bench.sh: cannot find $1 (set SRC_DIR)" >&2
    return 1
}

say() { echo "loose_bench.sh: $*" >&2; }

# run CMD...: runs it, or prints it under --dry-run (on the script's own stderr, fd 3)
exec 3>&2
run() {
    if [ $dry -eq 1 ]; then
        echo "+ $*" >&3
        return 0
    fi
    "$@"
}

# --- build ----------------------------------------------------------------------------------
if [ $build -eq 1 ]; then
    for p in solver_prog alloc_loop_prog trainer_prog; do
        src=$(find_src $p.cu) || exit 1
        extra=
        [ $p = trainer_prog ] && extra=-lcublasLt
        say "building $p"
        # shellcheck disable=SC2086
        run "$NVCC" -O2 $NVCC_ARCH -o "$bin/$p" "$src" $extra || {
            say "build of $p failed"
            exit 1
        }
    done
fi

# --- workloads: name and command ---------------------------------------------------------------
names=() cmds=()
add() { names+=("$1"); cmds+=("$2"); }
add solver "$bin/solver_prog"
add solver_k4 "$bin/solver_prog --kernels 4"
add solver_stream "$bin/solver_prog --stream"
add alloc_loop "$bin/alloc_loop_prog"
add alloc_async "$bin/alloc_loop_prog --async"
add trainer "$bin/trainer_prog"
if pysrc=$(find_src torch_train_loop.py 2>/dev/null); then
    if [ $dry -eq 1 ] ||
        timeout "$TMO" "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
            >/dev/null 2>&1; then
        add torch_train "$PYTHON $pysrc"
    else
        say "torch (with CUDA) not importable by $PYTHON: torch_train skipped"
    fi
else
    say "torch_train_loop.py not found: torch_train skipped"
fi

# side off|on, then the command words: runs one process under timeout
side() {
    local s=$1
    shift
    if [ "$s" = on ]; then
        run timeout "$TMO" env LD_PRELOAD="$lib" AUTOGRAPH_SUMMARY=1 "$@"
    else
        run timeout "$TMO" "$@"
    fi
}

# the lines that must match between the two sides
keylines() { grep -E '^(result|sha256|step) ' "$1" 2>/dev/null; }

# p50 FILE: the per_iter_us p50 of one timing run
p50() { awk '$1 == "per_iter_us" && $2 == "p50" { v = $3 } END { if (v != "") print v }' "$1" 2>/dev/null; }

# median of numbers on stdin (one a line); empty when none
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) exit
        if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]
        else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# the graphed share the exit summary printed ("libautograph: graphed_share P%")
share() {
    awk '{ for (i = 1; i < NF; i++) if ($i == "graphed_share") { v = $(i + 1) } }
         END { print (v == "" ? "?" : v) }' "$1" 2>/dev/null
}

rows=()
for i in "${!names[@]}"; do
    name=${names[$i]}
    # shellcheck disable=SC2206
    cmd=(${cmds[$i]})
    say "$name: correctness (off, on)"
    side off "${cmd[@]}" >"$out/$name.off.out" 2>"$out/$name.off.err"
    rc_off=$?
    side on "${cmd[@]}" >"$out/$name.on.out" 2>"$out/$name.on.err"
    rc_on=$?
    grep '^libautograph:' "$out/$name.on.err" >"$out/$name.summary" 2>/dev/null
    if [ $dry -eq 1 ]; then
        same='dry run'
    elif [ $rc_off -ne 0 ] || [ $rc_on -ne 0 ]; then
        same="FAIL (rc off $rc_off, on $rc_on)"
    elif ! keylines "$out/$name.off.out" >/dev/null; then
        same="FAIL (no result line)"
    elif diff <(keylines "$out/$name.off.out") <(keylines "$out/$name.on.out") >"$out/$name.diff"; then
        same=SAME
    else
        same=DIFFER
    fi
    say "$name: $same"

    say "$name: timing, $reps processes per side, alternating"
    : >"$out/$name.p50.off"
    : >"$out/$name.p50.on"
    for r in $(seq 1 "$reps"); do
        for s in off on; do
            f=$out/$name.time.$s.$r
            side $s "${cmd[@]}" --time >"$f.out" 2>"$f.err"
            v=$(p50 "$f.out")
            if [ -n "$v" ]; then
                echo "$v" >>"$out/$name.p50.$s"
            elif [ $dry -eq 0 ]; then
                say "$name: timing run $s $r gave no p50 (see $f.err)"
            fi
        done
    done
    m_off=$(median <"$out/$name.p50.off")
    m_on=$(median <"$out/$name.p50.on")
    ratio=$(awk -v a="$m_off" -v b="$m_on" 'BEGIN {
        if (a == "" || b == "" || b + 0 == 0) print "?"; else printf "%.3f\n", a / b }')
    rows+=("| ${cmds[$i]##*/} | ${m_off:-?} | ${m_on:-?} | $ratio | $same | $(share "$out/$name.summary") |")
done

{
    echo
    echo "libautograph: $lib; $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
    echo "p50: median over $reps processes per side of each process's per-iteration p50"
    echo
    echo "| workload | no shim p50 us | shim p50 us | ratio no-shim/shim | same output | graphed share |"
    echo "|---|---|---|---|---|---|"
    for row in "${rows[@]}"; do
        echo "$row"
    done
} | tee "$out/table.md"
