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
#   - a long run streams: buffers are completed and reused, at most 2 allocated.
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
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M"}
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
