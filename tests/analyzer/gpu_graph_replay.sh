#!/usr/bin/env bash
# gpu_graph_replay.sh -- issue 33, part 2 on the GPU: a PyTorch profiler trace of
# torch.cuda.graph replays (tests/analyzer/gpu/torch_graph_replay.py; Kineto writes no
# graph node ids) classified with the graph data the shim dumps without CUPTI.
#
#   tests/analyzer/gpu_graph_replay.sh OUTDIR
#
# Runs the program once plainly and once under the shim with AUTOGRAPH=off and
# AUTOGRAPH_GRAPH_DATA=OUTDIR/gd.%p (the same output hash: the shim changes nothing),
# then the analyzer on the profiler's trace with the dumped graph data, and prints the
# report's status, the replay group's mapping (records mapped, ambiguous, confidence)
# and its serializations.  Exit 0 when the replays were mapped and decided.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: gpu_graph_replay.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1" && out=$(cd "$1" && pwd)
py=${PYTHON:-python3}
prog=$top/tests/analyzer/gpu/torch_graph_replay.py
"$py" "$prog" "$out/plain.json" > "$out/plain.out" 2> "$out/plain.err" || { cat "$out/plain.err"; exit 1; }
LD_PRELOAD=$top/build/libautograph.so AUTOGRAPH=off AUTOGRAPH_GRAPH_DATA="$out/gd.%p" \
    "$py" "$prog" "$out/trace.json" > "$out/shim.out" 2> "$out/shim.err" || { cat "$out/shim.err"; exit 1; }
diff <(grep sha256 "$out/plain.out") <(grep sha256 "$out/shim.out") || { echo "output differs"; exit 1; }
rc=0
"$top/build/autograph-analyze" --json "$out/report.json" "$out/trace.json" "$out"/gd.* \
    > "$out/report.txt" 2>&1 || rc=$?
head -20 "$out/report.txt"
echo "analyzer exit $rc"
"$py" - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("status", r.get("status"))
for g in r.get("groups", []):
    if "exec_graph_id" in g or g.get("graph_file"):
        keys = ("exec_graph_id", "graph_file", "replay_count", "unmatched_records",
                "mapping", "serializations")
        print(json.dumps({k: g.get(k) for k in keys}))
PY
exit $rc
