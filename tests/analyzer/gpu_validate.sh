#!/usr/bin/env bash
# gpu_validate.sh -- the analyzer's figure of merit on a GPU (issue 33, part 1): for
# three GPU-bound multi-stream workloads with false dependencies (tests/analyzer/gpu/:
# eager C/CUDA, a hand-built graph, PyTorch streams), the span the analyzer predicts
# without false dependencies from a CUDA_DEVICE_MAX_CONNECTIONS=1 trace, against the
# span measured with 32 connections.
#
#   tests/analyzer/gpu_validate.sh OUTDIR
#   tests/analyzer/gpu_validate.sh --predict TRACE eager|graph   (the analysis step alone)
#
# Per workload: built with nvcc (the PyTorch one needs python3 with torch and CUDA, else
# its row says why it was skipped); run with 1 connection under the shim's tracer
# (LD_PRELOAD=build/libautograph.so, AUTOGRAPH=off, AUTOGRAPH_TRACE), with 1 and 32
# connections plain, and with 32 under the shim's engine (do its graphs keep the
# branches' parallelism?); the analyzer reads the 1-connection trace.  The table (its
# legend is printed above it):
#   span_c1, span_c1_traced, measured_c32: the program's own median span (CUDA events
#     recorded before the first and after the last kernel of an iteration) with 1
#     connection, the same under the tracer, and with 32 connections
#   trace_span, predicted: from the 1-connection trace, medians over the timed
#     iterations (tests/analyzer/gpu_predict.py): the span of an iteration's GPU
#     records (first start to last end), and the analyzer's estimated span without
#     false dependencies; error: (predicted - measured_c32) / measured_c32
#   adjusted: span_c1 - (trace_span - predicted), the gain the analyzer predicts taken
#     off the program's own 1-connection span (what the trace's span leaves out, the
#     events before the first and after the last record, and the tracer's slowdown of
#     the GPU work cancel); error_adj likewise
#   false_per_iter: false serializations per iteration; shim_engine_c32: the span under
#     the shim's engine, 32 connections (eager workloads)
# A graph workload whose branches the GPU runs side by side even on one connection
# (the H100 does) has no false dependency: span_c1 = measured_c32 = predicted.
# Writes into OUTDIR: the traces gzip'd (NAME_c1.json.gz, the program's graph data in
# NAME_c1.graphs/), the analyzer's reports, every run's stdout/stderr, results.tsv and
# results.txt (the table, also printed), and corpus/: the traces trimmed to a few
# iterations with the analyzer's classification (tests/analyzer/gpu_corpus.py keep), to
# replace tests/analyzer/h100/gpu_validate/.  Fails with one line when there is no GPU
# or no nvcc.  Needs make (the shim and the analyzer are built if missing).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
analyzer=$top/build/autograph-analyze
shim=$top/build/libautograph.so

die() {
    echo "gpu_validate.sh: $*" >&2
    exit 1
}

# predict TRACE KIND: the analyzer's JSON report of TRACE beside it (NAME.report.json),
# and its figures for the workload (tests/analyzer/gpu_predict.py: observed, predicted,
# false per iteration, iterations, note; tab-separated)
predict() {
    local trace=$1 kind=$2 report=${1%.json*}.report.json rc=0
    "$analyzer" -q --json "$report" "$trace" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || return 1
    python3 "$top/tests/analyzer/gpu_predict.py" "$report" "$kind"
}

if [ "${1:-}" = --predict ]; then
    [ $# -eq 3 ] || die "usage: gpu_validate.sh --predict TRACE eager|graph"
    [ -x "$analyzer" ] || die "$analyzer not built (make)"
    predict "$2" "$3"
    exit
fi

[ $# -eq 1 ] || die "usage: gpu_validate.sh OUTDIR"
mkdir -p "$1"
out=$(cd "$1" && pwd)
command -v nvidia-smi >/dev/null 2>&1 || die "no GPU: nvidia-smi not found"
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || die "no GPU: nvidia-smi -L lists none"
nvcc=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || die "nvcc not found (set NVCC)"
cuda_home=${nvcc%/bin/nvcc}
if [ ! -f "$shim" ] || [ ! -x "$analyzer" ]; then
    make -s -C "$top" >"$out/make.log" 2>&1 || die "make failed (see $out/make.log)"
fi
[ -x "$analyzer" ] || die "$analyzer not built (zlib1g-dev missing?)"
cupti_dir=
for d in "$cuda_home/extras/CUPTI/lib64" "$cuda_home/lib64"; do
    if [ -e "$d/libcupti.so.13" ] || [ -e "$d/libcupti.so" ]; then
        cupti_dir=$d
        break
    fi
done
libpath=${cupti_dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

src=$top/tests/analyzer/gpu
mkdir -p "$out/bin"
for w in false_deps_eager false_deps_graph; do
    "$nvcc" -O2 -arch=native -o "$out/bin/$w" "$src/$w.cu" >"$out/bin/$w.log" 2>&1 ||
        "$nvcc" -O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75 \
            -o "$out/bin/$w" "$src/$w.cu" >>"$out/bin/$w.log" 2>&1 ||
        die "nvcc failed on $w.cu (see $out/bin/$w.log)"
done

# run TAG CONNECTIONS [VAR=VALUE...] -- CMD...: CMD with that many connections, under
# a time limit, its output in OUTDIR/TAG.{out,err}
run() {
    local tag=$1 conn=$2 vars=()
    shift 2
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    env -u LD_PRELOAD -u AUTOGRAPH -u AUTOGRAPH_TRACE -u AUTOGRAPH_LOG \
        CUDA_DEVICE_MAX_CONNECTIONS="$conn" \
        LD_LIBRARY_PATH="$libpath" "${vars[@]}" timeout -k 5 60 "$@" \
        >"$out/$tag.out" 2>"$out/$tag.err"
}

# value TAG KEY: KEY's value in TAG's stderr ("n/a" when absent)
value() {
    awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? "n/a" : v) }' "$out/$1.err"
}

printf 'workload\tkind\tspan_c1_us\tspan_c1_traced_us\tmeasured_c32_us\ttrace_span_us\tpredicted_us\terror_pct\tadjusted_us\terror_adj_pct\tfalse_per_iter\tshim_engine_c32_us\tnote\n' \
    >"$out/results.tsv"

# error PREDICTED MEASURED: (p - m) / m in percent, or n/a
error() {
    awk -v p="$1" -v m="$2" 'BEGIN {
        if (p == "n/a" || m == "n/a" || m + 0 == 0) print "n/a";
        else printf "%.1f", 100 * (p - m) / m }'
}

# workload NAME KIND CMD...: the runs, the analysis, one row of the table
workload() {
    local name=$1 kind=$2 note="" pred obs=n/a predicted=n/a false=n/a n=0 why=""
    local c1 c1t c32 engine=n/a adjusted=n/a
    shift 2
    # AUTOGRAPH_LOG=info: the tracer's start line (how many launch APIs it traces) in
    # NAME_c1_trace.err, for traces that come without API records
    if ! run "${name}_c1_trace" 1 LD_PRELOAD="$shim" AUTOGRAPH=off AUTOGRAPH_LOG=info \
        AUTOGRAPH_TRACE="$out/${name}_c1.json" -- "$@"; then
        note="traced run failed (see ${name}_c1_trace.err)"
    fi
    run "${name}_c1" 1 -- "$@" || note="${note:+$note; }1-connection run failed"
    run "${name}_c32" 32 -- "$@" || note="${note:+$note; }32-connection run failed"
    if [ "$kind" = eager ] && run "${name}_c32_engine" 32 LD_PRELOAD="$shim" -- "$@"; then
        engine=$(value "${name}_c32_engine" span_us)
    fi
    c1=$(value "${name}_c1" span_us)
    c1t=$(value "${name}_c1_trace" span_us)
    c32=$(value "${name}_c32" span_us)
    if [ -s "$out/${name}_c1.json" ] && pred=$(predict "$out/${name}_c1.json" "$kind"); then
        IFS=$'\t' read -r obs predicted false n why <<<"$pred"
    else
        note="${note:+$note; }no analysis"
    fi
    if [ "$predicted" != n/a ] && [ "$c1" != n/a ]; then
        adjusted=$(awk -v c="$c1" -v o="$obs" -v p="$predicted" 'BEGIN { printf "%.1f", c - (o - p) }')
    fi
    if [ -f "$out/${name}_c1.json" ]; then
        gzip -9f "$out/${name}_c1.json"
        rm -rf "$out/${name}_c1.graphs"
        [ -d "$out/${name}_c1.json.graphs" ] && mv "$out/${name}_c1.json.graphs" "$out/${name}_c1.graphs"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$c1" \
        "$c1t" "$c32" "$obs" "$predicted" "$(error "$predicted" "$c32")" "$adjusted" \
        "$(error "$adjusted" "$c32")" "$false" "$engine" "${note:+$note; }${why:-}" \
        >>"$out/results.tsv"
}

start=$SECONDS
workload eager_c eager "$out/bin/false_deps_eager"
workload graph_c graph "$out/bin/false_deps_graph"
if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
    workload torch eager python3 "$src/false_deps_torch.py"
else
    printf 'torch\teager%s\tskipped: no python3 with torch and CUDA\n' "$(printf '\tn/a%.0s' {1..10})" \
        >>"$out/results.tsv"
fi
{
    echo "GPU: $(nvidia-smi -L | head -n 1); $((SECONDS - start)) s"
    echo "span_c1, span_c1_traced, measured_c32: the program's median span: 1 connection, the same traced, 32 connections"
    echo "trace_span, predicted: medians over the timed iterations of the 1-connection trace: its span, and the"
    echo "  analyzer's estimated span without false dependencies; error = (predicted - measured_c32) / measured_c32"
    echo "adjusted = span_c1 - (trace_span - predicted): the predicted gain off the program's own span; error_adj likewise"
    if command -v column >/dev/null 2>&1; then
        column -t -s $'\t' "$out/results.tsv"
    else
        cat "$out/results.tsv"
    fi
} | tee "$out/results.txt"
python3 "$top/tests/analyzer/gpu_corpus.py" keep "$out" "$out/corpus" --analyzer "$analyzer" \
    >"$out/corpus.log" 2>&1 || echo "gpu_validate.sh: corpus not made (see $out/corpus.log)" >&2
