#!/usr/bin/env bats
# config.bats -- the AUTOGRAPH_* switches on a real process (the door_linked program on
# the CPU simulator): every malformed value or unknown name gives exactly one line on
# stderr naming the variable, the value and what is accepted, the safe default is
# used, and the program's own output and log are unchanged.

setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}"   # AG_TEST_ROOT: see tests/run.sh
    [ -f build/sim/libcuda.so.1 ] || skip "simulator not built (make sim)"
    [ -f build/libautograph.so ] || skip "shim not built (make)"
    tmp="$BATS_TEST_TMPDIR"
    LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/plain.log" build/sim/progs/door_linked \
        >"$tmp/plain.out"
}

# with_shim VAR=VALUE... : door_linked under the shim; stderr in $tmp/err.
with_shim() {
    rm -f "$tmp/shim.log"     # the simulator appends to SIM_LOG
    env LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/shim.log" \
        LD_PRELOAD="$PWD/build/libautograph.so" "$@" build/sim/progs/door_linked \
        >"$tmp/shim.out" 2>"$tmp/err"
    echo "stderr:"; cat "$tmp/err"
    cmp "$tmp/plain.out" "$tmp/shim.out"
    cmp "$tmp/plain.log" "$tmp/shim.log"
}

# expect_one_line REGEX : stderr is exactly one line, and it matches REGEX whole.
expect_one_line() {
    [ "$(wc -l <"$tmp/err")" -eq 1 ]
    grep -qx -- "$1" "$tmp/err"
}

@test "config: valid switches print nothing" {
    with_shim AUTOGRAPH=off AUTOGRAPH_LOG=info AUTOGRAPH_SUMMARY=no
    [ ! -s "$tmp/err" ]
}

@test "config: malformed AUTOGRAPH gives one line and passthrough" {
    with_shim AUTOGRAPH=turbo
    expect_one_line 'libautograph: AUTOGRAPH="turbo" is not valid (accepted: on, off); using "off"'
}

@test "config: malformed AUTOGRAPH_SUMMARY gives one line and no summary" {
    with_shim AUTOGRAPH_SUMMARY=2
    expect_one_line 'libautograph: AUTOGRAPH_SUMMARY="2" is not valid (accepted: 0, off, no, false, 1, on, yes, true); using "0"'
}

@test "config: malformed AUTOGRAPH_LOG gives one line and warn level" {
    with_shim AUTOGRAPH_LOG=verbose
    expect_one_line 'libautograph: AUTOGRAPH_LOG="verbose" is not valid (accepted: error, warn, info, debug); using "warn"'
}

@test "config: an unknown AUTOGRAPH_* name gives one line naming every known one" {
    with_shim AUTOGRAPH_SUMMRY=1
    expect_one_line 'libautograph: unknown variable AUTOGRAPH_SUMMRY (known: AUTOGRAPH, .*); ignored'
    # every switch of docs/switches.md's table is among the known names
    for name in $(sed -n 's/^| `\(AUTOGRAPH[A-Z_]*\)`.*/\1/p' docs/switches.md | sort -u); do
        grep -q "[ (]$name[,)]" "$tmp/err" || { echo "not listed: $name"; return 1; }
    done
}

@test "config: malformed AUTOGRAPH_CHECK_LIVENESS gives one line and off" {
    with_shim AUTOGRAPH_CHECK_LIVENESS=strict
    expect_one_line 'libautograph: AUTOGRAPH_CHECK_LIVENESS="strict" is not valid (accepted: off, warn, error); using "off"'
}

@test "config: malformed AUTOGRAPH_CAPTURE_MODE gives one line and relaxed" {
    with_shim AUTOGRAPH_CAPTURE_MODE=local
    expect_one_line 'libautograph: AUTOGRAPH_CAPTURE_MODE="local" is not valid (accepted: relaxed, thread_local, global); using "relaxed"'
}

@test "config: malformed AUTOGRAPH_INJECT_FAULTS gives one line and no fault" {
    local bad
    for bad in 'cuGraphLaunch' 'cuGraphLaunch:0' 'cuGraphLaunch:x' ':3' 'cuGraphLaunch:1:0' 'cuGraphLaunch:1,' 'cuGraphLaunch:1:2:3'; do
        with_shim AUTOGRAPH_INJECT_FAULTS="$bad"
        expect_one_line "libautograph: AUTOGRAPH_INJECT_FAULTS=\"$bad\" is not valid (accepted: comma-separated name:call\[:error\], call and error positive integers, at most 64 items); no faults injected"
    done
}

@test "config: AUTOGRAPH_SUMMARY=1 writes the summary on stderr, prefixed" {
    with_shim AUTOGRAPH_SUMMARY=1
    grep -q '^libautograph: # libautograph .* exit summary: pid [0-9]*, mode on$' "$tmp/err"
    grep -q '^libautograph: kernel_launches [1-9]' "$tmp/err"
    grep -qx 'libautograph: door unmapped 0' "$tmp/err"
}

@test "config: malformed engine integers give one line each and the defaults" {
    with_shim AUTOGRAPH_WARMUP=two
    expect_one_line 'libautograph: AUTOGRAPH_WARMUP="two" is not valid (accepted: an integer from 1 to 1000); using "2"'
    with_shim AUTOGRAPH_CHUNK_MAX=0
    expect_one_line 'libautograph: AUTOGRAPH_CHUNK_MAX="0" is not valid (accepted: an integer from 1 to 65536); using "256"'
    with_shim AUTOGRAPH_LIGHT_AFTER=-1
    expect_one_line 'libautograph: AUTOGRAPH_LIGHT_AFTER="-1" is not valid (accepted: an integer from 0 to 1048576); using "3"'
    with_shim AUTOGRAPH_EXPLAIN=loud
    expect_one_line 'libautograph: AUTOGRAPH_EXPLAIN="loud" is not valid (accepted: 0, off, no, false, 1, on, yes, true); using "0"'
}

@test "config: every engine integer switch: not a number, below and above its range give one line each and its default; empty means unset" {
    local spec name def lo hi bad
    # NAME DEFAULT MIN MAX, as docs/switches.md says
    for spec in "AUTOGRAPH_WARMUP 2 1 1000" "AUTOGRAPH_MIN_OPS 4 1 1048576" \
        "AUTOGRAPH_CHUNK 8 1 65536" "AUTOGRAPH_CHUNK_MAX 256 1 65536" \
        "AUTOGRAPH_CHUNK_GROWTH 3 1 64" \
        "AUTOGRAPH_CHUNK_SLOW_US 2 0 1000000" \
        "AUTOGRAPH_VARIANTS 4 1 64" "AUTOGRAPH_PERIOD_MIN 32 2 65536" \
        "AUTOGRAPH_LIGHT_AFTER 3 0 1048576" "AUTOGRAPH_MAX_GRAPHS 256 0 1048576" \
        "AUTOGRAPH_MAX_GRAPH_MB 1024 0 1048576"; do
        read -r name def lo hi <<<"$spec"
        for bad in 12x $((lo - 1)) $((hi + 1)); do
            with_shim "$name=$bad"
            expect_one_line "libautograph: $name=\"$bad\" is not valid (accepted: an integer from $lo to $hi); using \"$def\""
        done
        with_shim "$name="
        [ ! -s "$tmp/err" ]
    done
}

@test "config: AUTOGRAPH_SUMMARY_FILE expands %p; an unwritable path falls back to stderr" {
    with_shim AUTOGRAPH_SUMMARY_FILE="$tmp/sum.%p"
    ls "$tmp"/sum.[0-9]*
    grep -q '^kernel_launches [1-9]' "$tmp"/sum.[0-9]*
    with_shim AUTOGRAPH_SUMMARY_FILE=/nonexistent/dir/summary
    grep -q '^libautograph: AUTOGRAPH_SUMMARY_FILE: cannot write /nonexistent/dir/summary' "$tmp/err"
    grep -q '^libautograph: kernel_launches [1-9]' "$tmp/err"
}

@test "config: malformed AUTOGRAPH_KEEP_GRAPH gives one line and 0" {
    with_shim AUTOGRAPH_KEEP_GRAPH=always
    expect_one_line 'libautograph: AUTOGRAPH_KEEP_GRAPH="always" is not valid (accepted: 0, off, no, false, 1, on, yes, true); using "0"'
    with_shim AUTOGRAPH_KEEP_GRAPH=yes
    [ ! -s "$tmp/err" ]
}

@test "config: AUTOGRAPH_DEBUG_DUMP that cannot be a folder gives one line and no dump; a new one is made" {
    : >"$tmp/file"
    with_shim AUTOGRAPH_DEBUG_DUMP="$tmp/file/dump"
    expect_one_line "libautograph: AUTOGRAPH_DEBUG_DUMP=\"$tmp/file/dump\" is not valid (cannot make a writable folder there: Not a directory); nothing is dumped"
    [ ! -e "$tmp/file/dump" ]
    with_shim AUTOGRAPH_DEBUG_DUMP="$tmp/new/dump"
    [ ! -s "$tmp/err" ]
    [ -d "$tmp/new/dump" ]
    with_shim AUTOGRAPH_DEBUG_DUMP=
    [ ! -s "$tmp/err" ]
}

@test "config: AUTOGRAPH_PLUGIN that cannot be loaded, or has no autograph_plugin_init, gives one line" {
    with_shim AUTOGRAPH_PLUGIN="$tmp/none.so"
    expect_one_line "libautograph: AUTOGRAPH_PLUGIN=\"$tmp/none.so\" cannot be loaded ($tmp/none.so: cannot open shared object file: No such file or directory); no plugin"
    with_shim AUTOGRAPH_PLUGIN="$PWD/build/sim/libcupti.so.13"
    expect_one_line "libautograph: AUTOGRAPH_PLUGIN=\"$PWD/build/sim/libcupti.so.13\" has no autograph_plugin_init(); no plugin"
    with_shim AUTOGRAPH_PLUGIN=
    [ ! -s "$tmp/err" ]
}

@test "config: AUTOGRAPH_TRACE that cannot be written gives one line and no trace; %p is the pid; empty is unset" {
    : >"$tmp/file"
    with_shim AUTOGRAPH_TRACE="$tmp/file/trace.json"
    expect_one_line "libautograph: AUTOGRAPH_TRACE=\"$tmp/file/trace.json\" is not valid (cannot write $tmp/file/trace.json: Not a directory); no trace"
    [ ! -e "$tmp/file/trace.json.graphs" ]
    with_shim AUTOGRAPH_TRACE="$tmp/trace.%p.json"
    [ ! -s "$tmp/err" ]
    python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["traceEvents"]' "$tmp"/trace.[0-9]*.json
    [ -d "$(ls -d "$tmp"/trace.[0-9]*.json).graphs" ]
    with_shim AUTOGRAPH_TRACE=
    [ ! -s "$tmp/err" ]
    [ "$(ls "$tmp" | grep -c '^trace\.')" -eq 2 ]
}
