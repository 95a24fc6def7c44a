#!/usr/bin/env bash
# fuzz.sh -- run the analyzer's libFuzzer targets (`make fuzz FUZZ_SECONDS=N`).
#
#   tests/analyzer/fuzz.sh BUILD_DIR SECONDS TARGET...
#
# Each target (BUILD_DIR/fuzz_<kind>, built by analyzer/analyzer.mk with ASan and
# UBSan) runs SECONDS seconds on its seed corpus tests/analyzer/corpus/<kind>/ plus a
# working corpus BUILD_DIR/corpus-<kind>/ (new inputs go there, never into tests/).
# A crash, leak, timeout or sanitizer report leaves its input in BUILD_DIR/artifacts/
# and fails.  Prints one line per target, then
#   fuzz: N runs in S s, crash-free        (or: fuzz: FAILED ...)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$1 secs=$2
shift 2
total_runs=0 total_secs=0 failed=0
mkdir -p "$dir/artifacts"
for t in "$@"; do
    kind=${t#fuzz_}
    work="$dir/corpus-$kind"
    log="$dir/$t.log"
    mkdir -p "$work"
    "$dir/$t" -max_total_time="$secs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
        "$work" "$top/tests/analyzer/corpus/$kind" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    runs=${runs:-0} took=${took:-$secs}
    total_runs=$((total_runs + runs)) total_secs=$((total_secs + took))
    if [ "$rc" -ne 0 ]; then
        failed=1
        echo "fuzz: $t: FAILED (exit $rc) after $runs runs; log $log:"
        grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 20
    else
        echo "fuzz: $t: $runs runs in ${took} s, no crash (corpus $(ls "$work" | wc -l) inputs)"
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "fuzz: FAILED (see above)"
    exit 1
fi
echo "fuzz: $total_runs runs in $total_secs s, crash-free"
