#!/usr/bin/env bats
# introspect_sim.bats -- graph introspection on the CPU simulator: the public API of
# include/autograph.h, hooks, AUTOGRAPH_DEBUG_DUMP, AUTOGRAPH_KEEP_GRAPH, the cache
# bounds, AUTOGRAPH_PLUGIN, and the tools_id "proof" the GPU suite makes with CUPTI
# (tests/gpu/introspect.bats), here against the simulator's stand-in ids.
#
# Program: build/sim/progs/introspect ITER [api] [alternate] [long]
# (tests/sim/progs/introspect.c), built with AUTOGRAPH_OPTIONAL: it runs unchanged
# without the shim.  Every run with the shim is compared with one without: exit 0,
# the same stdout (buffer sums) and the same SIM_LOG (SIM_LOG_SKIP=event,
# SIM_LOG_STREAMS=hide, as in engine_sim.bats).  Ids: build/sim/libcupti.so.13
# answers cuptiGetGraphNodeId / GraphId / GraphExecId from the simulator, and
# SIM_GRAPH_TRACE writes what CUPTI's kernel records would carry
# ("<graphId> <graphNodeId> <kernel>" per kernel a graph runs); scripts/tools_id_match.py
# checks that each one is the tools_id of exactly one kernel node of the graph data.
#
# Reproduce a run by hand (the failure message prints the exact command), e.g.
#   LD_LIBRARY_PATH=build/sim LD_PRELOAD=$PWD/build/libautograph.so \
#       AUTOGRAPH_DEBUG_DUMP=/tmp/dump SIM_GRAPH_TRACE=/tmp/trace build/sim/progs/introspect 20
#   scripts/tools_id_match.py --records /tmp/trace /tmp/dump

source "$BATS_TEST_DIRNAME/sim_run.bash"

setup() {
    sim_setup introspect INTROSPECT_
    plugin="$PWD/build/tests/plugin/libexample_plugin.so"
}

# pair [VAR=VALUE...] -- ARGS... : the program without the shim (plain) and with it
# plus those variables (shim; summary in $tmp/shim.summary); both exit 0, stdout and
# SIM_LOG identical, else the difference and the commands are shown
pair() {
    local vars=()
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    sim_run plain introspect -- "$@"
    sim_run shim introspect LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" "${vars[@]}" -- "$@"
    local t
    for t in plain shim; do
        local rc=rc_$t cmd=cmd_$t
        if [ "${!rc}" != 0 ]; then
            echo "FAIL: exit ${!rc}: ${!cmd}"; tail -n 20 "$tmp/$t.err"; return 1
        fi
    done
    cmp "$tmp/plain.out" "$tmp/shim.out" || { echo "stdout differs: $cmd_shim"; return 1; }
    cmp "$tmp/plain.log" "$tmp/shim.log" || {
        echo "SIM_LOG differs: $cmd_shim"; diff "$tmp/plain.log" "$tmp/shim.log" | head; return 1; }
}

# sum KEY : the shim run's summary value of KEY (0 if absent)
sum() {
    awk -v k="$1" '{ v = $NF; $NF = ""; sub(/ $/, "") } $0 == k { print v; f = 1 }
                   END { if (!f) print 0 }' "$tmp/shim.summary"
}

# api KEY : the value the program printed as "api: KEY VALUE" (shim run)
api() {
    sed -n "s/^api: $1 //p" "$tmp/shim.err" | head -n 1
}

@test "introspect: without the shim every API call says 'not loaded' and the program runs" {
    sim_run plain introspect -- 10 api
    [ "$rc_plain" = 0 ]
    grep -qx 'api: not loaded (libautograph is not loaded)' "$tmp/plain.err"
    grep -q '^introspect: a=' "$tmp/plain.out"
}

@test "introspect: the API with the shim: hooks, listing, executables, disable/enable/flush/reset; same results" {
    mkdir -p "$tmp/api"
    pair INTROSPECT_API_DIR="$tmp/api" -- 20 api
    cat "$tmp/shim.err"
    [ "$(api version)" = 0.2.0 ]
    [ "$(api hooks)" = "0 0" ]
    [ "$(api graphs)" -ge 1 ]
    grep -q '^api: graph template [0-9]* chunk 0/1 ops 7 kernels 4 variants 2 replays [1-9]' "$tmp/shim.err"
    [ "$(api executables)" = "2 of 2" ]
    [ "$(api disable)" = 0 ] && [ "$(api enable)" = 0 ] && [ "$(api flush)" = 0 ]
    [ "$(api reset)" = 0 ] && [ "$(api 'graphs after reset')" = 0 ]
    [ "$(api capture_end)" -eq 2 ]          # built before and after the reset
    [ "$(api post_instantiate)" -eq 4 ]     # two variants each time
    [ "$(api 'in hooks: nodes')" = "12 queries 4" ]   # CUDA calls from hooks: no deadlock
    [ "$(api remove)" = "0 0 again -3" ]
    [ "$(sum 'flush api')" -eq 1 ]
    [ "$(sum replays)" -gt 0 ]
    ls "$tmp/api"/t*-c0.dot
}

@test "introspect: tools_id proof on the simulator: every graph kernel record is exactly one dumped node" {
    mkdir -p "$tmp/api"
    pair AUTOGRAPH_DEBUG_DUMP="$tmp/dump" SIM_GRAPH_TRACE="$tmp/trace" AUTOGRAPH_CHUNK=2 \
        INTROSPECT_API_DIR="$tmp/api" -- 20 api alternate
    [ "$(sum launches_graphed)" -gt 0 ]
    run python3 scripts/tools_id_match.py --records "$tmp/trace" "$tmp/dump"
    echo "$output"
    [ "$status" -eq 0 ]
    echo "$output" | grep -qx "tools_id match: $(sum launches_graphed)/$(sum launches_graphed) = 100.0%"
    echo "# debug dump: $(echo "$output" | grep 'tools_id match')" >&3
    run python3 scripts/tools_id_match.py --records "$tmp/trace" "$tmp/api"
    echo "$output"
    [ "$status" -eq 0 ]
    echo "# autograph_graph_data: $(echo "$output" | grep 'tools_id match')" >&3
}

@test "AUTOGRAPH_DEBUG_DUMP: DOT (plain, verbose) per chunk and JSON per variant, in the seed's shape, with the graph's real edges" {
    # never paced: under a sanitizer the program is slow, and paced chunks (cut from the
    # end) may put two independent ops, with no edge, in one chunk
    pair AUTOGRAPH_DEBUG_DUMP="$tmp/dump/sub" AUTOGRAPH_CHUNK=2 AUTOGRAPH_CHUNK_SLOW_US=0 -- 12 alternate
    cd "$tmp/dump/sub"
    ls
    local pid chunks
    pid=$(ls | sed -n 's/^pid\([0-9]*\)-.*/\1/p' | sort -u)
    [ "$(echo "$pid" | wc -l)" -eq 1 ]
    chunks=$(ls | grep -c '^pid[0-9]*-t[0-9]*-c[0-9]*\.dot$')
    [ "$chunks" -ge 2 ]
    [ "$(ls | grep -c -- '-verbose\.dot$')" -eq "$chunks" ]
    [ "$(ls | grep -c -- '-v[0-9]*\.json$')" -eq "$(sum variants)" ]
    [ "$(ls | wc -l)" -eq $((2 * chunks + $(sum variants))) ]
    grep -q 'grid=' pid*-c0-verbose.dot
    ! grep -q 'grid=' pid*-c0.dot || false
    python3 - <<'EOF'
import glob, json, re
keys = ["index", "node_type", "tools_id", "graph_id", "node_id", "kernel_name",
        "dependencies", "dependents"]
for path in sorted(glob.glob("*.json")):
    data = json.load(open(path))
    assert list(data) == ["exec_graph_id", "nodes"], path
    e = data["exec_graph_id"]
    assert isinstance(e, int) and e > 0, path
    nodes = data["nodes"]
    for i, n in enumerate(nodes):
        assert list(n) == keys, (path, list(n))
        assert n["index"] == i and n["graph_id"] == e
        assert n["tools_id"] == (e << 32) | n["node_id"]
        assert (n["kernel_name"] is not None) == (n["node_type"] == "kernel")
        for d in n["dependencies"]:
            assert i in nodes[d]["dependents"], (path, i, d)
        for d in n["dependents"]:
            assert i in nodes[d]["dependencies"], (path, i, d)
    # the edges are the graph's: the simulator's DOT names nodes by sequence number
    dot = open(re.sub(r"-v\d+\.json$", ".dot", path)).read()
    dot_edges = set(re.findall(r"n(\d+) -> n(\d+);", dot))
    json_edges = {(str(nodes[d]["node_id"]), str(n["node_id"]))
                  for n in nodes for d in n["dependencies"]}
    assert dot_edges == json_edges, (path, dot_edges, json_edges)
    assert len(json_edges) > 0 or len(nodes) < 2, path
print("graph data shape and edges: ok")
EOF
}

@test "AUTOGRAPH_KEEP_GRAPH=1: templates are kept uninstantiated until their first replay; results and the proof unchanged" {
    pair AUTOGRAPH_KEEP_GRAPH=1 -- 2
    [ "$(sum templates)" -eq 1 ] && [ "$(sum variants)" -eq 0 ]
    pair AUTOGRAPH_KEEP_GRAPH=0 -- 2
    [ "$(sum templates)" -eq 1 ] && [ "$(sum variants)" -eq 1 ]
    pair AUTOGRAPH_KEEP_GRAPH=1 AUTOGRAPH_DEBUG_DUMP="$tmp/dump" SIM_GRAPH_TRACE="$tmp/trace" -- 20 api
    grep -q '^api: graph template [0-9]* chunk 0/1 ops 7 kernels 4 variants 2 ' "$tmp/shim.err"
    [ "$(api post_instantiate)" -eq 4 ]
    run python3 scripts/tools_id_match.py --records "$tmp/trace" "$tmp/dump"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "AUTOGRAPH_MAX_GRAPHS and AUTOGRAPH_MAX_GRAPH_MB: least recently used graphs are evicted, counted, results unchanged" {
    pair -- 40 alternate
    [ "$(sum evicted)" -eq 0 ] && [ "$(sum templates)" -eq 2 ]
    pair AUTOGRAPH_MAX_GRAPHS=1 -- 40 alternate
    echo "templates $(sum templates) evicted $(sum evicted) replays $(sum replays)"
    [ "$(sum evicted)" -ge 8 ] && [ "$(sum templates)" -eq $(($(sum evicted) + 1)) ]
    [ "$(sum replays)" -gt 0 ]
    pair AUTOGRAPH_MAX_GRAPHS=2 -- 40 alternate
    [ "$(sum evicted)" -eq 0 ]
    pair AUTOGRAPH_MAX_GRAPH_MB=1 -- 40 alternate long      # 0.6 MB (estimated) each
    echo "templates $(sum templates) evicted $(sum evicted) peak $(sum graph_bytes_peak)"
    [ "$(sum evicted)" -ge 6 ] && [ "$(sum templates)" -eq $(($(sum evicted) + 1)) ]
    [ "$(sum graph_bytes_peak)" -gt $((1 << 20)) ]         # measured before evicting
    pair AUTOGRAPH_MAX_GRAPH_MB=4 -- 40 alternate long
    [ "$(sum evicted)" -eq 0 ]
}

@test "AUTOGRAPH_PLUGIN: the example plugin sees every capture end and instantiation the program's hooks see" {
    [ -f "$plugin" ] || skip "example plugin not built (make plugins)"
    mkdir -p "$tmp/api"
    pair AUTOGRAPH_PLUGIN="$plugin" INTROSPECT_API_DIR="$tmp/api" -- 20 api alternate
    grep '^example_plugin' "$tmp/shim.err" | head -n 4
    grep -qx 'example_plugin: loaded into libautograph 0.2.0' "$tmp/shim.err"
    [ "$(grep -c '^example_plugin: capture end: template [0-9]* chunk 0 graph 0x' "$tmp/shim.err")" \
        -eq "$(api capture_end)" ]
    [ "$(grep -c '^example_plugin: instantiated: .* exec_graph_id [0-9]' "$tmp/shim.err")" \
        -eq "$(api post_instantiate)" ]
    ! grep -q 'exec_graph_id null' "$tmp/shim.err" || false
}

@test "introspection calls the driver refuses change nothing but one warning" {
    pair AUTOGRAPH_DEBUG_DUMP="$tmp/dump" SIM_FAIL=cuGraphGetNodes:1,cuGraphDebugDotPrint:2 -- 12
    cat "$tmp/shim.err"
    [ "$(sum replays)" -gt 0 ]
    [ "$(grep -c 'AUTOGRAPH_DEBUG_DUMP: cannot write' "$tmp/shim.err")" -eq 1 ]
    [ "$(grep -c . "$tmp/shim.err")" -eq 1 ]
    ls "$tmp/dump"
    [ "$(ls "$tmp/dump" | wc -l)" -eq 2 ]     # the verbose DOT and the first JSON failed
    ls "$tmp/dump"/pid*-t1-c0.dot "$tmp/dump"/pid*-t1-c0-v1.json
}

@test "property: random programs (engine_fuzz) dumped, kept lazily and bounded to one graph: same log, proof holds" {
    local spec args fails=0 graphed=0 evicted=0
    for spec in 1 2 3 4 5 6 13 101:noevents; do
        args=("${spec%%:*}" 3000)
        [[ "$spec" != *:noevents ]] || args+=(noevents)
        rm -rf "$tmp/dump" "$tmp/trace"
        sim_run plain engine_fuzz -- "${args[@]}"
        sim_run shim engine_fuzz LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
            AUTOGRAPH_DEBUG_DUMP="$tmp/dump" SIM_GRAPH_TRACE="$tmp/trace" AUTOGRAPH_KEEP_GRAPH=1 \
            AUTOGRAPH_MAX_GRAPHS=1 -- "${args[@]}"
        if [ "$rc_plain" != 0 ] || [ "$rc_shim" != 0 ] || ! cmp -s "$tmp/plain.out" "$tmp/shim.out" ||
            ! cmp -s "$tmp/plain.log" "$tmp/shim.log"; then
            echo "FAIL seed $spec: exit $rc_plain/$rc_shim or output/log differ: $cmd_shim"
            fails=$((fails + 1))
            continue
        fi
        graphed=$((graphed + $(sum launches_graphed)))
        evicted=$((evicted + $(sum evicted)))
        [ "$(sum launches_graphed)" -gt 0 ] || continue
        python3 scripts/tools_id_match.py --records "$tmp/trace" "$tmp/dump" >"$tmp/match" ||
            { echo "FAIL seed $spec: $cmd_shim"; cat "$tmp/match"; fails=$((fails + 1)); }
        echo "seed $spec: $(grep 'tools_id match' "$tmp/match") evicted $(sum evicted)"
    done
    echo "# fuzz with dumps: launches_graphed $graphed, evicted $evicted" >&3
    [ "$fails" -eq 0 ] && [ "$graphed" -gt 0 ]
}
