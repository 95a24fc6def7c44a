#!/usr/bin/env bats
# trace.bats -- AUTOGRAPH_TRACE on the GPU, and the false dependency proof (issue 6).
#
# Run from the repository root:  bats tests/gpu/trace.bats   (or .carry/bats/bin/bats)
# Needs a usable GPU; every test says `skip "no GPU"` otherwise.  Builds what it needs
# with `make all gpu-progs` (build/autograph-analyze among them when zlib.h is there).
#
# What the H100 showed (CUDA 13.0, driver 580): graph replays put their kernels on one
# or two hardware channels and still run independent branches concurrently (the same
# span with 1 and 8 connections): the analyzer finds no false dependency in them.  Eager
# multi-stream work does serialize on shared channels: the 16 branches below, run
# without the shim, took 467 us per iteration with 8 connections and 1257 us with 1.
# So the graph figures are logged, the eager ones required.
#
# Programs: build/gpu/branches_static (tests/gpu/branches_prog.cu): per iteration a head
# kernel, 16 independent branches (s0 + 15 forked streams) of 3 kernels of ~30 us each
# (2 blocks: all 16 branches fit on the GPU at once), a tail kernel that joins them,
# a stream sync.  Under the shim with AUTOGRAPH_CHUNK=256 every iteration after the
# warm-up replays one graph: head -> 16 chains -> tail; with AUTOGRAPH=off it runs
# eagerly, one eager window (FORMAT.md 3) per iteration.  build/gpu/fanout_static
# (tests/gpu/fanout_prog.cu): the program's own explicit graph, head -> 64 independent
# single-kernel chains -> tail, launched N times.  A context has 8 hardware channels by
# default (CUDA_DEVICE_MAX_CONNECTIONS, 1..32).
#
# For CUDA_DEVICE_MAX_CONNECTIONS unset (8), 1 and 32, each program runs without the shim
# and with it and AUTOGRAPH_TRACE; the checks:
#   - the same bytes (results bit-identical), and the shim says nothing about the trace
#     (no kind refused);
#   - scripts/trace_check.py trace: valid per analyzer/FORMAT.md 1c and 1d, one kernel
#     record per launch (graph kernel records: the shim's launches_graphed, or the
#     program graph's nodes per launch), each naming by its graph node id a kernel node
#     of <trace>.graphs/;
#   - graphed (shim's graph, and fanout's own): build/autograph-analyze --json on the
#     trace (graph files found beside it); scripts/trace_check.py falsedeps: every false
#     dependency it reports is between nodes with no path in the graph file, in either
#     direction; false serializations per replay logged (and for the shim's graph
#     ordered: 32 <= 8 <= 1), channels of graph kernels logged;
#   - eager (AUTOGRAPH=off): the stream order exactly as the program made it (16 event
#     records and 30 waits per iteration, matched by sync id; a stream sync per
#     iteration; 16 stream_info); the analyzer's eager windows checked by
#     scripts/trace_check.py eagerdeps (windows and edges rebuilt from the trace alone:
#     no false serialization between records with a path); false serializations per
#     window logged and required: 32 <= 8 <= 1 connections, and > 0 with 1.
# And a plain run (AUTOGRAPH=off, no graph, few iterations): a valid trace with one
# record per launch.  Figures go to the TAP log ("# ..." lines).
#
# Knobs: AG_TRACE_ITERS (graphed iterations, default 200), AG_TRACE_EAGER_ITERS (eager
# iterations, default 30), AG_TRACE_FANOUT_ITERS (fanout launches, default 50),
# AG_TRACE_ROUNDS (mixing rounds per element of a branch kernel, default 1500: ~30 us on
# an H100), AG_TRACE_EAGER_ROUNDS (the same for the eager runs, default 6000: ~145 us,
# longer than the host takes to submit a whole iteration, so that the channels and not
# the host decide the order), AG_TRACE_EPSILON (the analyzer's --epsilon in us, default: its own, 2),
# AG_TRACE_TIMEOUT (seconds one program may run, default 300).

load gpu_helpers

setup_file() {
    ag_setup_file
}

setup() {
    ag_setup
    d=$BATS_TEST_TMPDIR
    iters=${AG_TRACE_ITERS:-200}
    eager_iters=${AG_TRACE_EAGER_ITERS:-30}
    eager_rounds=${AG_TRACE_EAGER_ROUNDS:-6000}
    fanout_iters=${AG_TRACE_FANOUT_ITERS:-50}
    rounds=${AG_TRACE_ROUNDS:-1500}
    analyzer=$AG_TOP/build/autograph-analyze
}

# cupti_path : LD_LIBRARY_PATH=<folder of the libcupti that introspect_trace links>, so
# that the shim's dlopen("libcupti.so.13") finds it wherever the toolkit is
cupti_path() {
    local lib
    lib=$(ldd "$AG_BIN/introspect_trace" 2>/dev/null | awk '$1 ~ /^libcupti/ { print $3 }')
    echo "LD_LIBRARY_PATH=${lib%/*}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

# tr_run TAG CMD... : CMD (may start with NAME=value words) without the caller's
# AUTOGRAPH_*, LD_PRELOAD, CUDA_INJECTION64_PATH or CUDA_DEVICE_MAX_CONNECTIONS, under a
# time limit; stdout and stderr in $d/TAG.{out,err}
tr_run() {
    local tag=$1 lim=()
    shift
    ag_env_clean
    command -v timeout >/dev/null 2>&1 && lim=(timeout -k 10 "${AG_TRACE_TIMEOUT:-300}")
    "${lim[@]}" "${AG_ENV[@]}" -u CUDA_DEVICE_MAX_CONNECTIONS "$@" >"$d/$tag.out" \
        2>"$d/$tag.err"
}

# traced TAG CONNECTIONS [VAR=VALUE...] [-- PROGRAM ARGS...] : PROGRAM (build/gpu; default
# branches_static ITERS 16 3 ROUNDS) without the shim (TAG_plain) and with it and
# AUTOGRAPH_TRACE=$d/TAG.json (TAG), CUDA_DEVICE_MAX_CONNECTIONS=CONNECTIONS (empty:
# unset); both exit 0 with the same stdout, the shim says nothing about the trace, and
# trace_check.py trace passes: kernel records = the program's launches + $graph_kernels
# (set by the caller for a program graph; else graph kernel records = launches_graphed)
traced() {
    local tag=$1 conn=() vars=() prog graphed expected
    [ -n "$2" ] && conn=(CUDA_DEVICE_MAX_CONNECTIONS="$2")
    shift 2
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    [ $# -gt 0 ] || set -- branches_static "$iters" 16 3 "$rounds"
    prog=$AG_BIN/$1
    shift
    tr_run "${tag}_plain" "${conn[@]}" "$prog" "$@" || { ag_show "${tag}_plain"; return 1; }
    tr_run "$tag" "${conn[@]}" "$(cupti_path)" LD_PRELOAD="$AG_SHIM" AUTOGRAPH_CHUNK=256 \
        AUTOGRAPH_TRACE="$d/$tag.json" AUTOGRAPH_SUMMARY_FILE="$d/$tag.sum.%p" "${vars[@]}" \
        "$prog" "$@" || { ag_show "$tag"; return 1; }
    cmp -s "$d/${tag}_plain.out" "$d/$tag.out" ||
        { echo "$tag: results differ with the shim and the trace"; diff "$d/${tag}_plain.out" "$d/$tag.out" | head; return 1; }
    if grep -q 'AUTOGRAPH_TRACE' "$d/$tag.err"; then
        echo "$tag: the shim said:"
        ag_show "$tag"
        return 1
    fi
    graphed=$(ag_sum launches_graphed "$d/$tag".sum.*)
    expected=$(ag_expected "$tag")
    run python3 scripts/trace_check.py trace "$d/$tag.json" \
        --kernels "$((expected + ${graph_kernels:-0}))" --graph-kernels "${graph_kernels:-$graphed}"
    echo "$output"
    ag_log "$tag: $(echo "$output" | head -n 1)"
    ag_log "$tag: launches $expected, graphed $graphed, $(timing "$tag") (without the shim $(timing "${tag}_plain"))"
    [ "$status" -eq 0 ]
}

# timing TAG : the program's own timing line (loop_us_per_iter or replay_us) of TAG's run
timing() {
    awk '$1 == "loop_us_per_iter" || $1 == "replay_us" { print $1, $2 " us" }' "$d/$1.err"
}

# channels TAG : the distinct channels of TAG's graph kernel records
channels() {
    python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(" ".join(map(str, sorted({e["args"]["channel"] for e in ev
      if e.get("cat") == "kernel" and e["args"].get("graph id")}))))' "$d/$1.json"
}

# analyze TAG : build/autograph-analyze --json on TAG's trace (graph files found beside
# it): $d/TAG.report, and its text report in $d/TAG.text
analyze() {
    local eps=()
    [ -x "$analyzer" ] || skip "build/autograph-analyze not built (zlib.h missing?)"
    [ -n "${AG_TRACE_EPSILON:-}" ] && eps=(--epsilon "$AG_TRACE_EPSILON")
    "$analyzer" "${eps[@]}" --json "$d/$1.report" -o "$d/$1.text" "$d/$1.json" ||
        { echo "autograph-analyze failed on $d/$1.json"; return 1; }
}

# false_deps TAG : the analyzer on TAG's trace, its report checked (no false dependency
# between nodes with a path); sets per_replay and saves it as $BATS_FILE_TMPDIR/TAG.fpr
false_deps() {
    local tag=$1
    analyze "$tag" || return 1
    grep -E '^exec graph|^  (serializations|estimated span)' "$d/$tag.text" | head -n 3 |
        while read -r line; do ag_log "$tag: $line"; done
    ag_log "$tag: channels of graph kernels: $(channels "$tag")"
    run python3 scripts/trace_check.py falsedeps "$d/$tag.report"
    echo "$output"
    ag_log "$tag: $(echo "$output" | head -n 1)"
    [ "$status" -eq 0 ]
    per_replay=$(echo "$output" | sed -n 's/.* per_replay \([0-9.]*\)$/\1/p')
    echo "$per_replay" >"$BATS_FILE_TMPDIR/$tag.fpr"
}

# eager_deps TAG CONNECTIONS : branches_static run eagerly (AUTOGRAPH=off, eager_iters
# iterations after the warm-up one) and traced; the analyzer's eager windows checked by
# trace_check.py eagerdeps (at least one window; per_window saved as
# $BATS_FILE_TMPDIR/TAG.fpw); then the stream order as the program made it: per
# iteration 16 event records (fork, 15 joins), 30 waits and a stream sync; 16 streams
eager_deps() {
    local tag=$1 n=$((eager_iters + 1)) windows
    traced "$tag" "$2" AUTOGRAPH=off -- branches_static "$eager_iters" 16 3 "$eager_rounds" || return 1
    analyze "$tag" || return 1
    run python3 scripts/trace_check.py eagerdeps "$d/$tag.json" "$d/$tag.report"
    echo "$output"
    ag_log "$tag: $(echo "$output" | head -n 2 | paste -sd ';' -)"
    [ "$status" -eq 0 ]
    windows=$(echo "$output" | sed -n '1s/.*, windows \([0-9]*\),.*/\1/p')
    [ "${windows:-0}" -gt 0 ] || { echo "$tag: autograph-analyze reported no eager window"; return 1; }
    echo "$output" | sed -n '1s/.* per_window \([0-9.]*\)$/\1/p' >"$BATS_FILE_TMPDIR/$tag.fpw"
    run python3 scripts/trace_check.py trace "$d/$tag.json" --event-records $((16 * n)) \
        --stream-waits $((30 * n)) --stream-syncs "$n" --streams 16
    echo "$output"
    ag_log "$tag: stream order: $(echo "$output" | grep -o 'event_records.*waits_unmatched [0-9]*' | head -n 1)"
    [ "$status" -eq 0 ]
}

# fanout TAG CONNECTIONS : fanout_static (its own graph of 64 chains, fanout_iters launches
# after an untimed one) traced with AUTOGRAPH=off: the program graph's file beside the
# trace, the analyzer matches it (one group, a replay per launch, no unmatched record),
# falsedeps passes; channels and false serializations per replay logged
fanout() {
    local tag=$1 n=$((fanout_iters + 1))
    local graph_kernels=$((66 * n))       # head + 64 + tail per launch (read by traced)
    traced "$tag" "$2" AUTOGRAPH=off -- fanout_static "$fanout_iters" 64 1 || return 1
    ls "$d/$tag.json.graphs"
    [ "$(ls "$d/$tag.json.graphs" | grep -c '^pid[0-9]*-program-n[0-9]*\.json$')" -eq 1 ] ||
        { echo "$tag: not one program graph file in $d/$tag.json.graphs"; return 1; }
    false_deps "$tag" || return 1
    ag_log "$tag: false serializations per replay: $per_replay"
    python3 - "$d/$tag.report" "$n" <<'EOF'
import json, os, re, sys
groups = json.load(open(sys.argv[1]))["groups"]
mine = [g for g in groups if re.match(r"pid[0-9]+-program-n[0-9]+\.json$",
                                      os.path.basename(g.get("graph_file") or ""))]
assert len(mine) == 1, [g.get("graph_file") for g in groups]
got = {k: mine[0].get(k) for k in ("replay_count", "unmatched_records")}
assert got == {"replay_count": int(sys.argv[2]), "unmatched_records": 0}, got
EOF
}

# ordered PREFIX EXT WHAT [CONDITION] : the figures the earlier tests saved for 1, 8 and 32
# connections ($BATS_FILE_TMPDIR/PREFIX{1,8,32}.EXT; skips without them), logged as WHAT;
# 32 <= 8 <= 1, and the awk CONDITION on a (1), b (8), c (32)
ordered() {
    local f=$BATS_FILE_TMPDIR/$1 a b c
    [ -f "${f}1.$2" ] && [ -f "${f}8.$2" ] && [ -f "${f}32.$2" ] ||
        skip "an earlier test of this file did not get that far"
    a=$(cat "${f}1.$2") b=$(cat "${f}8.$2") c=$(cat "${f}32.$2")
    ag_log "$3: 1 connection $a, 8: $b, 32: $c"
    awk -v a="$a" -v b="$b" -v c="$c" "BEGIN { exit !(c <= b && b <= a && (${4:-1})) }"
}

# ---- the shim's graph (AUTOGRAPH_CHUNK=256: one graph per iteration)
# Measured on the H100 (CUDA 13.0, driver 580): the replays' graph kernels ran on 2
# channels with 8 connections and on 1 with 1 connection, and the branches still ran
# concurrently (the same span): the analyzer found no false dependency to report.  So
# the number is logged (and ordered below), not required to be above 0.
@test "trace: 16 branches, 8 channels (default): valid trace, results unchanged, false dependencies counted, none with a path" {
    traced c8 ""
    false_deps c8
    ag_log "c8: false serializations per replay: $per_replay"
}

@test "trace: 16 branches, CUDA_DEVICE_MAX_CONNECTIONS=1: false dependencies counted, none with a path" {
    traced c1 1
    false_deps c1
    ag_log "c1: false serializations per replay: $per_replay"
}

@test "trace: 16 branches, CUDA_DEVICE_MAX_CONNECTIONS=32: none with a path" {
    traced c32 32
    false_deps c32
}

@test "trace: false dependencies per replay: 32 connections <= 8 <= 1" {
    ordered c fpr "false serializations per replay"
}

@test "trace: a plain run (AUTOGRAPH=off, no graphs) is traced: valid, one record per launch, no graph records" {
    iters=20
    traced plain "" AUTOGRAPH=off       # checks --graph-kernels 0 (nothing graphed)
    [ -z "$(ls "$d/plain.json.graphs" 2>/dev/null)" ]     # no graph: no graph file
    # API records of the launches (CUPTI writes none unless their kind is enabled)
    echo "$output" | grep -qE '(^| )api [1-9][0-9]*( |$)'
}

# ---- eager (AUTOGRAPH=off): the same 16 branches, one eager window per iteration.
# Without the shim on the H100: 467 us per iteration with 8 connections, 1257 us with 1
# (streams sharing a channel serialize), so false serializations are required with 1.
# Measured (kernels of ~36 us): they are of the kind "queued" (analyzer/FORMAT.md 3),
# 15 per window with 1 connection, none with 8 (the host submits slower than 8
# channels drain such short kernels): hence the longer kernels here.
@test "trace, eager: 16 branches, CUDA_DEVICE_MAX_CONNECTIONS=1: stream order as made, results unchanged; eager false dependencies counted, none with a path" {
    eager_deps e1 1
    ag_log "e1: false serializations per window: $(cat "$BATS_FILE_TMPDIR/e1.fpw")"
}

@test "trace, eager: 16 branches, 8 connections (default): none with a path" {
    eager_deps e8 ""
    ag_log "e8: false serializations per window: $(cat "$BATS_FILE_TMPDIR/e8.fpw")"
}

@test "trace, eager: 16 branches, CUDA_DEVICE_MAX_CONNECTIONS=32: none with a path" {
    eager_deps e32 32
    ag_log "e32: false serializations per window: $(cat "$BATS_FILE_TMPDIR/e32.fpw")"
}

@test "trace, eager: false serializations per window: 32 connections <= 8 <= 1, and some with 1" {
    ordered e fpw "eager false serializations per window" "a > 0"
}

# ---- the program's own graph (fanout_static: head -> 64 chains -> tail), engine off.
# On the H100 a replay's kernels all ran on one channel, concurrently: 0 false.
@test "trace, program graph: 64 chains, 1/8/32 connections: its graph file beside the trace, matched by the analyzer, no false dependency with a path" {
    local c
    for c in 1 "" 32; do
        fanout "f${c:-8}" "$c"
    done
    ag_log "fanout false serializations per replay: 1 connection $(cat "$BATS_FILE_TMPDIR/f1.fpr"), 8: $(cat "$BATS_FILE_TMPDIR/f8.fpr"), 32: $(cat "$BATS_FILE_TMPDIR/f32.fpr")"
}
