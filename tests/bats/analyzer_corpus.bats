#!/usr/bin/env bats
# analyzer_corpus.bats -- autograph-analyze on the regression corpus of GPU traces
# (tests/analyzer/h100/gpu_validate/, made by tests/analyzer/gpu_corpus.py from a run
# of tests/analyzer/gpu_validate.sh; its README says what each trace is):
#   - the classification and estimates the analyzer gives them are those of
#     expected.json (gpu_corpus.py check)
#   - independent checks: no false dependency between records with a path
#     (scripts/trace_check.py eagerdeps for eager windows, falsedeps for graphs)
#   - what each workload shows: 7 false dependencies in every iteration of the eager C
#     and the PyTorch workloads (each stream's first kernel behind the previous
#     stream's last), none in the graph's, submission times estimated from the host's
#     timed calls
#   - the annotated trace is valid JSON and reads back
# and on a PyTorch 2.11 profiler trace of CUDA graph replays with the graph data
# libautograph wrote for that run (tests/analyzer/h100/kineto_graph/, its README says
# what it is): expected.json the same way, every record mapped to its node by demangled
# name and order, each branch's dependencies on the branch's stream.
# Needs: build/autograph-analyze (make), python3.  Honours AG_TEST_ROOT (the sanitizer
# suites' build).

setup_file() {
    export TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
    export AN="${AG_TEST_ROOT:-$TOP}/build/autograph-analyze"
    export CORPUS="$TOP/tests/analyzer/h100/gpu_validate"
    export KINETO="$TOP/tests/analyzer/h100/kineto_graph"
}

setup() {
    [ -x "$AN" ] || skip "build/autograph-analyze not built (zlib1g-dev missing?)"
}

load analyzer_helpers.bash

# report NAME: the analyzer's JSON report of NAME_c1.json.gz in $BATS_TEST_TMPDIR/NAME.json
report() {
    local rc=0
    "$AN" -q --json "$BATS_TEST_TMPDIR/$1.json" "$CORPUS/$1_c1.json.gz" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
}

@test "analyzer corpus: the classification of every trace is the expected one" {
    run python3 "$TOP/tests/analyzer/gpu_corpus.py" check "$CORPUS" --analyzer "$AN"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "corpus ok: 3 traces" ]
}

@test "analyzer corpus: no false dependency between records with a path (trace_check.py)" {
    local w
    for w in eager_c torch; do
        report "$w"
        run python3 "$TOP/scripts/trace_check.py" eagerdeps "$CORPUS/${w}_c1.json.gz" \
            "$BATS_TEST_TMPDIR/$w.json"
        echo "$w: $output"
        [ "$status" -eq 0 ]
    done
    report graph_c
    run python3 "$TOP/scripts/trace_check.py" falsedeps "$BATS_TEST_TMPDIR/graph_c.json" \
        --graphs "$CORPUS/graph_c_c1.json.gz.graphs"
    echo "graph_c: $output"
    [ "$status" -eq 0 ]
}

# eager_false NAME RECORDS PER_STREAM STREAMS_CHECK: the eager window of RECORDS records in
# NAME's report has 5 replays with 7 false dependencies each, exactly the pairs
# (PER_STREAM * b - 1, PER_STREAM * b), an estimate below 0.4x the span in the timed
# iterations, and submission times from the host (the traces have no API records).
eager_false() {
    local j="$BATS_TEST_TMPDIR/$1.json" n=$3
    local g="[g for g in r[\"groups\"] if g.get(\"eager_window\", {}).get(\"records\") == $2][0]"
    report "$1"
    [ "$(json_get "$j" "$g[\"replay_count\"], [sum(s[\"class\"] == \"false\" for s in x[\"serializations\"]) for x in $g[\"replays\"]]")" = "(5, [7, 7, 7, 7, 7])" ]
    [ "$(json_get "$j" "sorted((p[\"from_node\"], p[\"to_node\"]) for p in $g[\"false_dependencies\"]) == [($n * b - 1, $n * b) for b in range(1, 8)]")" = True ]
    [ "$(json_get "$j" "all(x[\"estimated_span_us\"] < 0.4 * x[\"span_us\"] for x in $g[\"replays\"][2:])")" = True ]
    [ "$(json_get "$j" 'r["eager_windows"]["submission"]["api_records"]')" -eq 0 ]
    [ "$(json_get "$j" 'r["eager_windows"]["submission"]["host_estimated"]')" -gt 0 ]
    [ "$(json_get "$j" "$g[\"eager_window\"][\"streams\"]")" -eq 8 ]
}

# The eager C workload: 8 streams of 4 kernels submitted depth first on one hardware
# queue.  Each stream's first kernel waited behind the previous stream's last: 7 false
# per iteration, the pairs (4b - 1, 4b), and the estimate without them is far below
# the observed span (the branches ran one after the other).
@test "analyzer corpus: eager C streams, 1 connection: 7 false dependencies per iteration, a large estimated gain" {
    eager_false eager_c 32 4
}

# PyTorch: 8 streams submitted one after the other on one hardware queue.  Each
# stream's first kernel waited behind the previous stream's last: 7 false per
# iteration, the pairs (8b - 1, 8b) (4 sleeps and an add a stream, with their
# records), and the estimate without them is far below the observed span.
@test "analyzer corpus: PyTorch streams, 1 connection: 7 false dependencies per iteration, a large estimated gain" {
    eager_false torch 64 8
}

# The graph's branches ran side by side on one channel: its file (the one the shim
# wrote in that run) maps every record, no serialization is false, and the estimate is
# the observed span.
@test "analyzer corpus: hand-built graph, 1 connection: every record mapped, no false dependency, estimate = span" {
    report graph_c
    local g='[g for g in r["groups"] if "exec_graph_id" in g][0]'
    [ "$(json_get "$BATS_TEST_TMPDIR/graph_c.json" "len([g for g in r[\"groups\"] if \"exec_graph_id\" in g])")" -eq 1 ]
    [ "$(json_get "$BATS_TEST_TMPDIR/graph_c.json" "r[\"status\"], $g[\"replay_count\"], $g[\"unmatched_records\"], $g[\"serializations\"][\"false\"]")" = "('decided', 5, 0, 0)" ]
    local f="$(json_get "$BATS_TEST_TMPDIR/graph_c.json" "__import__(\"os\").path.basename($g[\"graph_file\"])")"
    [[ "$f" == pid*-program-n1.json ]]
    [ "$(json_get "$BATS_TEST_TMPDIR/graph_c.json" "all(x[\"estimated_span_us\"] == x[\"span_us\"] for x in $g[\"replays\"])")" = True ]
}

@test "analyzer corpus: --annotate writes valid JSON and the analyzer reads it back" {
    local f d="$BATS_TEST_TMPDIR" rc
    for f in "$CORPUS"/*.json.gz; do
        rc=0
        "$AN" -q --json "$d/a.json" --annotate "$d/ann.json" "$f" || rc=$?
        [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
        python3 -m json.tool "$d/ann.json" >/dev/null || { echo "invalid JSON: $f"; false; }
        rc=0
        "$AN" -q --no-graphs --json "$d/b.json" "$d/ann.json" || rc=$?
        [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
        [ "$(json_get "$d/a.json" 'r["input"]["gpu_records"]')" = "$(json_get "$d/b.json" 'r["input"]["gpu_records"]')" ]
    done
}

# gpu_validate.sh's analysis step (tests/analyzer/gpu_predict.py) on the corpus: the
# figures of each workload, over the timed iterations (the first 2 left out).
@test "analyzer corpus: gpu_validate.sh --predict: medians over the timed iterations, false per iteration, why" {
    local d="$BATS_TEST_TMPDIR" w
    cp -r "$CORPUS"/. "$d/"
    for w in eager_c torch; do
        run bash "$TOP/tests/analyzer/gpu_validate.sh" --predict "$d/${w}_c1.json.gz" eager
        echo "$w: $output"
        [ "$status" -eq 0 ]
        [[ "$output" == *$'\t7.00\t3\t3 iterations analysed; submission times: 0 from API records, '* ]]
        # the predicted span well below the trace's
        [ "$(echo "$output" | awk -F '\t' '{ print ($2 < 0.4 * $1) }')" = 1 ]
    done
    run bash "$TOP/tests/analyzer/gpu_validate.sh" --predict "$d/graph_c_c1.json.gz" graph
    echo "graph_c: $output"
    [ "$(echo "$output" | cut -f 1)" = "$(echo "$output" | cut -f 2)" ]
    [ "$(echo "$output" | cut -f 3-)" = $'0.00\t3\t3 iterations analysed' ]
    # without its graph file: no estimate, and why
    rm -r "$d/graph_c_c1.json.gz.graphs"
    run bash "$TOP/tests/analyzer/gpu_validate.sh" --predict "$d/graph_c_c1.json.gz" graph
    echo "graph_c, no graph file: $output"
    [[ "$output" == $'n/a\tn/a\tn/a\t0\tno estimate: no graph file for exec graph 2'* ]]
}

# PyTorch 2.11's profiler writes no node ids: the replays (12 alike branches of 10
# kernels, each branch on a stream of its own, 20 replays) are mapped to the graph data
# by name, whose names are mangled where the trace's are demangled, and whose copy node
# ran as the driver's memcpy32_post.  Every record mapped, none ambiguous, decided; the
# graph's dependencies inside a branch join records of one stream (the branch a record
# continues is told by its stream, not taken from the first alike node), those from
# the root and into the join cross from or to stream 7; no false dependency has a path.
@test "analyzer corpus: PyTorch graph replays without node ids: names demangled, every record mapped, decided" {
    local d="$BATS_TEST_TMPDIR" j="$BATS_TEST_TMPDIR/k.json"
    run python3 "$TOP/tests/analyzer/gpu_corpus.py" check "$KINETO" --analyzer "$AN"
    echo "$output"
    [ "$output" = "corpus ok: 1 traces" ]
    run "$AN" --json "$j" --annotate "$d/k.ann.json" "$KINETO/torch_graph.json.gz"
    echo "$output" | head -n 16
    [ "$status" -eq 0 ]
    [[ "$output" == *"graph files: 1 exec graph(s)"* ]]
    [ "$(json_get "$j" 'r["status"], r["groups"][0]["replay_count"]')" = "('decided', 20)" ]
    [ "$(json_get "$j" '[r["groups"][0]["mapping"][k] for k in ("exact", "by_stream", "ambiguous", "unmapped")]')" = "[786, 1694, 0, 0]" ]
    [ "$(json_get "$j" 'r["groups"][0]["serializations"]')" = "{'true': 2064, 'false': 308, 'ambiguous': 0, 'unclassified': 0}" ]
    [ "$(json_get "$d/k.ann.json" '
sorted(__import__("collections").Counter(
    "same" if s["tid"] == f["tid"] else "stream 7" if 7 in (s["tid"], f["tid"]) else "across"
    for s in r["traceEvents"] if s.get("cat") == "autograph.true_dependency" and s["ph"] == "s"
    for f in [next(x for x in r["traceEvents"] if x.get("cat") == s["cat"] and x["ph"] == "f" and x["id"] == s["id"])]
).items())')" = "[('same', 2220), ('stream 7', 480)]" ]
    run python3 "$TOP/scripts/trace_check.py" falsedeps "$j"
    echo "$output"
    [ "$status" -eq 0 ]
}
