#!/usr/bin/env bats
# analyzer.bats -- autograph-analyze (analyzer/), the offline dependency analyzer.
#
#   - hand-made traces (tests/analyzer/): false dependencies (two independent branches
#     serialized on one channel), true dependencies (Kineto keys, 32-bit node ids, a
#     memset node), no graph keys (degraded report), no channel, no graph file
#   - .json.gz input and graph discovery beside the trace
#   - outputs: JSON, DOT, SVG (built-in), annotated Chrome trace with flow arrows
#   - malformed and hostile input: one line on stderr with file and byte offset, exit 1
#   - reading one byte at a time gives the same report (block boundaries)
#   - property test: random DAGs and channel schedules (tests/analyzer/prop_deps.py)
#   - traces the H100 produced (tests/analyzer/h100/): the shim's, PyTorch's profiler
#   - eager windows (FORMAT.md 1d, section 3): simulated eager programs
#     (tests/analyzer/gen_eager.py): false / true / implicit (legacy stream) orders,
#     host syncs, grouping by shape, sub-windows, malformed section 1d values, outputs,
#     and a property test against the simulation
# Needs: build/autograph-analyze (make), python3, gzip.  Honours AG_TEST_ROOT, so the
# sanitizer suites (make asan, tsan, memcheck) run it against their build.

setup_file() {
    export TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
    # AG_TEST_ROOT (tests/run.sh): the build under test, e.g. make asan's
    export AN="${AG_TEST_ROOT:-$TOP}/build/autograph-analyze"
    export FIX="$TOP/tests/analyzer"
    export GEN="$TOP/tests/analyzer/gen_eager.py"
    # property tests: fewer cases against a sanitizer build (each run is much slower)
    export PROP_CASES=$([ -n "${AG_TEST_ROOT:-}" ] && echo 100 || echo 300)
}

setup() {
    [ -x "$AN" ] || skip "build/autograph-analyze not built (zlib1g-dev missing?)"
}

load analyzer_helpers.bash

# an_ok ARGS...: the analyzer, which must exit 0 or 3 (decided, or not all of it)
an_ok() {
    local rc=0
    "$AN" "$@" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
}

# one_error_line FILE PHRASE [ARGS...]: exit 1, one stderr line naming FILE, a byte
# offset and PHRASE
one_error_line() {
    local file=$1 phrase=$2 err="$BATS_TEST_TMPDIR/err"
    shift 2
    run bash -c '"$0" "$@" 2>"'"$err"'" >/dev/null' "$AN" "$@"
    echo "exit $status; stderr:"; cat "$err"
    [ "$status" -eq 1 ]
    [ "$(wc -l <"$err")" -eq 1 ]
    grep -qF "autograph-analyze: $file" "$err"
    grep -qF -- "$phrase" "$err"
}

@test "analyzer: --help, and usage errors exit 2" {
    run "$AN" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"usage: autograph-analyze"* ]]
    run "$AN"
    [ "$status" -eq 2 ]
    run "$AN" --epsilon abc "$FIX/false_deps/trace.json"
    [ "$status" -eq 2 ]
    [[ "$output" == *'bad value "abc" for --epsilon'* ]]
}

@test "analyzer: false dependencies: two branches serialized on one channel" {
    run "$AN" --json "$BATS_TEST_TMPDIR/r.json" "$FIX/false_deps/trace.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"4 true, 3 false, 0 ambiguous"* ]]
    [[ "$output" == *"#0 branch_a0 -> #2 branch_b0 on device 0 channel 3: 1/2 replays, B waited 10.500 us"* ]]
    [[ "$output" == *"cannot decide"* ]] && false
    local r="$BATS_TEST_TMPDIR/r.json"
    [ "$(json_get "$r" 'sorted((p["from_node"], p["to_node"]) for p in r["groups"][0]["false_dependencies"])')" = "[(0, 2), (1, 3), (2, 1)]" ]
    [ "$(json_get "$r" 'r["groups"][0]["serializations"]')" = "{'true': 4, 'false': 3, 'ambiguous': 0, 'unclassified': 0}" ]
    # replay 1: span 45 us, critical path 23 us, 24 us without the false dependencies
    [ "$(json_get "$r" '[(x["span_us"], x["critical_path_us"], x["estimated_span_us"]) for x in r["groups"][0]["replays"]]')" = "[(45.0, 23.0, 24.0), (24.2, 23.0, 24.2)]" ]
    [ "$(json_get "$r" 'r["groups"][0]["mean_estimated_gain_us"]')" = "10.5" ]
}

@test "analyzer: true dependencies: Kineto keys, 32-bit node ids, a memset node" {
    run "$AN" --json "$BATS_TEST_TMPDIR/r.json" "$FIX/true_deps/trace.json" "$FIX/true_deps/graph.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"(Kineto, "* ]]
    [[ "$output" == *"2 true, 0 false, 0 ambiguous"* ]]
    [ "$(json_get "$BATS_TEST_TMPDIR/r.json" 'r["groups"][0]["mean_critical_path_us"]')" = "50.0" ]
    [ "$(json_get "$BATS_TEST_TMPDIR/r.json" 'r["groups"][0]["replays"][0]["records"]')" = "4" ]
}

@test "analyzer: no graph keys (PyTorch 2.11 trace): says what it cannot decide, reports spans, lanes, gaps" {
    run "$AN" --json "$BATS_TEST_TMPDIR/r.json" "$FIX/kineto_nokeys.json"
    echo "$output"
    [ "$status" -eq 3 ]
    [[ "$output" == *"cannot decide:"* ]]
    [[ "$output" == *'no GPU record has "graph id" and "graph node id" args'* ]]
    [[ "$output" == *"launch group "*": 2 launches of 3 records"* ]]
    [[ "$output" == *"span: mean 42.000 us, min 28.000 us, max 56.000 us"* ]]
    [[ "$output" == *"device 0 stream 143"* ]]
    [[ "$output" == *"idle 10.000 us (1 gaps > epsilon)"* ]]
    [ "$(json_get "$BATS_TEST_TMPDIR/r.json" 'r["lanes"], len(r["cannot_decide"]), r["replays_by_graph"]')" = "('stream', 1, False)" ]
    # the records on streams 143 and 144 are launch groups (graph replays); the eager
    # ones are all on stream 7: no eager multi-stream note
    [[ "$output" != *"eager multi-stream"* ]]
    [ "$(json_get "$BATS_TEST_TMPDIR/r.json" 'r["status"], r["questions"]["dependencies"]')" = "('undecided', 'undecided')" ]
    [ "$(echo "$output" | grep -c '^to decide, turn on: torch.profiler.profile(experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)) .*AUTOGRAPH_GRAPH_DATA=DIR')" -eq 1 ]
    [ "$(json_get "$BATS_TEST_TMPDIR/r.json" '"eager_windows" in r')" = "False" ]
}

@test "analyzer: graph keys without channel: no serializations, critical path still reported" {
    local d="$BATS_TEST_TMPDIR/nochan"
    mkdir -p "$d"
    sed 's/"channel": [0-9]*, //' "$FIX/false_deps/trace.json" >"$d/trace.json"
    run "$AN" "$d/trace.json" "$FIX/false_deps/trace.graphs"
    echo "$output"
    [ "$status" -eq 3 ]
    [[ "$output" == *"status: partial (dependencies undecided, critical paths decided, estimated spans undecided)"* ]]
    [[ "$output" == *'no GPU record has a "channel" arg'* ]]
    [[ "$output" == *"critical path (measured durations): mean 23.000 us"* ]]
    [[ "$output" == *"delayed starts (more than epsilon after the node was ready): 1.50 per replay"* ]]
    [[ "$output" != *"serializations ("* ]]
}

@test "analyzer: no graph file for an exec graph: unclassified, and it says which" {
    run "$AN" --no-graphs "$FIX/false_deps/trace.json"
    echo "$output"
    [ "$status" -eq 3 ]
    [[ "$output" == *"no graph file for exec graph 7"* ]]
    [[ "$output" == *"7 unclassified"* ]]
}

@test "analyzer: .json.gz input, graphs found in <stem>.graphs/, same analysis as plain" {
    local d="$BATS_TEST_TMPDIR/gz"
    mkdir -p "$d"
    gzip -c "$FIX/false_deps/trace.json" >"$d/run.json.gz"
    cp -r "$FIX/false_deps/trace.graphs" "$d/run.graphs"
    run "$AN" --json "$d/gz.json" "$d/run.json.gz"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"(libautograph, gzip, "* ]]
    "$AN" -q --json "$d/plain.json" "$FIX/false_deps/trace.json"
    [ "$(json_get "$d/gz.json" 'r["groups"][0]["replays"]')" = "$(json_get "$d/plain.json" 'r["groups"][0]["replays"]')" ]
}

@test "analyzer: annotated trace: input kept, flow arrows s/f (bp e) in true and false categories" {
    local out="$BATS_TEST_TMPDIR/ann.json"
    run "$AN" -q --annotate "$out" "$FIX/false_deps/trace.json"
    [ "$status" -eq 0 ]
    python3 - "$FIX/false_deps/trace.json" "$out" <<'EOF'
import collections, json, sys
orig, ann = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = ann["traceEvents"]
assert ev[:len(orig["traceEvents"])] == orig["traceEvents"], "input events changed"
assert ann["otherData"] == orig["otherData"]
flows = ev[len(orig["traceEvents"]):]
by_id = collections.defaultdict(list)
for f in flows:
    by_id[f["id"]].append(f)
for i, (s, f) in by_id.items():
    assert (s["ph"], f["ph"], f["bp"]) == ("s", "f", "e"), (s, f)
    assert (s["cat"], s["name"]) == (f["cat"], f["name"])
cats = collections.Counter(p[0]["cat"] for p in by_id.values())
print(cats)
assert cats == {"autograph.false_dependency": 3, "autograph.true_dependency": 8}, cats
EOF
    "$AN" -q --annotate "$out.gz" "$FIX/false_deps/trace.json"
    gzip -dc "$out.gz" | cmp - "$out"
}

@test "analyzer: annotating a trace without traceEvents adds the member" {
    local d="$BATS_TEST_TMPDIR"
    printf '{"schemaVersion": 1}' >"$d/empty.json"
    run "$AN" -q --annotate "$d/ann.json" "$d/empty.json"
    [ "$status" -eq 3 ]     # no GPU activity: nothing decided
    [ "$(json_get "$d/ann.json" 'r')" = "{'schemaVersion': 1, 'traceEvents': []}" ]
    printf '[{"ph": "M", "name": "process_name"}]' >"$d/bare.json"
    run "$AN" -q --annotate "$d/ann2.json" "$d/bare.json"
    [ "$status" -eq 3 ]
    [ "$(json_get "$d/ann2.json" 'r')" = "[{'ph': 'M', 'name': 'process_name'}]" ]
}

@test "analyzer: DOT and built-in SVG draw the false dependencies distinctly" {
    local d="$BATS_TEST_TMPDIR"
    run "$AN" -q --dot "$d/g.dot" --svg "$d/g.svg" --svg-engine builtin "$FIX/false_deps/trace.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"SVG drawn by the built-in layout"* ]]
    [ "$(grep -c 'color=red, fontcolor=red, style=dashed' "$d/g.dot")" -eq 3 ]
    [ "$(grep -cE '^    g0_n[0-9]+ -> g0_n[0-9]+;$' "$d/g.dot")" -eq 4 ]
    python3 - "$d/g.svg" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
false = [g for g in root.iter(ns + "g") if g.get("class") == "false-dependency"]
assert len(false) == 3, len(false)
assert len(list(root.iter(ns + "rect"))) == 1 + 5
EOF
    if ! command -v dot >/dev/null; then
        run "$AN" -q --svg "$d/x.svg" --svg-engine dot "$FIX/false_deps/trace.json"
        [ "$status" -eq 1 ]
        [[ "$output" == *"Graphviz dot is not on PATH"* ]]
    fi
}

@test "analyzer: malformed traces: one line with the file and the byte offset, exit 1" {
    local m="$FIX/malformed"
    one_error_line "$m/empty.json: byte 0:" "found the end of the input" "$m/empty.json"
    one_error_line "$m/truncated.json: byte 66:" "expected ',' or '}' in an object, found the end of the input (truncated?)" "$m/truncated.json"
    one_error_line "$m/bad_number.json: byte 35:" 'expected a number, found "01"' "$m/bad_number.json"
    one_error_line "$m/unterminated_string.json: byte 30:" "expected '\"' to end the string" "$m/unterminated_string.json"
    one_error_line "$m/control_char.json: byte 28:" "control character 0x0a" "$m/control_char.json"
    one_error_line "$m/trailing.json: byte 20:" "expected the end of the input after the top-level value, found 'x'" "$m/trailing.json"
    one_error_line "$m/not_json.json: byte 0:" "found 'h'" "$m/not_json.json"
    one_error_line "$m/bad_escape.json: byte 29:" "expected an escape character" "$m/bad_escape.json"
    one_error_line "$m/kernel_no_ts.json: byte 17:" 'without a numeric "ts"' "$m/kernel_no_ts.json"
    one_error_line "$m/bad_graph_id.json: byte 99:" '"graph id": expected a non-negative integer' "$m/bad_graph_id.json"
    one_error_line "$m/long_number.json: byte 35:" "number longer than 64 characters" "$m/long_number.json"
    one_error_line "$m/event_not_object.json: byte 17:" "expected an event object" "$m/event_not_object.json"
    one_error_line "$m/missing_colon.json: byte 23:" "expected ':' after a member name" "$m/missing_colon.json"
    one_error_line "$m/trailing_comma.json: byte 28:" "expected a member name" "$m/trailing_comma.json"
    one_error_line "$m/bad_literal.json: byte 35:" "expected a value" "$m/bad_literal.json"
}

@test "analyzer: malformed graph files: one line with the file and the byte offset, exit 1" {
    local m="$FIX/malformed" t="$FIX/false_deps/trace.json"
    one_error_line "$m/graph_cycle.json: byte 31:" "node 0 is on a dependency cycle" "$t" "$m/graph_cycle.json"
    one_error_line "$m/graph_bad_index.json: byte 54:" 'node "index" 5: expected each of 0..1 exactly once (out of range)' "$t" "$m/graph_bad_index.json"
    one_error_line "$m/graph_dup_index.json: byte 54:" "(used twice)" "$t" "$m/graph_dup_index.json"
    one_error_line "$m/graph_bad_dep.json: byte 61:" "dependency on node 9: no such index" "$t" "$m/graph_bad_dep.json"
    one_error_line "$m/graph_no_nodes.json: byte 0:" 'without "nodes"' "$t" "$m/graph_no_nodes.json"
    one_error_line "$m/graph_bad_id.json: byte 18:" '"exec_graph_id": expected a non-negative integer or null' "$t" "$m/graph_bad_id.json"
    one_error_line "$m/graph_dup_node_id.json: byte 58:" "its node_id 3 is another node's too" "$t" "$m/graph_dup_node_id.json"
    one_error_line "$m/graph_not_object.json: byte 1:" "expected a graph data object" "$t" "$m/graph_not_object.json"
}

@test "analyzer: hostile input: deep nesting, huge string, bad gzip, missing file, unwritable output" {
    local d="$BATS_TEST_TMPDIR"
    python3 -c 'print("{\"traceEvents\": [{\"args\": {\"x\": " + "[" * 5000 + "]" * 5000 + "}}]}")' >"$d/deep.json"
    one_error_line "$d/deep.json: byte 1056:" "nesting deeper than 1024 levels" "$d/deep.json"
    python3 -c 'print("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 2, \"name\": \"" + "k" * 3000000 + "\"}]}")' >"$d/huge.json"
    run "$AN" "$d/huge.json"
    [ "$status" -eq 3 ]     # one kernel, no replay: undecided
    [[ "$output" == *"1 GPU records"* ]]
    gzip -c "$FIX/false_deps/trace.json" >"$d/t.json.gz"
    head -c 200 "$d/t.json.gz" >"$d/cut.json.gz"
    one_error_line "$d/cut.json.gz: compressed byte 200:" "the gzip stream is truncated" "$d/cut.json.gz"
    python3 -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[40]^=0xff; b[41]^=0xff; open(sys.argv[2],"wb").write(b)' "$d/t.json.gz" "$d/bad.json.gz"
    one_error_line "$d/bad.json.gz: compressed byte" "corrupt gzip data" "$d/bad.json.gz"
    one_error_line "$d/nonexistent.json: cannot read" "No such file or directory" "$d/nonexistent.json"
    one_error_line "$d: cannot read" "it is a folder, not a file" "$d"
    [ "$(grep -o -- "$d" "$BATS_TEST_TMPDIR/err" | wc -l)" -eq 1 ]     # named once
    if [ -w /dev/full ]; then
        one_error_line "/dev/full: write failed" "disk full" -q --json /dev/full "$FIX/false_deps/trace.json"
    fi
}

@test "analyzer: reading 1, 2 or 7 bytes at a time gives the same report" {
    local d="$BATS_TEST_TMPDIR" f
    for f in false_deps/trace.json true_deps/trace.json kineto_nokeys.json; do
        an_ok -q --json "$d/ref.json" "$FIX/$f" "$FIX/true_deps/graph.json" "$FIX/false_deps/trace.graphs"
        for b in 1 2 7; do
            an_ok -q --read-buffer "$b" --json "$d/b$b.json" "$FIX/$f" "$FIX/true_deps/graph.json" "$FIX/false_deps/trace.graphs"
            cmp "$d/ref.json" "$d/b$b.json"
        done
    done
}

@test "analyzer: property test: no false dependency between nodes that have a path (random DAGs)" {
    run python3 "$FIX/prop_deps.py" "$AN" --cases "$PROP_CASES" --seed 11
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"$PROP_CASES cases"*": ok"* ]]
}

@test "analyzer: generated Kineto trace (2 MB, graph keys and channels) with its graph files" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$FIX/gen_kineto.py" "$d/k.json.gz" --mb 2 --seed 5
    run "$AN" --json "$d/r.json" "$d/k.json.gz"
    [ "$status" -eq 0 ]
    [[ "$output" == *"(Kineto, gzip, "* ]]
    [ "$(json_get "$d/r.json" 'len(r["groups"]), all(g["graph_file"] for g in r["groups"])')" = "(3, True)" ]
    [ "$(json_get "$d/r.json" 'sum(g["serializations"]["true"] for g in r["groups"]) > 0')" = "True" ]
}

# Traces the H100 produced (tests/analyzer/h100/, 2026-11-22): the shim's own trace of
# tests/gpu/branches_prog.cu (16 graphed branches, 11 replays) with 8 and with 1
# connection, and PyTorch 2.11 profiler traces (no graph or channel keys).
@test "analyzer: H100 shim traces (16 branches; 8 and 1 connections): every graph record mapped, serializations classified, none false with a path" {
    local c
    for c in 8 1; do
        run "$AN" --json "$BATS_TEST_TMPDIR/r$c.json" "$FIX/h100/branches_c$c.json.gz"
        echo "$output" | head -n 12
        # partial: the program's eager multi-stream warm-up has no section 1d records
        [ "$status" -eq 3 ]
        [ "$(json_get "$BATS_TEST_TMPDIR/r$c.json" "r['status']")" = partial ]
        [ "$(json_get "$BATS_TEST_TMPDIR/r$c.json" "r['groups'][0]['replay_count']")" -eq 11 ]
        [ "$(json_get "$BATS_TEST_TMPDIR/r$c.json" "r['groups'][0]['serializations']['unclassified']")" -eq 0 ]
        [ "$(json_get "$BATS_TEST_TMPDIR/r$c.json" "r['groups'][0]['serializations']['true']")" -gt 0 ]
        run python3 "$TOP/scripts/trace_check.py" falsedeps "$BATS_TEST_TMPDIR/r$c.json"
        echo "$output"
        [ "$status" -eq 0 ]
    done
    # with one connection every graph record ran on one channel
    { "$AN" "$FIX/h100/branches_c1.json.gz" || true; } | grep -q 'channel occupancy (busy / replay span): device 0 channel 0 [0-9.]*%$'
}

# The shim's trace (AUTOGRAPH=off, so eager; section 1d records) of the same program,
# 10 timed iterations, kernels of ~36 us: with 1 connection all 16 streams share
# channel 0, each stream's first kernel is queued behind the previous stream's second
# (15 per window); with 8 connections the host's submission is slower than the
# channels (no false dependency).
@test "analyzer: H100 eager traces (16 streams; 1 and 8 connections): queued false dependencies with 1 connection only, none with a path" {
    local c
    for c in 1 8; do
        run "$AN" --json "$BATS_TEST_TMPDIR/e$c.json" "$FIX/h100/eager_c$c.json.gz"
        echo "$output" | grep -E '^eager|serializations' | head -n 6
        [ "$status" -eq 0 ]
        run python3 "$TOP/scripts/trace_check.py" eagerdeps "$FIX/h100/eager_c$c.json.gz" \
            "$BATS_TEST_TMPDIR/e$c.json"
        echo "$output"
        [ "$status" -eq 0 ]
    done
    json_get "$BATS_TEST_TMPDIR/e1.json" 'sorted({s["kind"] for g in r["groups"] for p in g["replays"] for s in p["serializations"] if s["class"] == "false"})'
    [ "$(json_get "$BATS_TEST_TMPDIR/e1.json" 'sorted({s["kind"] for g in r["groups"] for p in g["replays"] for s in p["serializations"] if s["class"] == "false"})')" = "['queued']" ]
    [ "$(json_get "$BATS_TEST_TMPDIR/e1.json" 'max(g["serializations"]["false"] / g["replay_count"] for g in r["groups"])')" = "15.0" ]
    [ "$(json_get "$BATS_TEST_TMPDIR/e8.json" 'sum(g["serializations"]["false"] for g in r["groups"])')" -eq 0 ]
}

@test "analyzer: H100 PyTorch profiler traces (model and loop): degraded report, says what it cannot decide, lanes" {
    local t
    for t in torch_model torch_loop; do
        run "$AN" "$FIX/h100/$t.json.gz"
        echo "$output" | head -n 14
        [ "$status" -eq 3 ]
        echo "$output" | grep -q '^trace: .* (Kineto, '
        echo "$output" | grep -q '^cannot decide:'
        echo "$output" | grep -q 'no GPU record has "graph id" and "graph node id"'
        echo "$output" | grep -q '^  device 0 stream [0-9]*: [0-9]* records'
    done
}

# ---- eager windows (analyzer/FORMAT.md, section 1d and "Eager windows") -------------
# tests/analyzer/gen_eager.py simulates the program: kernel A (stream 14, 20 us), then
# B (stream 15), both on channel 3 (FIFO), so B starts exactly at A's end.

# eager_sers FILE: "class from_corr->to_corr from_stream->to_stream" per serialization
eager_sers() {
    json_get "$1" '" ".join("%s %d->%d %d->%d" % (s["class"], s["from_correlation"], s["to_correlation"], s["from_stream"], s["to_stream"]) for g in r["groups"] if "eager_window" in g for x in g["replays"] for s in x["serializations"])'
}

@test "analyzer: eager window: B on stream 15 starts at A's end on one channel, no event edge: 1 false" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$GEN" scenario "$d/t.json" two_streams
    run "$AN" --json "$d/r.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"eager window "*": 1 windows, 2 records on 2 streams, 0 edges (device 0)"* ]]
    [[ "$output" == *"0 true, 1 false, 0 ambiguous"* ]]
    [[ "$output" == *"#0 [stream 14] producer_a -> #1 [stream 15] consumer_b on device 0 channel 3: 1/1 windows, B waited 16.000 us mean"* ]]
    [[ "$output" == *"estimated span without false dependencies: mean 20.000 us; gain 5.000 us"* ]]
    [[ "$output" != *"cannot decide"* ]]
    [ "$(eager_sers "$d/r.json")" = "false 101->102 14->15" ]
    [ "$(json_get "$d/r.json" 'r["groups"][0]["eager_window"]["records"], r["groups"][0]["eager_window"]["streams"], "graph_file" in r["groups"][0]')" = "(2, 2, False)" ]
    [ "$(json_get "$d/r.json" 'r["eager_windows"]')" = "{'windows': 1, 'groups': 1, 'records': 2, 'host_syncs': 0, 'event_edges': 0, 'implicit_edges': 0, 'submission': {'api_records': 2, 'host_estimated': 0, 'unknown': 0}}" ]
}

@test "analyzer: eager window: the same with an event record on 14 and a wait on 15 between them: true" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$GEN" scenario "$d/t.json" two_streams --wait
    run "$AN" --json "$d/r.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"1 true, 0 false, 0 ambiguous"* ]]
    [ "$(eager_sers "$d/r.json")" = "true 101->104 14->15" ]
    [ "$(json_get "$d/r.json" 'r["eager_windows"]["event_edges"], r["groups"][0]["eager_window"]["edges"]')" = "(1, 1)" ]
}

@test "analyzer: eager window: streams without stream_info (legacy default stream) are never false" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$GEN" scenario "$d/t.json" two_streams --legacy
    run "$AN" --json "$d/r.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"1 true, 0 false, 0 ambiguous"* ]]
    [[ "$output" == *"2 streams with eager records have no stream_info"* ]]
    [ "$(eager_sers "$d/r.json")" = "true 101->102 14->15" ]
    [ "$(json_get "$d/r.json" 'r["eager_windows"]["implicit_edges"]')" = "1" ]
}

@test "analyzer: eager windows: host synchronizations split them" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$GEN" scenario "$d/t.json" syncs
    run "$AN" --json "$d/r.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"eager windows: 3 windows of 5 records in 3 shapes; 2 host syncs"* ]]
    [ "$(json_get "$d/r.json" 'sorted((x["correlation"], x["records"]) for g in r["groups"] for x in g["replays"])')" = "[(101, 2), (104, 2), (107, 1)]" ]
    # A -> B is the only false one; C and D (after the sync) are not compared with them
    [ "$(eager_sers "$d/r.json" | tr ' ' '\n' | grep -c '^false$')" -eq 1 ]
}

@test "analyzer: eager windows of one shape form one group, counted; another shape another" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$GEN" scenario "$d/t.json" repeat --n 5
    run "$AN" --json "$d/r.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *": 5 windows, 2 records on 2 streams, 0 edges (device 0)"* ]]
    [[ "$output" == *": 5/5 windows, B waited 16.000 us mean"* ]]
    [ "$(json_get "$d/r.json" '[(g["replay_count"], g["serializations"]["false"]) for g in r["groups"]]')" = "[(5, 5)]" ]
    python3 "$GEN" scenario "$d/t2.json" repeat --n 6 --every 3
    an_ok -q --json "$d/r2.json" "$d/t2.json"
    [ "$(json_get "$d/r2.json" '[(g["replay_count"], g["eager_window"]["edges"], g["serializations"]["false"], g["serializations"]["true"]) for g in r["groups"]]')" = "[(4, 0, 4, 0), (2, 1, 0, 2)]" ]
    [ "$(json_get "$d/r2.json" 'r["eager_windows"]["windows"], r["eager_windows"]["groups"]')" = "(6, 2)" ]
}

@test "analyzer: a long eager trace without host syncs is cut into sub-windows" {
    local d="$BATS_TEST_TMPDIR"
    # 1000 records on two streams, each queued back to back: 998 true serializations in
    # one window; cut after 300 records, 4 windows and 2 fewer per cut
    python3 "$GEN" scenario "$d/t.json" long --n 1000
    an_ok -q --json "$d/one.json" "$d/t.json"
    [ "$(json_get "$d/one.json" 'r["eager_windows"]["windows"], sum(g["serializations"]["true"] for g in r["groups"])')" = "(1, 998)" ]
    run "$AN" --window-max 300 --json "$d/r.json" "$d/t.json"
    echo "$output" | head -n 12
    [ "$status" -eq 0 ]
    [[ "$output" == *"3 times an eager window reached 300 records"* ]]
    [ "$(json_get "$d/r.json" '[x["records"] for g in r["groups"] for x in g["replays"]], sum(g["serializations"]["true"] for g in r["groups"]), sum(g["serializations"]["false"] for g in r["groups"])')" = "([300, 300, 300, 100], 992, 0)" ]
    # the default limit: 65536 records
    python3 "$GEN" scenario "$d/l.json" long --n 66000 --no-driver
    an_ok -q --json "$d/l.out.json" "$d/l.json"
    [ "$(json_get "$d/l.out.json" 'sorted(x["records"] for g in r["groups"] for x in g["replays"])')" = "[464, 65536]" ]
}

# A host that forks 4 streams one after the other (tests/analyzer/gen_eager.py, paced):
# the span without false dependencies is set by when the host submitted each stream's
# first kernel.  From the API records, or with none, from the host times of the stream
# waits and the synchronization alone (interpolated by correlation; exact here, every
# call taking as long), the estimate is the span the same program has with a channel
# per stream.
@test "analyzer: eager windows paced by the host: the estimate is the span with a channel per stream, with or without API records" {
    local d="$BATS_TEST_TMPDIR" v sep
    python3 "$GEN" scenario "$d/sep.json" paced --n 4 --separate
    an_ok -q --json "$d/sep.out.json" "$d/sep.json"
    sep=$(json_get "$d/sep.out.json" 'r["groups"][0]["mean_span_us"]')
    for v in "" --no-driver; do
        python3 "$GEN" scenario "$d/p.json" paced --n 4 $v
        run "$AN" --json "$d/r.json" "$d/p.json"
        echo "$output" | grep -E 'submission|estimated span|when some'
        [ "$status" -eq 0 ]
        [ "$(json_get "$d/r.json" 'r["groups"][0]["serializations"]["false"]')" -eq 3 ]
        [ "$(json_get "$d/r.json" 'r["groups"][0]["mean_estimated_span_us"]')" = "$sep" ]
    done
    [ "$sep" = 96.0 ]
    [ "$(json_get "$d/r.json" 'tuple(r["eager_windows"]["submission"].values())')" = "(0, 8, 0)" ]
    [[ "$output" == *"when some eager records were submitted: 8 eager records have no API record"* ]]
    # every other launch without its API record: API records and waits read together
    python3 "$GEN" scenario "$d/p.json" paced --n 4
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); api = [e for e in d["traceEvents"] if e.get("cat") == "cuda_driver"]
d["traceEvents"] = [e for e in d["traceEvents"] if e not in api[::2]]
json.dump(d, open(sys.argv[1], "w"))' "$d/p.json"
    an_ok -q --json "$d/r.json" "$d/p.json"
    [ "$(json_get "$d/r.json" 'tuple(r["eager_windows"]["submission"].values())')" = "(4, 4, 0)" ]
    [ "$(json_get "$d/r.json" 'r["groups"][0]["mean_estimated_span_us"]')" = "$sep" ]
}

@test "analyzer: eager multi-stream records without section 1d records: cannot decide, says why" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$GEN" scenario "$d/t.json" two_streams --no-order
    run "$AN" --json "$d/r.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 3 ]
    [[ "$output" == *"eager multi-stream records cannot be classified"* ]]
    [[ "$output" == *"AUTOGRAPH_TRACE"* ]]
    [[ "$output" != *"eager window"* ]]
    [ "$(json_get "$d/r.json" '"eager_windows" in r, [n["what"] for n in r["cannot_decide"]][-1]')" = "(False, 'true or false dependencies of eager multi-stream records')" ]
}

@test "analyzer: malformed section 1d values: one line with the byte offset, exit 1; unused keys ignored" {
    local d="$BATS_TEST_TMPDIR" kind want off phrase
    for kind in wait_sync_id record_corr info_flags info_stream sync_event driver_dur wait_ts; do
        want=$(python3 "$GEN" malformed "$d/$kind.json" "$kind")
        off=${want%%$'\t'*} phrase=${want#*$'\t'}
        one_error_line "$d/$kind.json: byte $off:" "$phrase" "$d/$kind.json"
    done
    for kind in ignored_graph_id ignored_sync_id ignored_unknown_sync; do
        [ "$(python3 "$GEN" malformed "$d/$kind.json" "$kind")" = "-" ]
        run "$AN" -q "$d/$kind.json"
        echo "$kind: $output"
        [ "$status" -eq 0 ] || [ "$status" -eq 3 ]
    done
}

@test "analyzer: eager windows in DOT, built-in SVG and the annotated trace" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$GEN" scenario "$d/t.json" repeat --n 6 --every 3
    run "$AN" -q --dot "$d/g.dot" --svg "$d/g.svg" --svg-engine builtin --annotate "$d/ann.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 0 ]
    cat "$d/g.dot"
    [ "$(grep -c '^  subgraph cluster_' "$d/g.dot")" -eq 2 ]
    grep -q 'label="eager window [0-9a-f]\{16\} (device 0): 2 records on 2 streams, 0 edges, 4 windows in the trace"' "$d/g.dot"
    grep -qF 'g0_n0 [label="#0 [stream 14] producer_a"]' "$d/g.dot"
    [ "$(grep -c 'color=red, fontcolor=red, style=dashed' "$d/g.dot")" -eq 1 ]
    grep -q 'label="false 4/4' "$d/g.dot"
    [ "$(grep -cE '^    g1_n0 -> g1_n1;$' "$d/g.dot")" -eq 1 ]
    python3 - "$d/g.svg" "$d/t.json" "$d/ann.json" <<'EOF'
import collections, json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
false = [g for g in root.iter(ns + "g") if g.get("class") == "false-dependency"]
assert len(false) == 1, len(false)
orig, ann = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ev = ann["traceEvents"]
assert ev[:len(orig["traceEvents"])] == orig["traceEvents"]
flows = collections.Counter(e["cat"] for e in ev[len(orig["traceEvents"]):] if e["ph"] == "s")
print(flows)
assert flows == {"autograph.false_dependency": 4, "autograph.true_dependency": 2}, flows
EOF
}

@test "analyzer: eager trace read 1, 2 or 7 bytes at a time gives the same report" {
    local d="$BATS_TEST_TMPDIR" b
    python3 "$GEN" scenario "$d/t.json" repeat --n 4 --every 2
    an_ok -q --json "$d/ref.json" "$d/t.json"
    for b in 1 2 7; do
        an_ok -q --read-buffer "$b" --json "$d/b$b.json" "$d/t.json"
        cmp "$d/ref.json" "$d/b$b.json"
    done
}

@test "analyzer: eager property test: classes match the simulated program (random streams, events, syncs, sub-windows)" {
    run python3 "$GEN" prop "$AN" --cases "$PROP_CASES" --seed 7
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"$PROP_CASES cases ("*" exact), "*": ok"* ]]
}

@test "analyzer: eager records and a graph launch: only a graph that had ended can hold a record back" {
    local d="$BATS_TEST_TMPDIR"
    # A (stream 14) -> graph G on 14 -> B (14); C (stream 16) shares channel 3 with A and
    # B: A -> C is false (C was ready long before A ended); C -> B is ambiguous (B may
    # have waited for G, whose record names an internal stream, and G ended as C did)
    python3 "$GEN" scenario "$d/t.json" graph_between
    run "$AN" --json "$d/r.json" "$d/t.json"
    echo "$output"
    [ "$status" -eq 3 ]     # exec graph 7 has no graph file
    [ "$(eager_sers "$d/r.json")" = "false 101->103 14->16 ambiguous 103->104 16->14" ]
    [[ "$output" == *"exec graph 7: 1 replays, no graph file"* ]]
}

# ---- output contract (analyzer/FORMAT.md, "Status and exit codes") -----------------

@test "analyzer: exit 0 when decided, 3 when undecided or partial; status per question in text and JSON; documented in --help" {
    local d="$BATS_TEST_TMPDIR"
    run "$AN" --json "$d/r.json" "$FIX/false_deps/trace.json"
    [ "$status" -eq 0 ]
    [[ "$output" == *"status: decided (dependencies decided, critical paths decided, estimated spans decided)"* ]]
    [ "$(json_get "$d/r.json" 'r["status"], r["questions"]')" = "('decided', {'dependencies': 'decided', 'critical_paths': 'decided', 'estimated_spans': 'decided'})" ]
    run "$AN" --json "$d/u.json" "$FIX/kineto_nokeys.json"
    [ "$status" -eq 3 ]
    [ "$(json_get "$d/u.json" 'r["status"], "hint" in r')" = "('undecided', True)" ]
    run "$AN" --json "$d/p.json" "$FIX/h100/branches_c8.json.gz"
    [ "$status" -eq 3 ]
    [ "$(json_get "$d/p.json" 'r["status"]')" = "partial" ]
    run "$AN" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"exit status: 0 the report decides every question"*"3 it leaves some or all undecided"*"1 error, 2 usage error"* ]]
    grep -q '^| 3 |' "$TOP/analyzer/FORMAT.md"
}

@test "analyzer: JSON that is not a trace is an error (exit 1, one line)" {
    local d="$BATS_TEST_TMPDIR"
    printf '{"foo":1}' >"$d/obj.json"
    one_error_line "$d/obj.json: byte 0:" 'not a trace: a JSON object without "traceEvents"' "$d/obj.json"
    printf '[]' >"$d/arr.json"
    one_error_line "$d/arr.json: byte 0:" "not a trace: an empty array (no events)" "$d/arr.json"
    printf '{"traceEvents": []}' >"$d/none.json"
    run "$AN" "$d/none.json"
    [ "$status" -eq 3 ]
}

@test "analyzer: - reads the standard input, with --annotate too; the same report as the file" {
    local d="$BATS_TEST_TMPDIR"
    "$AN" -q --json "$d/file.json" --annotate "$d/file.ann.json" "$FIX/false_deps/trace.json" "$FIX/false_deps/trace.graphs"
    "$AN" -q --json "$d/stdin.json" --annotate "$d/stdin.ann.json" - "$FIX/false_deps/trace.graphs" <"$FIX/false_deps/trace.json"
    [ "$(json_get "$d/stdin.json" 'r["input"]["trace"]')" = "-" ]
    [ "$(json_get "$d/stdin.json" 'r["groups"]')" = "$(json_get "$d/file.json" 'r["groups"]')" ]
    cmp "$d/file.ann.json" "$d/stdin.ann.json"
    gzip -c "$FIX/kineto_nokeys.json" | { "$AN" -q --json "$d/gz.json" - || [ $? -eq 3 ]; }
    [ "$(json_get "$d/gz.json" 'r["input"]["gzip"], r["input"]["gpu_records"]')" = "(True, 7)" ]
    printf '{"foo":1}' | { run "$AN" -; [ "$status" -eq 1 ]; [[ "$output" == "autograph-analyze: -: byte 0: not a trace"* ]]; }
    [ -z "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'autograph-analyze-*' -newer "$d/file.json" 2>/dev/null)" ]
}

@test "analyzer: --annotate writes valid JSON on every fixture, and the analyzer reads it back" {
    local d="$BATS_TEST_TMPDIR" f n=0 s
    for s in branches alike ambiguous eager names; do
        python3 "$FIX/gen_kineto_graph.py" "$d/gen_$s" "$s"
    done
    while IFS= read -r f; do
        n=$((n + 1))
        an_ok -q --json "$d/a.json" --annotate "$d/ann$n.json" "$f"
        python3 -m json.tool "$d/ann$n.json" >/dev/null || { echo "invalid JSON: $f"; false; }
        an_ok -q --no-graphs --json "$d/b.json" "$d/ann$n.json" || { echo "not read back: $f"; false; }
        [ "$(json_get "$d/a.json" 'r["input"]["gpu_records"]')" = "$(json_get "$d/b.json" 'r["input"]["gpu_records"]')" ]
    done < <(find "$FIX" "$d" -name '*.json' -o -name '*.json.gz' | grep -v -e /malformed/ -e /corpus/ -e '\.graphs/' -e '/graphs/' -e '/ann[0-9]*\.json$' -e '/[ab]\.json$' -e '/graph\.json$' -e '/expected\.json$' | sort)
    echo "$n fixtures"
    [ "$n" -ge 13 ]
}

# ---- Kineto replays without node ids, mapped by name and order (node_map.c) ---------

@test "analyzer: Kineto graph replays without node ids: mapped to the graph data by name and order, false dependencies inferred" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$FIX/gen_kineto_graph.py" "$d/b" branches
    run "$AN" --json "$d/r.json" "$d/b/trace.json" "$d/b/graphs"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"18 exact, 0 by stream, 0 ambiguous, 0 unmapped records (confidence 1.00)"* ]]
    [[ "$output" == *"10 true, 4 false, 0 ambiguous"* ]]
    [[ "$output" != *"to decide, turn on"* ]]
    [ "$(json_get "$d/r.json" 'sorted((p["from_node"], p["to_node"]) for p in r["groups"][0]["false_dependencies"])')" = "[(1, 4), (1, 6)]" ]
    [ "$(json_get "$d/r.json" 'float(r["groups"][0]["mapping"]["confidence"]), r["groups"][0]["mean_estimated_span_us"]')" = "(1.0, 30.0)" ]
    # one kernel name for all branches: alike roots are interchangeable (exact); the
    # second kernels hang from different roots, so which branch a record continues is
    # told by its stream (the first of two starting together; the second is then exact)
    python3 "$FIX/gen_kineto_graph.py" "$d/a" alike
    run "$AN" --json "$d/a.json" "$d/a/trace.json" "$d/a/graphs"
    [ "$status" -eq 0 ]
    [[ "$output" == *"14 exact, 4 by stream, 0 ambiguous"* ]]
    [ "$(json_get "$d/a.json" 'r["groups"][0]["serializations"]')" = "{'true': 10, 'false': 4, 'ambiguous': 0, 'unclassified': 0}" ]
    # two roots of one name with different descendants: ambiguous, partial
    python3 "$FIX/gen_kineto_graph.py" "$d/m" ambiguous
    run "$AN" --json "$d/m.json" "$d/m/trace.json" "$d/m/graphs"
    echo "$output"
    [ "$status" -eq 3 ]
    [ "$(json_get "$d/m.json" 'r["groups"][0]["mapping"]["ambiguous"], r["groups"][0]["serializations"]["ambiguous"], r["questions"]["dependencies"]')" = "(2, 2, 'partial')" ]
    # without the graph data: undecided, and the one line that says what to turn on
    run "$AN" "$d/b/trace.json"
    [ "$status" -eq 3 ]
    [ "$(echo "$output" | grep -c '^to decide, turn on: ')" -eq 1 ]
}

# PyTorch's real names: mangled in the graph data, demangled in the trace (or mangled,
# --mangled), one template's two instantiations, anonymous namespaces, a copy node the
# driver ran as memcpy32_post.  Each branch's chain stays on its stream.
@test "analyzer: Kineto replays without node ids: graph data's mangled names demangled, copy node as the driver's copy kernel" {
    local d="$BATS_TEST_TMPDIR" m
    for m in "" --mangled; do
        python3 "$FIX/gen_kineto_graph.py" "$d/n$m" names $m
        run "$AN" --json "$d/n$m.json" --annotate "$d/n$m.ann.json" "$d/n$m/trace.json" "$d/n$m/graphs"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"14 exact, 4 by stream, 0 ambiguous, 0 unmapped records (confidence 0.78)"* ]]
        [ "$(json_get "$d/n$m.json" 'r["status"], r["groups"][0]["serializations"]')" = "('decided', {'true': 16, 'false': 0, 'ambiguous': 0, 'unclassified': 0})" ]
        # every dependency arrow joins records of one stream, or one on stream 7
        [ "$(json_get "$d/n$m.ann.json" 'sorted({(e["tid"], f["tid"]) for e in r["traceEvents"] if e.get("cat") == "autograph.true_dependency" and e["ph"] == "s" for f in r["traceEvents"] if f.get("cat") == e["cat"] and f["ph"] == "f" and f["id"] == e["id"]})')" = "[(7, 7), (7, 20), (7, 21), (20, 7), (20, 20), (21, 7), (21, 21)]" ]
    done
}

# A mangled name of a few hundred bytes can stand for gigabytes (nested back-references):
# given up on after a short while, said in the report, the other names still demangled.
@test "analyzer: a hostile mangled kernel name in graph data is given up on quickly, the rest still maps" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$FIX/gen_kineto_graph.py" "$d/n" names
    python3 -c '
import json, sys
def ref(i):                     # the i-th substitution: S_, S0_ .. SZ_, S10_ ..
    if i == 0:
        return "S_"
    i, seq = i - 1, ""
    while True:
        seq = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i % 36] + seq
        i //= 36
        if i == 0:
            return "S%s_" % seq
name = "_Z1f1a"
for k in range(40):            # b<a, a>, c<b<a, a>, b<a, a> >, ...: doubles each time
    name += "1%sI%s%sE" % ("bcdefghijklmnopqrstuvwxyz"[k % 25], ref(2 * k), ref(2 * k))
node = {"index": 0, "node_type": "kernel", "kernel_name": name, "dependencies": [],
        "dependents": []}
json.dump({"exec_graph_id": None, "nodes": [node]}, open(sys.argv[1], "w"))' "$d/n/graphs/0hostile.json"
    run timeout 60 "$AN" --json "$d/r.json" "$d/n/trace.json" "$d/n/graphs"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"- the names of some kernels: 1 mangled kernel names took too long to demangle"* ]]
    [[ "$output" == *"14 exact, 4 by stream, 0 ambiguous, 0 unmapped records"* ]]
}

@test "analyzer: Kineto cuda_sync events (Stream Wait Event, Context Sync) order eager streams" {
    local d="$BATS_TEST_TMPDIR"
    python3 "$FIX/gen_kineto_graph.py" "$d/n" eager
    python3 "$FIX/gen_kineto_graph.py" "$d/w" eager --wait
    run "$AN" --json "$d/n.json" "$d/n/trace.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(eager_sers "$d/n.json")" = "false 1->4 14->15" ]
    run "$AN" --json "$d/w.json" "$d/w/trace.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(eager_sers "$d/w.json")" = "true 1->4 14->15" ]
    [ "$(json_get "$d/w.json" 'r["eager_windows"]["event_edges"], r["eager_windows"]["host_syncs"]')" = "(1, 1)" ]
}
