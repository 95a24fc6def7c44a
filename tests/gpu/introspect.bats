#!/usr/bin/env bats
# introspect.bats -- graph introspection on the GPU (include/autograph.h, AUTOGRAPH_DEBUG_DUMP,
# AUTOGRAPH_KEEP_GRAPH, AUTOGRAPH_PLUGIN) and the tools_id proof.
#
# Run from the repository root:  bats tests/gpu/introspect.bats   (or .carry/bats/bin/bats)
# Needs a usable GPU; every test says `skip "no GPU"` otherwise.  Builds what it needs
# with `make all gpu-progs plugins`.
#
# The proof: build/gpu/introspect_trace (tests/gpu/introspect_trace.cu) enables CUPTI
# activity records (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) before its first CUDA call and
# runs a two-stream ping-pong workload 100 times under the shim with
# AUTOGRAPH_DEBUG_DUMP; it writes every kernel record's graphId, graphNodeId and name.
# scripts/tools_id_match.py then checks that every record launched from a graph names,
# by its graphNodeId, exactly one kernel node of the dumped graph data (tools_id) and
# prints "tools_id match: M/N = P%"; the test fails below 100%, and when the number of
# graph records differs from the shim's launches_graphed.  The same check runs on the
# JSON the program fetched itself with autograph_graph_data in a post-instantiate hook.
# On a failure the checker says which other form the ids take (low 32 bits, template
# ids: the program also writes CUPTI's raw template node ids, AG_RAW).
# Results ("# ..." lines) go to the TAP log.
#
# Knobs: AG_INTROSPECT_TIMEOUT (seconds one program may run, default 300).

load gpu_helpers

setup_file() {
    ag_setup_file || return 1
    if [ "${AG_GPU:-0}" = 1 ]; then
        make -s plugins >&2 || return 1
    fi
}

setup() { ag_setup; }

# it_run TAG CMD... : CMD (may start with NAME=value words) without any caller's
# AUTOGRAPH_*, LD_PRELOAD or CUDA_INJECTION64_PATH, under a time limit; stdout and
# stderr in $BATS_TEST_TMPDIR/TAG.{out,err}
it_run() {
    local tag=$1 lim=()
    shift
    ag_env_clean
    command -v timeout >/dev/null 2>&1 && lim=(timeout -k 10 "${AG_INTROSPECT_TIMEOUT:-300}")
    "${lim[@]}" "${AG_ENV[@]}" "$@" >"$BATS_TEST_TMPDIR/$tag.out" 2>"$BATS_TEST_TMPDIR/$tag.err"
}

# cupti_path : LD_LIBRARY_PATH=<the folder of the libcupti introspect_trace links>, for
# runs whose program does not load CUPTI (the shim then opens libcupti.so.13 itself)
cupti_path() {
    local lib
    lib=$(ldd "$AG_BIN/introspect_trace" | awk '$1 ~ /^libcupti/ { print $3 }')
    echo "LD_LIBRARY_PATH=${lib%/*}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

# same TAG_A TAG_B : both stdouts non-empty and identical
same() {
    local d=$BATS_TEST_TMPDIR
    [ -s "$d/$1.out" ] || { echo "$1: no output"; return 1; }
    cmp -s "$d/$1.out" "$d/$2.out" || { echo "outputs differ with the shim:"; diff "$d/$1.out" "$d/$2.out" | head; return 1; }
}

# match TAG WHAT DIR : scripts/tools_id_match.py on DIR against TAG's records; the
# figures go to the TAP log and stdout; fails below 100%
match() {
    local tag=$1 what=$2 dir=$3 d=$BATS_TEST_TMPDIR rc=0 graphed
    graphed=$(ag_sum launches_graphed "$d/$tag".sum.*)
    python3 scripts/tools_id_match.py --records "$d/$tag.records" --raw "$d/$tag.raw" \
        --min "$graphed" "$dir" >"$d/$tag.match" 2>&1 || rc=$?
    cat "$d/$tag.match"
    while read -r line; do ag_log "$tag $what: $line"; done <"$d/$tag.match"
    return $rc
}

# proof TAG [VAR=VALUE...] : the traced replay with and without the shim; same results,
# as many graph kernel records as graphed launches, and a 100% match for both the
# debug dump and the graph data fetched through the API
proof() {
    local tag=$1 d=$BATS_TEST_TMPDIR graphed line
    shift
    mkdir -p "$d/$tag.api"
    it_run "$tag.plain" "$AG_BIN/introspect_trace" trace 100 || { ag_show "$tag.plain"; return 1; }
    it_run "$tag" LD_PRELOAD="$AG_SHIM" AUTOGRAPH_SUMMARY_FILE="$d/$tag.sum.%p" \
        AUTOGRAPH_DEBUG_DUMP="$d/$tag.dump" AG_RECORDS="$d/$tag.records" AG_RAW="$d/$tag.raw" \
        AG_API_DIR="$d/$tag.api" "$@" "$AG_BIN/introspect_trace" trace 100 || { ag_show "$tag"; return 1; }
    same "$tag.plain" "$tag"
    graphed=$(ag_sum launches_graphed "$d/$tag".sum.*)
    line=$(grep '^records ' "$d/$tag.err")
    ag_log "$tag: $line; shim: launches_graphed $graphed templates" \
        "$(ag_sum templates "$d/$tag".sum.*) variants $(ag_sum variants "$d/$tag".sum.*)"
    [ "$graphed" -gt 0 ] || { echo "nothing was graphed"; ag_show "$tag"; return 1; }
    [[ "$line" =~ ^records\ [0-9]+\ graph\ $graphed\ dropped\ 0$ ]] ||
        { echo "CUPTI's graph kernel records ($line) differ from launches_graphed $graphed"; return 1; }
    match "$tag" "debug dump" "$d/$tag.dump"
    match "$tag" "autograph_graph_data" "$d/$tag.api"
}

@test "introspect (GPU): tools_id proof: every CUPTI graph kernel record is exactly one node of the dumped graph data" {
    proof p1
}

@test "introspect (GPU): tools_id proof with AUTOGRAPH_CHUNK=4 (two chunks) and AUTOGRAPH_KEEP_GRAPH=1 (lazy instantiation)" {
    proof p2 AUTOGRAPH_CHUNK=4 AUTOGRAPH_KEEP_GRAPH=1
    [ "$(ls "$BATS_TEST_TMPDIR"/p2.dump/*-c1-v0.json | wc -l)" -ge 1 ]
}

@test "introspect (GPU): without CUPTI in the program the shim loads it for the ids; DOT dumps, plain and verbose" {
    local d=$BATS_TEST_TMPDIR
    it_run a "$AG_BIN/introspect_trace" plain 20 || { ag_show a; false; }
    it_run b LD_PRELOAD="$AG_SHIM" AUTOGRAPH_DEBUG_DUMP="$d/dump" AUTOGRAPH_SUMMARY_FILE="$d/b.sum.%p" \
        "$(cupti_path)" "$AG_BIN/introspect_trace" plain 20 || { ag_show b; false; }
    same a b
    ! grep -q 'CUPTI not found\|libcupti lacks' "$d/b.err" || { ag_show b; false; }
    ls "$d/dump"
    python3 - "$d/dump" <<'EOF'
import glob, json, os, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))
assert files, "no graph data dumped"
for path in files:
    data = json.load(open(path))
    e = data["exec_graph_id"]
    assert isinstance(e, int) and e > 0, (path, e)
    ids = [n["node_id"] for n in data["nodes"]]
    assert len(set(ids)) == len(ids), (path, "node ids repeat")
    for n in data["nodes"]:
        assert n["graph_id"] == e and n["tools_id"] == (e << 32) | n["node_id"], (path, n)
    kernels = [n for n in data["nodes"] if n["node_type"] == "kernel"]
    assert kernels and all(n["kernel_name"] for n in kernels), path
    assert any(n["dependencies"] for n in data["nodes"]), (path, "no edges")
print(f"{len(files)} graph data files: ids set, remapped to the exec graph, edges present")
EOF
    local dot
    for dot in "$d"/dump/*-c[0-9].dot "$d"/dump/*-c[0-9][0-9].dot; do
        [ -f "$dot" ] || continue
        head -c 7 "$dot" | grep -q digraph
        [ "$(wc -c <"${dot%.dot}-verbose.dot")" -gt "$(wc -c <"$dot")" ]
    done
    ag_log "self-loaded CUPTI: $(ls "$d"/dump/*.json | wc -l) graph data files, $(ls "$d"/dump/*.dot | wc -l) DOT files"
}

@test "introspect (GPU): AUTOGRAPH_PLUGIN: the example plugin sees each capture end and instantiation" {
    local d=$BATS_TEST_TMPDIR plugin=$AG_TOP/build/tests/plugin/libexample_plugin.so
    it_run a "$AG_BIN/introspect_trace" plain 20 || { ag_show a; false; }
    it_run b LD_PRELOAD="$AG_SHIM" AUTOGRAPH_PLUGIN="$plugin" AUTOGRAPH_SUMMARY_FILE="$d/b.sum.%p" \
        "$(cupti_path)" "$AG_BIN/introspect_trace" plain 20 || { ag_show b; false; }
    same a b
    grep '^example_plugin' "$d/b.err" | while read -r line; do ag_log "$line"; done
    grep -qx 'example_plugin: loaded into libautograph 0.2.0' "$d/b.err"
    [ "$(grep -c '^example_plugin: capture end: ' "$d/b.err")" -ge 1 ]
    [ "$(grep -c '^example_plugin: instantiated: .* exec_graph_id [0-9]' "$d/b.err")" -eq \
        "$(ag_sum variants "$d"/b.sum.*)" ]
}

@test "introspect (GPU): cache bounds: AUTOGRAPH_MAX_GRAPHS=1 evicts and results are unchanged (engine_static phases)" {
    local d=$BATS_TEST_TMPDIR
    [ -x "$AG_BIN/engine_static" ] || skip "engine_static not built"
    it_run a "$AG_BIN/engine_static" phases 30 || { ag_show a; false; }
    it_run b LD_PRELOAD="$AG_SHIM" AUTOGRAPH_MAX_GRAPHS=1 AUTOGRAPH_SUMMARY_FILE="$d/b.sum.%p" \
        "$AG_BIN/engine_static" phases 30 || { ag_show b; false; }
    same a b
    ag_log "MAX_GRAPHS=1: templates $(ag_sum templates "$d"/b.sum.*) evicted" \
        "$(ag_sum evicted "$d"/b.sum.*) launches_graphed $(ag_sum launches_graphed "$d"/b.sum.*)"
}

@test "introspect (GPU): device memory an executable graph holds, beside the shim's estimate (information)" {
    it_run m "$AG_BIN/introspect_trace" memcal 100 50 || { ag_show m; false; }
    cat "$BATS_TEST_TMPDIR/m.out"
    ag_log "$(grep '^memcal:' "$BATS_TEST_TMPDIR/m.out")"
}
