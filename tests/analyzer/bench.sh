#!/usr/bin/env bash
# bench.sh -- throughput and peak memory of autograph-analyze (`make bench-analyzer`).
#
#   tests/analyzer/bench.sh ANALYZER DIR MB
#
# Generates DIR/kineto-<MB>mb.json once (tests/analyzer/gen_kineto.py: a synthetic
# PyTorch-profiler trace replaying 3 CUDA graphs, with graph keys and channels, and its
# graph files), then runs the analyzer 3 times per case and reports the median wall
# time as MB/s of the file and the peak RSS (getrusage, from the analyzer's --stats):
#   text report only | + JSON report and annotated trace | the same trace gzipped
#   (MB/s of the decompressed JSON) | without graph keys (launch groups) | an eager-heavy
#   libautograph trace with section 1d records (tests/analyzer/gen_eager.py bench: eager
#   windows, sub-windows; MB/s and RSS of that file)
# Goals (README): >= 100 MB/s and peak RSS <= 2x the file on the plain Kineto JSON
# (the first case; the others are reported).
set -eu
an=$1 dir=$2 mb=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
trace="$dir/kineto-${mb}mb.json"
mkdir -p "$dir"
if [ ! -f "$trace" ] || [ ! -d "$trace.graphs" ]; then
    echo "bench-analyzer: generating $trace ($mb MB)"
    python3 "$top/tests/analyzer/gen_kineto.py" "$trace" --mb "$mb"
fi
[ -f "$trace.gz" ] || gzip -1 -k -c "$trace" >"$trace.gz"
[ -f "$dir/nokeys-${mb}mb.json" ] ||
    python3 "$top/tests/analyzer/gen_kineto.py" "$dir/nokeys-${mb}mb.json" --mb "$mb" --no-keys
[ -f "$dir/eager-${mb}mb.json" ] ||
    python3 "$top/tests/analyzer/gen_eager.py" bench "$dir/eager-${mb}mb.json" --mb "$mb"
bytes=$(stat -c %s "$trace")

# run NAME FILE ARGS...: 3 runs; prints a table row from the median run's --stats line
run() {
    local name=$1 file=$2 i line bytes secs rss mbs ratio
    shift 2
    for i in 1 2 3; do
        "$an" -q --stats "$@" "$file" 2>&1 >/dev/null | grep 'stats:' ||
            { echo "bench-analyzer: the analyzer failed on $file" >&2; exit 1; }
    done | sort -t, -k4 -n | sed -n 2p >"$dir/line"
    line=$(cat "$dir/line")
    bytes=$(stat -c %s "${file%.gz}")      # a .gz: the JSON it holds (beside it)
    secs=$(echo "$line" | sed -n 's/.* records, \([0-9.]*\) s,.*/\1/p')
    rss=$(echo "$line" | sed -n 's/.*peak RSS \([0-9.]*\) MB.*/\1/p')
    mbs=$(python3 -c "print('%.1f' % ($bytes / 1e6 / $secs))")
    ratio=$(python3 -c "print('%.2f' % ($rss * 1048576 / $bytes))")
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$secs" "$mbs" "$rss" "$ratio"
    echo "$mbs $ratio" >"$dir/last"
}

echo "bench-analyzer: $trace, $bytes bytes; $(nproc) CPUs; median of 3 runs"
echo "| case | seconds | MB/s (of the JSON) | peak RSS MB | RSS / JSON size |"
echo "|---|---|---|---|---|"
run "Kineto JSON, text report" "$trace"
read -r goal_mbs goal_ratio <"$dir/last"
run "+ JSON report and annotated trace" "$trace" --json /dev/null --annotate "$dir/annotated.json"
run "gzipped (.json.gz)" "$trace.gz"
run "no graph keys (launch groups)" "$dir/nokeys-${mb}mb.json"
run "eager-heavy libautograph trace (eager windows)" "$dir/eager-${mb}mb.json"
run "+ JSON report and annotated trace" "$dir/eager-${mb}mb.json" --json /dev/null \
    --annotate "$dir/annotated.json"
rm -f "$dir/annotated.json" "$dir/line" "$dir/last"
python3 -c "import sys; ok = $goal_mbs >= 100 and $goal_ratio <= 2; print('bench-analyzer: goals (>= 100 MB/s, RSS <= 2x): %s' % ('met' if ok else 'MISSED')); sys.exit(0 if ok else 1)"
