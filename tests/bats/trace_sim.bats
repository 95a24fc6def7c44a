#!/usr/bin/env bats
# trace_sim.bats -- AUTOGRAPH_TRACE on the CPU simulator: the Chrome trace the shim
# writes from CUPTI activity records (shim/trace_cupti.c, trace_json.c), against the
# stand-in libcupti (build/sim/libcupti.so.13: tests/sim/cupti_activity_stand_in.c),
# which turns every kernel, copy, memset and submitting call the simulator runs into
# CUPTI records (tests/sim/sim_activity.c: logical clock, stream sN on channel
# N mod SIM_CHANNELS, graph ids as CUPTI gives them).  The GPU twin is tests/gpu/trace.bats.
#
# Checks (scripts/trace_check.py, independent of the shim and of the analyzer):
#   - the file is valid JSON per analyzer/FORMAT.md 1c (otherData, every GPU record's
#     keys, ts/dur with exactly 3 decimals) and the program's results and SIM_LOG are
#     the same as without the shim;
#   - one kernel record per kernel the program launched (= kernel lines of SIM_LOG),
#     graph kernel records = the shim's launches_graphed, each naming by its graph
#     node id a node of the right kind in <trace>.graphs/ (the shim's graphs, and the
#     program's own: graph_basic); every GPU record has a driver API record with its
#     correlation;
#   - build/autograph-analyze (when built) reads it, finds the graph files by itself,
#     and every false dependency it reports (fork-join program, 1 channel) is between
#     nodes with no path in the graph (and the checker rejects a planted one that has
#     a path); fewer false serializations with more channels;
#   - a long run streams: buffers are completed and reused, at most 2 allocated;
#   - the stream order (FORMAT.md 1d; the stand-in reports the simulator's eager event
#     records, stream waits, synchronizes, streams and contexts): one "event record" per
#     eager cuEventRecord and one "stream wait event" per cuStreamWaitEvent (counted in
#     SIM_LOG), each wait naming an earlier record by sync id, the host syncs, stream_info
#     per created stream (also those created before tracing started), correlations in
#     call order; engine off and on; a kind CUPTI refuses (SIM_CUPTI_REFUSE) is named in
#     one line and the trace lacks only it; a runtime program's API records
#     (SIM_CUPTI_API=runtime) are written as cuda_runtime;
#   - tests/bench/gpu_busy.py (GPU busy time per step): exact figures on a planted
#     trace; the same GPU records a step in eager and graphed simulator traces;
#   - trace_check.py eagerdeps (the eager windows of FORMAT.md 3 rebuilt from the trace)
#     on hand-written reports: pairs without a path pass, a planted pair with a path
#     (stream order, event, through a wait, the legacy stream) fails it; on
#     autograph-analyze's own eager report once it writes one.
#
# Reproduce by hand (the failures print the command), e.g.
#   LD_LIBRARY_PATH=build/sim LD_PRELOAD=$PWD/build/libautograph.so \
#       AUTOGRAPH_TRACE=/tmp/t.json build/sim/progs/introspect 20
#   scripts/trace_check.py trace /tmp/t.json; build/autograph-analyze /tmp/t.json

source "$BATS_TEST_DIRNAME/sim_run.bash"

setup() {
    sim_setup introspect TRACE_
    nm -D build/sim/libcupti.so.13 2>/dev/null | grep -q ' T cuptiActivityEnable$' ||
        skip "the CUPTI stand-in has no activity API (built without cupti.h)"
    analyzer=$PWD/build/autograph-analyze
}

# traced TAG PROG [VAR=VALUE...] -- ARGS... : PROG without the shim (TAG_plain) and with
# it and AUTOGRAPH_TRACE=$tmp/TAG.json (TAG; summary in $tmp/TAG.sum); both exit 0 with
# the same stdout and SIM_LOG
traced() {
    local tag=$1 prog=$2 vars=()
    shift 2
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    sim_run "${tag}_plain" "$prog" "${vars[@]}" -- "$@"
    sim_run "$tag" "$prog" LD_PRELOAD="$shim" AUTOGRAPH_TRACE="$tmp/$tag.json" \
        AUTOGRAPH_SUMMARY_FILE="$tmp/$tag.sum" "${vars[@]}" -- "$@"
    local rc=rc_$tag cmd=cmd_$tag
    [ "${!rc}" = 0 ] || { echo "exit ${!rc}: ${!cmd}"; tail -n 20 "$tmp/$tag.err"; return 1; }
    cmp "$tmp/${tag}_plain.out" "$tmp/$tag.out" || { echo "stdout differs: ${!cmd}"; return 1; }
    cmp "$tmp/${tag}_plain.log" "$tmp/$tag.log" || { echo "SIM_LOG differs: ${!cmd}"; return 1; }
    [ ! -s "$tmp/$tag.err" ] || { echo "stderr: ${!cmd}"; cat "$tmp/$tag.err"; return 1; }
}

# sum TAG KEY : a value of TAG's exit summary (0 if absent)
sum() {
    awk -v k="$2" '{ v = $NF; $NF = ""; sub(/ $/, "") } $0 == k { print v; f = 1 }
                   END { if (!f) print 0 }' "$tmp/$1.sum"
}

# check TAG ARGS... : scripts/trace_check.py trace on TAG's trace (output on the TAP log),
# graph kernel records named as their nodes are
check() {
    local tag=$1
    shift
    run python3 scripts/trace_check.py trace "$tmp/$tag.json" "$@"
    echo "$output"
    echo "# $tag: $(echo "$output" | head -n 1)" >&3
    [ "$status" -eq 0 ]
    echo "$output" | grep -q ' kernel_names_differ 0 '    # the stand-in names kernels as cuFuncGetName
}

# analyze TAG CHANNELS : the fork-join program traced with SIM_CHANNELS=CHANNELS, the
# analyzer's JSON report in $tmp/TAG.report, the false dependency check on it; sets
# per_replay (false serializations per replay)
analyze() {
    local tag=$1
    traced "$tag" branches SIM_CHANNELS="$2" AUTOGRAPH_CHUNK=256 -- 20 12 3
    check "$tag" --strict-flows
    run "$analyzer" --quiet --json "$tmp/$tag.report" "$tmp/$tag.json"
    echo "$output"
    [ "$status" -eq 0 ]
    run python3 scripts/trace_check.py falsedeps "$tmp/$tag.report"
    echo "$output"
    echo "# $tag ($2 channels): $(echo "$output" | head -n 1)" >&3
    [ "$status" -eq 0 ]
    per_replay=$(echo "$output" | sed -n 's/.* per_replay \([0-9.]*\)$/\1/p')
}

@test "trace: valid Chrome trace per FORMAT.md; one kernel record per launch; graph records name nodes of <trace>.graphs; same results" {
    traced a introspect -- 20 alternate
    local kernels graphed
    kernels=$(grep -c '^kernel ' "$tmp/a.log")
    graphed=$(sum a launches_graphed)
    [ "$graphed" -gt 0 ]
    check a --kernels "$kernels" --graph-kernels "$graphed" --strict-flows
    python3 - "$tmp/a.json" "$(grep -c '^memset' "$tmp/a.log")" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
memsets = [e for e in ev if e.get("cat") == "gpu_memset"]
assert 0 < len(memsets) <= int(sys.argv[2]), (len(memsets), sys.argv[2])
assert all(e["args"]["bytes"] > 0 for e in memsets)
assert any(e.get("cat") == "gpu_memcpy" and e["name"] == "Memcpy DtoH" for e in ev)
assert d["autographTrace"]["dropped"] == 0 and d["autographTrace"]["untimed"] == 0
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
assert names[0] == "GPU 0" and d["otherData"]["pid"] in names, names
print("memsets, copies, metadata: ok")
EOF
    ls "$tmp/a.json.graphs" | grep -qx 'pid[0-9]*-t[0-9]*-c0-v1-n[0-9]*\.json'
}

@test "trace: a plain run (AUTOGRAPH=off) is traced too: every launch has a record, none from a graph" {
    traced off introspect AUTOGRAPH=off -- 10
    check off --kernels "$(grep -c '^kernel ' "$tmp/off.log")" --graph-kernels 0 --strict-flows
    [ ! -e "$tmp/off.json.graphs" ] || [ -z "$(ls "$tmp/off.json.graphs")" ]
}

@test "trace: autograph-analyze reads it and finds the graphs; its false dependencies have no path in the graph; fewer with more channels" {
    [ -x "$analyzer" ] || skip "build/autograph-analyze not built"
    analyze one 1
    local one=$per_replay
    grep -q '"source": *"libautograph"' "$tmp/one.report"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["input"]["graph_files"], d["input"]' \
        "$tmp/one.report"
    awk -v x="$one" 'BEGIN { exit !(x > 0) }'           # one channel: false dependencies
    analyze eight 8
    local eight=$per_replay
    analyze many 32
    awk -v a="$one" -v b="$eight" -v c="$per_replay" 'BEGIN { exit !(a >= b && b >= c) }'
    # the checker itself: a planted "false dependency" between nodes with a path fails it
    python3 - "$tmp/one.report" "$tmp/planted.report" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
g = next(g for g in rep["groups"] if g["false_dependencies"])
nodes = json.load(open(g["graph_file"]))["nodes"]
a = next(n for n in nodes if n["dependents"])
pair = dict(g["false_dependencies"][0], from_node=a["index"], to_node=a["dependents"][0],
            **{"from": a["kernel_name"], "to": nodes[a["dependents"][0]]["kernel_name"]})
g["false_dependencies"].append(pair)
json.dump(rep, open(sys.argv[2], "w"))
EOF
    run python3 scripts/trace_check.py falsedeps "$tmp/planted.report"
    echo "$output"
    [ "$status" -eq 1 ]
    echo "$output" | grep -q 'have a path in the graph'
}

@test "trace: the program's own graphs go beside the trace too (engine on and off); their records name their nodes" {
    local m
    for m in on off; do
        traced "own_$m" graph_basic AUTOGRAPH=$m --
        check "own_$m" --kernels "$(grep -c '^kernel ' "$tmp/own_$m.log")" --strict-flows
        ls "$tmp/own_$m.json.graphs"
        [ "$(ls "$tmp/own_$m.json.graphs" | grep -c -- '^pid[0-9]*-program-n[0-9]*\.json$')" -eq 2 ]
    done
    echo "$output" | grep -q ' graph_records [1-9]'    # graph_basic's graphs ran
}

@test "trace: a long run streams its records through a bounded set of buffers" {
    traced long introspect -- 300 long
    check long --kernels "$(grep -c '^kernel ' "$tmp/long.log")" --strict-flows
    python3 - "$tmp/long.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["autographTrace"]
print(t)
assert t["completed_buffers"] >= 3, t          # written while the program ran
assert 1 <= t["buffers"] <= 2, t               # and the buffers were reused
assert t["dropped"] == 0 and t["starved_requests"] == 0, t
EOF
}

@test "trace: %p is the pid; a new trace clears the graph files an earlier one left beside it" {
    traced p introspect AUTOGRAPH_TRACE="$tmp/t.%p.json" -- 6
    local files
    files=$(ls "$tmp" | grep -c '^t\.[0-9]*\.json$')
    [ "$files" -eq 1 ]
    traced first introspect AUTOGRAPH_TRACE="$tmp/same.json" -- 6
    touch "$tmp/same.json.graphs/pid1-t9-c0-v0-n1.json" "$tmp/same.json.graphs/notes.txt"
    traced second introspect AUTOGRAPH_TRACE="$tmp/same.json" -- 6
    ls "$tmp/same.json.graphs"
    [ ! -e "$tmp/same.json.graphs/pid1-t9-c0-v0-n1.json" ]
    [ -e "$tmp/same.json.graphs/notes.txt" ]
    [ "$(ls "$tmp/same.json.graphs" | grep -c '\.json$')" -eq "$(sum second variants)" ]
}

# ---- the stream order (FORMAT.md 1d) -----------------------------------------------------

# order TAG EXPECTED... : trace_check.py trace on TAG's trace with these expectations of
# its stream-order events (--event-records N ...), flows strict
order() {
    local tag=$1
    shift
    check "$tag" --kernels "$(grep -c '^kernel ' "$tmp/$tag.log")" --strict-flows "$@"
    echo "$output" | grep -q ' waits_unmatched 0 '
}

@test "trace, stream order (AUTOGRAPH=off): one event record per cuEventRecord, one wait per cuStreamWaitEvent matched by sync id, the host syncs, stream_info per created stream" {
    # event lines kept in SIM_LOG: they count the records and waits the program made
    traced order_off branches AUTOGRAPH=off SIM_LOG_SKIP= -- 6 12 3
    local records waits
    records=$(grep -c '^event_record ' "$tmp/order_off.log")
    waits=$(grep -c '^event_wait ' "$tmp/order_off.log")
    [ "$records" -eq $((6 * 12)) ] && [ "$waits" -eq $((6 * 22)) ]
    # 6 cuStreamSynchronize; 12 streams, created before tracing started (dumped)
    order order_off --event-records "$records" --stream-waits "$waits" --stream-syncs 6 \
        --streams 12
    python3 - "$tmp/order_off.json" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
ev, t = d["traceEvents"], d["autographTrace"]
info = {e["args"]["stream"]: e["args"] for e in ev if e.get("name") == "stream_info"}
assert all(a["flags"] == "non_blocking" and a["device"] == 0 for a in info.values()), info
used = {e["args"]["stream"] for e in ev if e.get("cat") in ("cuda_event_record", "cuda_sync")
        and e["name"] in ("event record", "stream wait event")}
assert used and used <= set(info), (used, set(info))
rec = [e for e in ev if e.get("cat") == "cuda_event_record"]
assert all(e["ts"] == 0 and e["pid"] == 0 and e["tid"] == e["args"]["stream"] for e in rec)
syncs = [e for e in ev if e.get("name") in ("stream synchronize", "context synchronize")]
assert all(e["pid"] == d["otherData"]["pid"] for e in syncs), syncs[:2]
assert t["stream_order"] == len(rec) + len(info) + sum(
    e.get("cat") == "cuda_sync" for e in ev), t
assert t["skipped"] == 1 and t["device_unknown"] == 0, t     # the NULL stream: no stream_info
# one correlation per call, in call order: per iteration the head kernel, the fork record,
# 11 waits, 3 kernels on s0, 3 kernels and a join record per branch, 11 waits, the memset,
# the stream sync; at the end 12 copies (DtoH) and the shim's context sync at exit
letter = {"kernel": "K", "gpu_memset": "M", "gpu_memcpy": "D", "cuda_event_record": "R",
          "stream wait event": "W", "stream synchronize": "S", "context synchronize": "C"}
calls = sorted((e["args"]["correlation"], letter.get(e["cat"]) or letter[e["name"]])
               for e in ev if e.get("cat") in letter or e.get("name") in letter)
assert len({c for c, _ in calls}) == len(calls), "two records share a correlation"
seq = "".join(x for _, x in calls)
assert re.search(r"(KRW{11}KKK(KKKR){11}W{11}MS){6}D{12}C$", seq), seq
print("stream order: %d records, %d streams, %d host syncs" % (len(rec), len(info), len(syncs)))
EOF
}

@test "trace, stream order with the engine on: a record per eager event record and wait the simulator ran (the program's and the shim's), none for graph nodes" {
    sim_run on_plain branches -- 20 12 3
    sim_run order_on branches LD_PRELOAD="$shim" AUTOGRAPH_CHUNK=256 SIM_LOG_SKIP= \
        SIM_LOG_GRAPH=marked AUTOGRAPH_TRACE="$tmp/order_on.json" \
        AUTOGRAPH_SUMMARY_FILE="$tmp/order_on.sum" -- 20 12 3
    [ "$rc_order_on" = 0 ] && [ ! -s "$tmp/order_on.err" ] || { cat "$tmp/order_on.err"; false; }
    cmp "$tmp/on_plain.out" "$tmp/order_on.out"
    [ "$(sum order_on launches_graphed)" -gt 0 ]
    # eager lines only: a graph's event nodes are logged "g:event_..." and leave no record
    grep -q '^g:event_record ' "$tmp/order_on.log"
    run python3 scripts/trace_check.py trace "$tmp/order_on.json" --strict-flows \
        --kernels "$(grep -c 'kernel ' "$tmp/order_on.log")" \
        --event-records "$(grep -c '^event_record ' "$tmp/order_on.log")" \
        --stream-waits "$(grep -c '^event_wait ' "$tmp/order_on.log")"
    echo "$output"
    echo "# order_on: $(echo "$output" | head -n 1)" >&3
    [ "$status" -eq 0 ]
    echo "$output" | grep -q ' waits_unmatched 0 '
    # the program's 20 stream syncs at least, and its 12 streams among those named
    python3 - "$tmp/order_on.json" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
syncs = sum(e.get("name") == "stream synchronize" for e in ev)
infos = sum(e.get("name") == "stream_info" for e in ev)
assert syncs >= 20 and infos >= 12, (syncs, infos)
EOF
}

@test "trace, stream order: a kind CUPTI refuses is named in one line and tracing goes on without it" {
    sim_run refuse branches LD_PRELOAD="$shim" AUTOGRAPH=off SIM_CUPTI_REFUSE=38 \
        AUTOGRAPH_TRACE="$tmp/refuse.json" -- 3 4 2
    [ "$rc_refuse" = 0 ]
    cat "$tmp/refuse.err"
    [ "$(grep -c 'AUTOGRAPH_TRACE' "$tmp/refuse.err")" -eq 1 ]
    grep -q 'CUPTI refused SYNCHRONIZATION (error [0-9]*); the trace lacks' "$tmp/refuse.err"
    check refuse --kernels "$(grep -c '^kernel ' "$tmp/refuse.log")" --strict-flows \
        --event-records 12 --stream-waits 0 --stream-syncs 0 --streams 4
    sim_run refuse2 branches LD_PRELOAD="$shim" AUTOGRAPH=off SIM_CUPTI_REFUSE=9,37,36 \
        AUTOGRAPH_TRACE="$tmp/refuse2.json" -- 3 4 2
    [ "$rc_refuse2" = 0 ]
    grep -q 'CUPTI refused CONTEXT (error [0-9]*) STREAM (error [0-9]*) CUDA_EVENT (error [0-9]*);' \
        "$tmp/refuse2.err"
    # waits without their records: that is the one problem the checker finds
    run python3 scripts/trace_check.py trace "$tmp/refuse2.json" --event-records 0 \
        --stream-waits 18 --stream-syncs 3 --streams 0 --strict-flows
    echo "$output"
    [ "$status" -eq 1 ]
    echo "$output" | grep -q '^trace NOT ok: 1 problems'
    echo "$output" | grep -q '18 stream waits name no earlier event record by sync id'
    # the devices of waits: from the GPU records' contexts (no CONTEXT records)
    grep -q '"device_unknown": 0' "$tmp/refuse2.json"
}

@test "trace: a runtime program's API records (SIM_CUPTI_API=runtime: none for the driver calls under them) are written as cuda_runtime and give every GPU record its call" {
    traced rt branches AUTOGRAPH=off SIM_CUPTI_API=runtime -- 3 4 2
    check rt --kernels "$(grep -c '^kernel ' "$tmp/rt.log")" --strict-flows
    python3 - "$tmp/rt.json" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
api = [e for e in ev if e.get("cat") in ("cuda_driver", "cuda_runtime")]
assert api and all(e["cat"] == "cuda_runtime" for e in api), api[:2]
assert {e["name"] for e in api} >= {"cudaLaunchKernel_v7000", "cudaMemsetAsync_v3020"}, api[:2]
EOF
}

# ---- eager windows: trace_check.py eagerdeps ---------------------------------------------

# eager_report TRACE OUT PAIRS... : a hand-written report in the shape of FORMAT.md 4 (what
# autograph-analyze --json writes for eager windows) on TRACE's eager windows, computed
# here (GPU records without graph id, split at host syncs, by correlation): one group per
# window, its serializations the PAIRS "W:A-B" (window W, its records A and B by
# position) as class false, and "fd:A-B" a false_dependencies pair of every group.
eager_report() {
    python3 - "$@" <<'EOF'
import json, sys
trace, out, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
ev = json.load(open(trace))["traceEvents"]
syncs = sorted(e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_sync"
               and e["name"] != "stream wait event")
windows = {}
for e in sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") in
                 ("kernel", "gpu_memcpy", "gpu_memset") and not e["args"].get("graph id")),
                key=lambda e: e["args"]["correlation"]):
    windows.setdefault(sum(c < e["args"]["correlation"] for c in syncs), []).append(e)
groups = []
for n, recs in enumerate(windows[k] for k in sorted(windows)):
    sers = []
    for p in pairs:
        w, ab = p.split(":")
        a, b = (int(x) for x in ab.split("-"))
        if w == str(n):
            sers.append({"class": "false", "from_node": a, "to_node": b,
                         "from_correlation": recs[a]["args"]["correlation"],
                         "to_correlation": recs[b]["args"]["correlation"],
                         "from_stream": recs[a]["args"]["stream"],
                         "to_stream": recs[b]["args"]["stream"]})
    fds = [dict(zip(("from_node", "to_node"), map(int, p[3:].split("-"))))
           for p in pairs if p.startswith("fd:")]
    groups.append({"eager_window": {"shape": "%016x" % n, "device": 0, "records": len(recs)},
                   "replay_count": 1, "serializations": {"false": len(sers)},
                   "false_dependencies": [d for d in fds if max(d.values()) < len(recs)],
                   "replays": [{"correlation": recs[0]["args"]["correlation"],
                                "serializations": sers}]})
json.dump({"analyzer": "autograph-analyze", "format_version": 1, "groups": groups},
          open(out, "w"))
EOF
}

# eager_check TRACE REPORT STATUS : trace_check.py eagerdeps exits with STATUS
eager_check() {
    run python3 scripts/trace_check.py eagerdeps "$1" "$2"
    echo "$output"
    [ "$status" -eq "$3" ]
}

@test "trace_check.py eagerdeps: rebuilds eager windows and edges (stream order, event record -> wait, through waits, the legacy stream's implicit ones); a false pair with a path fails it" {
    # stream 10-12 non_blocking, 13 blocking, 1 without stream_info (legacy);
    # correlation: 1 a@10, 2 record y1@10, 3 wait y1@11, 4 record y2@11, 5 wait y2@12,
    # 6 b@12, 7 c@11, 8 d@13, 9 e@1, 10 f@13, 11 g@10, 12 stream sync, 13 h@10
    python3 - "$tmp/syn.json" <<'EOF'
import json, sys
ev = [{"ph": "M", "name": "stream_info", "pid": 0, "tid": s,
       "args": {"stream": s, "device": 0, "flags": f, "priority": 0}}
      for s, f in ((10, "non_blocking"), (11, "non_blocking"), (12, "non_blocking"),
                   (13, "default"))]
def k(c, s, name):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": s, "ts": c, "dur": 0.5,
            "args": {"device": 0, "stream": s, "correlation": c, "channel": 0}}
def i(c, s, cat, name, y):
    return {"ph": "i", "cat": cat, "name": name, "pid": 0, "tid": s, "ts": 0,
            "args": {"stream": s, "correlation": c, "event": 1, "sync id": y}}
ev += [k(1, 10, "a"), i(2, 10, "cuda_event_record", "event record", 1),
       i(3, 11, "cuda_sync", "stream wait event", 1), i(4, 11, "cuda_event_record", "event record", 2),
       i(5, 12, "cuda_sync", "stream wait event", 2), k(6, 12, "b"), k(7, 11, "c"), k(8, 13, "d"),
       k(9, 1, "e"), k(10, 13, "f"), k(11, 10, "g"),
       {"ph": "i", "cat": "cuda_sync", "name": "stream synchronize", "pid": 7, "tid": 0, "ts": 12,
        "args": {"correlation": 12, "stream": 10}}, k(13, 10, "h")]
json.dump({"otherData": {"producer": "libautograph", "version": 1, "pid": 7}, "traceEvents": ev},
          open(sys.argv[1], "w"))
EOF
    # positions in window 0: a0 b1 c2 d3 e4 f5 g6; window 1: h0.  No path: b-c, e-g, d-b, c-g
    eager_report "$tmp/syn.json" "$tmp/syn.report" 0:1-2 0:4-6 0:3-1 0:2-6 fd:1-2
    eager_check "$tmp/syn.json" "$tmp/syn.report" 0
    echo "$output" | head -n 1 | grep -qx 'eager false serializations 4, windows 2, per_window 2.000'
    echo "$output" | grep -q '^trace: eager windows 2, records 8, edges '
    local pair
    # a path each: a->b through a wait on a stream with no record of its own, a->c (event),
    # d->e (legacy after blocking), e->f (blocking after legacy), a->g (stream order)
    for pair in 0:0-1 0:0-2 0:3-4 0:4-5 0:6-0 fd:0-6; do
        eager_report "$tmp/syn.json" "$tmp/bad.report" 0:1-2 "$pair"
        eager_check "$tmp/syn.json" "$tmp/bad.report" 1
        echo "$output" | grep -q 'have a path'
    done
    # a window the trace does not have
    sed 's/"correlation": 13/"correlation": 12/' "$tmp/syn.report" >"$tmp/bad.report"
    eager_check "$tmp/syn.json" "$tmp/bad.report" 1
    echo "$output" | grep -q 'no eager window of the trace starts at correlation 12'
}

@test "trace_check.py eagerdeps on a simulator trace (AUTOGRAPH=off, fork-join): branches apart have no path; head -> branch and branch -> join do" {
    traced eager branches AUTOGRAPH=off -- 3 4 2
    # window 1 (iteration 2): 0 head@s0, 1-2 s0, 3-4 s1, 5-6 s2, 7-8 s3, 9 memset@s0
    eager_report "$tmp/eager.json" "$tmp/eager.report" 1:3-5 1:4-8 1:2-6 fd:3-7
    eager_check "$tmp/eager.json" "$tmp/eager.report" 0
    # 3 x 10, 4 copies, and the 4 synchronous memsets before the loop (recordable calls:
    # the first of them starts the tracer)
    echo "$output" | grep -q '^trace: eager windows 4, records 38, '
    local pair
    for pair in 1:0-3 1:4-9 1:1-2 fd:0-9; do
        eager_report "$tmp/eager.json" "$tmp/bad.report" 1:3-5 "$pair"
        eager_check "$tmp/eager.json" "$tmp/bad.report" 1
    done
}

@test "trace: autograph-analyze's eager windows (FORMAT.md 3) on a traced eager run: trace_check.py eagerdeps finds no false dependency with a path" {
    [ -x "$analyzer" ] || skip "build/autograph-analyze not built"
    traced ea branches AUTOGRAPH=off SIM_CHANNELS=1 -- 8 12 3
    run "$analyzer" --quiet --json "$tmp/ea.report" "$tmp/ea.json"
    echo "$output"
    [ "$status" -eq 0 ]
    grep -q '"eager_window"' "$tmp/ea.report" || skip "this autograph-analyze reports no eager windows yet"
    eager_check "$tmp/ea.json" "$tmp/ea.report" 0
    echo "# ea (1 channel): $(echo "$output" | head -n 1)" >&3
    echo "$output" | head -n 1 | grep -q 'windows [1-9]'
}

@test "trace: CUPTI taken by another client: one line, no trace, the program unchanged" {
    sim_run taken_plain graph_basic --
    sim_run taken graph_basic LD_PRELOAD="$shim" AUTOGRAPH_TRACE="$tmp/taken.json" SIM_CUPTI_TAKEN=1 --
    cat "$tmp/taken.err"
    [ "$rc_taken" = 0 ]
    cmp "$tmp/taken_plain.out" "$tmp/taken.out"
    [ "$(wc -l <"$tmp/taken.err")" -eq 1 ]
    grep -q 'AUTOGRAPH_TRACE: CUPTI is taken by another client in this process (cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), no trace: AUTOGRAPH_GRAPH_DATA=DIR' "$tmp/taken.err"
    [ ! -e "$tmp/taken.json" ]
}

@test "trace: AUTOGRAPH_GRAPH_DATA writes the program's graphs' data without CUPTI, also while CUPTI is taken; the analyzer reads it" {
    local m rc
    for m in on off; do
        sim_run "gd_$m" graph_basic LD_PRELOAD="$shim" AUTOGRAPH=$m AUTOGRAPH_GRAPH_DATA="$tmp/gd_$m.%p" SIM_CUPTI_TAKEN=1 --
        cat "$tmp/gd_$m.err"
        rc=rc_gd_$m
        [ "${!rc}" = 0 ]
        [ ! -s "$tmp/gd_$m.err" ]
        ls "$tmp"/gd_$m.*/
        [ "$(ls "$tmp"/gd_$m.[0-9]*/ | grep -c -- '^pid[0-9]*-program-n[0-9]*\.json$')" -eq 2 ]
    done
    local f
    for f in "$tmp"/gd_on.[0-9]*/*.json; do
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["nodes"] and all("kernel_name" in n for n in d["nodes"]), d' "$f"
    done
    if [ -x "$analyzer" ]; then
        # a trace of no GPU work, with these graph files: read, listed, nothing decided
        printf '{"traceEvents": []}' >"$tmp/empty.json"
        run "$analyzer" --json "$tmp/r.json" "$tmp/empty.json" "$tmp"/gd_on.[0-9]*
        [ "$status" -eq 3 ]
        python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["input"]["graph_files"]) == 2' "$tmp/r.json"
    fi
}

@test "trace: gpu_validate.sh --predict (its analysis step) on a simulator trace: 1 channel, the shim's graphs, a shorter span predicted" {
    [ -x "$analyzer" ] || skip "build/autograph-analyze not built"
    traced pv branches SIM_CHANNELS=1 AUTOGRAPH_CHUNK=256 -- 20 12 3
    run bash tests/analyzer/gpu_validate.sh --predict "$tmp/pv.json" graph
    echo "$output"
    [ "$status" -eq 0 ]
    local observed predicted false replays
    read -r observed predicted false replays <<<"$output"
    awk -v o="$observed" -v p="$predicted" -v f="$false" -v n="$replays" \
        'BEGIN { exit !(p < o && f > 0 && n > 0) }'
    [ -s "$tmp/pv.report.json" ]
}

@test "gpu_busy.py: busy time per step is the union of the GPU records between markers (planted trace)" {
    # steps end at the DtoH copies ending at 10, 20, 30, 40 (the first one opens the
    # first step); between 10 and 40, 8 GPU records: a kernel 11-15 overlapping a memset 13-17
    # (busy 6), the markers 19-20, 29.5-30 and 36-40 (5.5), a copy 21-22 (1), kernels
    # 25-27 and 27-29 (4); the API record does not count: 16.5 us over 3 steps of 10
    cat > "$tmp/planted.json" <<'JSON'
{"traceEvents":[
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH","ts":8.000,"dur":2.000},
{"ph":"X","cat":"kernel","name":"k","ts":11.000,"dur":4.000},
{"ph":"X","cat":"gpu_memset","name":"Memset","ts":13.000,"dur":4.000},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH","ts":19.000,"dur":1.000},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","ts":21.000,"dur":1.000},
{"ph":"X","cat":"kernel","name":"k","ts":25.000,"dur":2.000},
{"ph":"X","cat":"kernel","name":"k","ts":27.000,"dur":2.000},
{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","ts":24.000,"dur":5.000},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH","ts":29.500,"dur":0.500},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH","ts":36.000,"dur":4.000}
]}
JSON
    run python3 tests/bench/gpu_busy.py --skip 0 "$tmp/planted.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "$tmp/planted.json: steps 3 span 10.0 us, busy 5.5 us, idle 4.5 us, records 2.7 per step" ]
    run python3 tests/bench/gpu_busy.py --marker "Memcpy HtoD" "$tmp/planted.json"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ $output == *"fewer than 3 'Memcpy HtoD' records"* ]]
}

@test "gpu_busy.py on simulator traces of synchronous copies and memsets, eager and graphed: the same GPU records a step, busy within the span" {
    local side records=()
    for side in off on; do
        traced "busy_$side" staged_copies AUTOGRAPH="$side" -- sync 200
        run python3 tests/bench/gpu_busy.py "$tmp/busy_$side.json"
        echo "$output"
        [ "$status" -eq 0 ]
        echo "# $side: ${output#"$tmp/"}" >&3
        awk '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1) }
             END { exit !(v["steps"] >= 200 && v["busy"] > 0 && v["busy"] <= v["span"]) }' \
            <<<"$output"
        records+=("${output##*records }")
    done
    [ "$(sum busy_on launches_graphed)" -gt 0 ]
    [ "${records[0]}" = "${records[1]}" ]
}
