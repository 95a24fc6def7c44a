#!/usr/bin/env bats
# cli.bats -- the autograph command (build/autograph, scripts/autograph/) and the
# shim's AUTOGRAPH_TIMING (shim/timing.c), on the CPU simulator.
#
#   - run: the program's stdout is the same as without the shim, its exit status is the
#     program's, every option becomes its AUTOGRAPH_* variable (printenv shows them, the
#     library first in LD_PRELOAD, an earlier LD_PRELOAD kept), the switches reach the
#     shim (its exit summary; --set AUTOGRAPH_MIN_OPS changes what it graphs), the
#     library is found beside the executable and in an installed layout, and a missing
#     library or program is one clear line with status 2;
#   - timing: a file per process (%p), its header, one line per window with the
#     program's own counts (branches B=4 K=3: one window per iteration, 24 submits, the
#     first also the 4 synchronous memsets of the setup, which only enqueue work;
#     threads_stress: 489 windows, 2681 submits from 9 threads, which also makes the
#     256-record buffer spill while threads race), held > 0 only with graphing on, the
#     closing line; an unwritable file is one line and the program runs on;
#   - compare -n 3: the report, exit 0, an SVG that python3's xml.etree parses (two
#     curves, the marks, title and axis labels), JSON with the same counts; status 3
#     when the two sides print differently, "not compared" when the program's output
#     changes from run to run; a failing program, a missing one, one without CUDA: 2;
#   - usage errors: status 1 and exactly one line on stderr; every help text.
#
# Reproduce one by hand from the repository root, e.g.
#   LD_LIBRARY_PATH=build/sim build/autograph compare -n 3 -- build/sim/progs/branches 40 4 3

source "$BATS_TEST_DIRNAME/sim_run.bash"

setup() {
    sim_setup branches CLI_
    export LD_LIBRARY_PATH=$PWD/build/sim
    ag=$PWD/build/autograph
    [ -x "$ag" ] || { echo "build/autograph not built (make all builds it)"; return 1; }
    prog=$PWD/build/sim/progs/branches
}

# cli TAG ARGS... : build/autograph ARGS; $tmp/TAG.out, $tmp/TAG.err, status in rc
cli() {
    local tag=$1
    shift
    rc=0
    "$ag" "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err" || rc=$?
    echo "autograph $* -> $rc; stderr:"
    cat "$tmp/$tag.err"
}

# one_line TAG REGEX : stderr of TAG is exactly one line and matches REGEX (grep -E)
one_line() {
    [ "$(wc -l <"$tmp/$1.err")" -eq 1 ] || { echo "stderr is not one line"; return 1; }
    grep -qE -- "$2" "$tmp/$1.err" || { echo "stderr does not match: $2"; return 1; }
}

# usage TAG ARGS... : ARGS is a usage error: status 1, one line
usage() {
    local tag=$1
    shift
    cli "$tag" "$@"
    [ "$rc" -eq 1 ] && one_line "$tag" '^autograph'
}

# absent REGEX FILE : FILE has no line matching REGEX (`! grep` alone would not fail a test)
absent() {
    if grep -q -- "$1" "$2"; then
        echo "unexpected in $2: $(grep -m 1 -- "$1" "$2")"
        return 1
    fi
}

# windows FILE : "windows submits held" of a timing file
windows() {
    awk '/^w /{n++; s+=$3; h+=$5} END{print n+0, s+0, h+0}' "$1"
}

@test "run: the program's own stdout and status; the summary shows the switches reached the shim" {
    "$prog" 20 4 3 >"$tmp/plain.out"
    cli on run --summary -- "$prog" 20 4 3
    [ "$rc" -eq 0 ]
    cmp "$tmp/plain.out" "$tmp/on.out"
    grep -q '^libautograph: # libautograph .* exit summary: pid [0-9]*, mode on$' "$tmp/on.err"
    grep -q '^libautograph: templates 1$' "$tmp/on.err"
    cli off run --off --summary "$prog" 20 4 3         # PROGRAM without --
    [ "$rc" -eq 0 ]
    cmp "$tmp/plain.out" "$tmp/off.out"
    grep -q 'exit summary: pid [0-9]*, mode off$' "$tmp/off.err"
    cli status run -- sh -c 'exit 7'
    [ "$rc" -eq 7 ]
}

@test "run: --set reaches the shim (AUTOGRAPH_MIN_OPS above the window's 14 kernels and memsets)" {
    cli short run --set AUTOGRAPH_MIN_OPS=100 --summary-file "$tmp/short.sum" -- "$prog" 20 4 3
    [ "$rc" -eq 0 ]
    grep -qx 'templates 0' "$tmp/short.sum"
    grep -q '^skip too_short [1-9]' "$tmp/short.sum"
    # its 10 event records and waits do not count towards the length
    cli long run --set=AUTOGRAPH_MIN_OPS=14 --summary-file="$tmp/long.sum" -- "$prog" 20 4 3
    grep -qx 'templates 1' "$tmp/long.sum"
    cli longer run --set=AUTOGRAPH_MIN_OPS=15 --summary-file="$tmp/longer.sum" -- "$prog" 20 4 3
    grep -qx 'templates 0' "$tmp/longer.sum"
}

@test "run: every option becomes its variable; the library goes first in LD_PRELOAD" {
    LD_PRELOAD="$PWD/build/sim/libcuda.so.1" cli env run --off --explain --summary \
        --summary-file S --trace T --timing X --liveness warn --set AUTOGRAPH_WARMUP=3 \
        --lib build/libautograph.so -- printenv
    [ "$rc" -eq 0 ]
    for v in AUTOGRAPH=off AUTOGRAPH_EXPLAIN=1 AUTOGRAPH_SUMMARY=1 AUTOGRAPH_SUMMARY_FILE=S \
             AUTOGRAPH_TRACE=T AUTOGRAPH_TIMING=X AUTOGRAPH_CHECK_LIVENESS=warn \
             AUTOGRAPH_WARMUP=3 "LD_PRELOAD=$PWD/build/libautograph.so:$PWD/build/sim/libcuda.so.1"
    do
        grep -qxF -- "$v" "$tmp/env.out" || { echo "missing: $v"; return 1; }
    done
    # and no other (AUTOGRAPH_GUARD_MS=0 and AUTOGRAPH_CHUNK_TUNE=0 are the suites' own,
    # sim_run.bash)
    [ "$(grep -v -e '^AUTOGRAPH_GUARD_MS=0$' -e '^AUTOGRAPH_CHUNK_TUNE=0$' "$tmp/env.out" |
         grep -c '^AUTOGRAPH')" -eq 8 ]
}

@test "run: the library beside the executable or installed (PREFIX/bin, PREFIX/lib); missing: one line, status 2" {
    [ "$(head -c 2 "$ag")" != '#!' ] || skip "build/autograph is a wrapper script (memcheck)"
    mkdir -p "$tmp/alone" "$tmp/prefix/bin" "$tmp/prefix/lib"
    cp "$ag" "$tmp/alone/autograph"
    cp "$ag" "$tmp/prefix/bin/autograph"
    cp build/libautograph.so "$tmp/prefix/lib/libautograph.so"
    ag=$tmp/alone/autograph
    cli alone run -- printenv LD_PRELOAD
    [ "$rc" -eq 2 ]
    one_line alone "^autograph: libautograph.so not found \(looked for $tmp/alone/../lib/libautograph.so and $tmp/alone/libautograph.so\); name it with --lib PATH$"
    ag=$tmp/prefix/bin/autograph
    cli installed run -- printenv LD_PRELOAD
    [ "$rc" -eq 0 ]
    [ "$(cat "$tmp/installed.out")" = "$tmp/prefix/lib/libautograph.so" ]
}

@test "run: a missing program or --lib is one line, status 2" {
    cli noprog run -- "$tmp/no-such-program" 1
    [ "$rc" -eq 2 ]
    one_line noprog "^autograph: cannot run $tmp/no-such-program: No such file or directory$"
    cli nolib run --lib "$tmp/no.so" -- true
    [ "$rc" -eq 2 ]
    one_line nolib "^autograph: --lib $tmp/no.so: no such readable file$"
    cli cmpnoprog compare -n 1 -- "$tmp/no-such-program"
    [ "$rc" -eq 2 ]
    one_line cmpnoprog "^autograph: cannot run $tmp/no-such-program: No such file or directory$"
}

@test "timing: header, one line per window with the program's counts, held only with graphing on" {
    for m in on off; do
        cli "t$m" run --set AUTOGRAPH="$m" --timing "$tmp/t$m.%p" -- "$prog" 30 4 3
        [ "$rc" -eq 0 ]
        absent unknown "$tmp/t$m.err"
        f=$(echo "$tmp/t$m".[0-9]*)
        [ -f "$f" ]
        head -n 1 "$f" | grep -qx "# libautograph timing v1 pid ${f##*.} mode $m"
        tail -n 1 "$f" | grep -qx '# end windows 30'
        [ "$(grep -vc '^w [0-9]* [0-9]* [0-9]* [0-9]* [0-9]*$' "$f")" -eq 2 ]
        # every window: 24 submits (13 launches, 4 records, 6 waits, 1 memset; the first
        # also the setup's 4 cuMemsetD32); the time inside the driver and the shim's own
        # time are parts of the latency, and the shim spent some time on its calls
        awk '/^w /{ if ($3 != (++n == 1 ? 28 : 24) || $2 <= 0 || $4 + $6 > $2 || $5 > $3 ||
                        $6 <= 0) bad++ }
             END{ exit bad > 0 }' "$f"
    done
    [ "$(windows "$(echo "$tmp"/toff.[0-9]*)")" = "30 724 0" ]
    awk '/^w /{ if ($4 <= 0) bad++ } END{ exit bad > 0 }' "$tmp"/toff.[0-9]*
    # graphing on: after the warm-up every window runs as a graph: all 24 held, 0 ns in the driver
    [ "$(awk '/^w / && $5 == 24 && $4 == 0' "$tmp"/ton.[0-9]* | wc -l)" -ge 25 ]
}

@test "timing: a synchronous copy to or from host memory ends the window, passed or held alike" {
    # staged_copies sync: per iteration a launch, a synchronous memset (work that does
    # not wait), a launch, cuMemcpyHtoD (the host waits: window 1 ends), two launches,
    # cuMemcpyDtoH (window 2 ends), another cuMemcpyDtoH (no window open); the setup
    # makes one window more. The engine holds those copies in graphs, yet the windows
    # are the same with graphing on
    for m in off on; do
        cli "y$m" run --set AUTOGRAPH="$m" --timing "$tmp/y$m.%p" -- \
            build/sim/progs/staged_copies sync 40
        [ "$rc" -eq 0 ]
        f=$(echo "$tmp/y$m".[0-9]*)
        awk '/^w /{ print $3 }' "$f" | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }' \
            >"$tmp/y$m.shape"
        echo "$m: $(cat "$tmp/y$m.shape")"
        [ "$(cat "$tmp/y$m.shape")" = "2:40 3:41 " ]
    done
    [ "$(windows "$(echo "$tmp"/yoff.[0-9]*)")" = "81 203 0" ]
    local n submits held
    read -r n submits held <<<"$(windows "$(echo "$tmp"/yon.[0-9]*)")"
    [ "$n $submits" = "81 203" ] && [ "$held" -gt 100 ]
}

@test "timing: 9 threads, the buffer spilling while they race: every window and submit, both modes" {
    for m in on off; do
        cli "s$m" run --set AUTOGRAPH="$m" --timing "$tmp/s$m.%p" -- build/sim/progs/threads_stress
        [ "$rc" -eq 0 ]
        read -r n s h < <(windows "$(echo "$tmp/s$m".[0-9]*)")
        echo "$m: $n windows, $s submits, $h held"
        # per worker: 60 windows + 1 (the final copy), 333 submits; main: 1 window of its
        # 9 synchronous memsets and 8 records, ended by the sync after the join
        [ "$n" -eq 489 ]
        [ "$s" -eq 2681 ]
        tail -n 1 "$tmp/s$m".[0-9]* | grep -qx '# end windows 489'
        if [ "$m" = on ]; then [ "$h" -gt 0 ]; else [ "$h" -eq 0 ]; fi
    done
}

@test "timing: a thread that submits and never waits is counted in the window of the thread that waits" {
    # engine_cases threads: per iteration the main thread submits 8 calls (3 launches;
    # a wait and 4 launches), the second thread 8 (5 launches, 2 records, a wait) and
    # never synchronizes; the main thread's cuStreamSynchronize ends each window
    [ -x build/sim/progs/engine_cases ] || skip "engine_cases not built (make sim)"
    for m in on off; do
        cli "p$m" run --set AUTOGRAPH="$m" --timing "$tmp/p$m.%p" -- \
            build/sim/progs/engine_cases threads 20
        [ "$rc" -eq 0 ]
        f=$(echo "$tmp/p$m".[0-9]*)
        tail -n 1 "$f" | grep -qx '# end windows 20'
        # the first window also has the setup's submits; every other one both threads' 16
        awk '/^w /{ if (++n > 1 && $3 != 16) bad++ } END{ exit bad > 0 || n != 20 }' "$f"
    done
    awk '/^w /{ if ($4 <= 0) bad++ } END{ exit bad > 0 }' "$tmp"/poff.[0-9]*
    [ "$(windows "$(echo "$tmp"/poff.[0-9]*)" | cut -d' ' -f3)" -eq 0 ]
    # graphing on: once built, both threads' work is held (a graph replays it)
    [ "$(awk '/^w / && $5 == 16' "$tmp"/pon.[0-9]* | wc -l)" -ge 10 ]
}

@test "timing: unset writes nothing; an unwritable file is one line and the program runs on" {
    cli none run -- "$prog" 5 4 3
    [ "$rc" -eq 0 ]
    [ ! -s "$tmp/none.err" ]
    [ -z "$(find "$tmp" -name 'timing*')" ]
    cli bad run --timing "$tmp/no/such/dir/t" -- "$prog" 5 4 3
    [ "$rc" -eq 0 ]
    one_line bad "^libautograph: AUTOGRAPH_TIMING: cannot write $tmp/no/such/dir/t \(No such file or directory\); no timing$"
    cmp "$tmp/none.out" "$tmp/bad.out"
}

@test "compare -n 3: report, exit 0, an SVG xml.etree parses, JSON with the same counts" {
    cli cmp compare -n 3 --svg "$tmp/c.svg" --json "$tmp/c.json" --keep "$tmp/runs" -- \
        "$prog" 40 4 3
    cat "$tmp/cmp.out"
    [ "$rc" -eq 0 ]
    for line in "autograph compare: $prog 40 4 3" \
            '3 runs per side, alternating; the first 2 windows of each run left out' \
            'windows measured  *114  *114$' 'submits per window  *24.0  *24.0$' \
            'submits held \(run in graphs\)  *0.0%  *(9[0-9].[0-9]|100.0)%$' \
            '^speedup off/on at p50: [0-9.]*x \(p25..p75 of the per-run ratios of medians: [0-9.]*x..[0-9.]*x\)$' \
            '^speedup off/on at p90: [0-9.]*x' '^kernel launches graphed \(graphing on\): 9[0-9.]*% \([0-9]* of 1560\)$' \
            '^time inside launch calls per window, graphing off: [0-9.]* (ns|us|ms|s) \(median\), [0-9.]*% of the p50 window: the most graphing can remove \(at most about [0-9.]*x at p50\)$' \
            '^recovered: ' \
            '^stdout: identical in all 6 runs$' "^figure: $tmp/c.svg$" "^runs kept in: $tmp/runs$"; do
        grep -qE -- "$line" "$tmp/cmp.out" || { echo "missing: $line"; return 1; }
    done
    for d in off-1 off-2 off-3 on-1 on-2 on-3; do
        [ -s "$tmp/runs/$d/stdout" ]
        ls "$tmp/runs/$d"/timing.[0-9]* >/dev/null
    done
    [ -z "$(ls "$tmp/runs/off-1" | grep summary)" ]
    ls "$tmp/runs/on-1"/summary.[0-9]*
    python3 - "$tmp/c.svg" "$tmp/c.json" "$prog" <<'PY'
import json, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
assert any(sys.argv[3] + " 40 4 3" in t and "autograph compare" in t for t in texts), texts[:3]
assert any("3 runs per side" in t for t in texts)
assert any("window latency" in t for t in texts) and any("share of windows" in t for t in texts)
assert sum(t.startswith("graphing off: 114 windows") or t.startswith("graphing on: 114 windows")
           for t in texts) == 2, texts
for p in ("p50 ", "p90 ", "p99 "):
    assert sum(t.startswith(p) for t in texts) == 2, p
curves = list(root.iter(ns + "polyline"))
assert len(curves) == 2 and all(len(c.get("points").split()) > 100 for c in curves)
j = json.load(open(sys.argv[2]))
assert j["format"] == "autograph compare v1" and j["runs"] == 3 and j["warmup_windows"] == 2
assert j["program"] == [sys.argv[3], "40", "4", "3"]
off, on = j["off"], j["on"]
assert off["windows"] == on["windows"] == 114 and off["windows_in_files"] == 120
assert off["submits_per_window"] == on["submits_per_window"] == 24
# the synchronous memsets before the loop join its first window (held since staging):
# the first window measured is the one that completes the warm-up
assert off["held_share"] == 0 and on["held_share"] >= 0.95, on["held_share"]
assert off["launch_ns_median"] > 0 and on["launch_ns_median"] == 0
assert len(off["wall_s"]) == len(on["wall_s"]) == 3
assert on["kernel_launches"] == 3 * 40 * 13 and 0.9 < j["graphed_share"] <= 1
assert off["latency_ns_p50"] <= off["latency_ns_p90"] <= off["latency_ns_p99"]
s = j["speedup"]
assert abs(s["p50"] - off["latency_ns_p50"] / on["latency_ns_p50"]) < 1e-6
assert s["p50_p25"] <= s["p50_p75"] and j["stdout"] == "identical"
share = off["launch_ns_median"] / off["latency_ns_p50"]
assert 0 < share < 1 and abs(j["launch_share_off"] - share) < 1e-6, j["launch_share_off"]
assert abs(j["ceiling_p50"] - 1 / (1 - share)) < 1e-6, j["ceiling_p50"]
PY
}

@test "compare: no window left after the warm-up: one line says so, the wall times stand, status 0" {
    # staged_copies burst synchronizes only at its end: one window a run, left out by
    # the default --warmup 2
    cli nowin compare -n 1 --svg none -- build/sim/progs/staged_copies burst 50
    [ "$rc" -eq 0 ]
    grep -qE 'windows measured +0 +0$' "$tmp/nowin.out"
    grep -qE 'submits per window +n/a +n/a$' "$tmp/nowin.out"
    grep -qE 'wall time, median +[0-9.]+ (us|ms|s) +[0-9.]+ (us|ms|s)$' "$tmp/nowin.out"
    grep -qx 'no window measured: no run had more than the 2 left out (--warmup 0 keeps them; a program that synchronizes only at its end has one); the wall times still compare the runs' "$tmp/nowin.out"
    cli allwin compare -n 1 --warmup 0 --svg none -- build/sim/progs/staged_copies burst 50
    [ "$rc" -eq 0 ]
    grep -qE 'windows measured +[1-9][0-9]* +[1-9][0-9]*$' "$tmp/allwin.out"
    absent '^no window measured' "$tmp/allwin.out"
}

@test "compare: --svg none and the default compare.svg; warm-up windows left out as asked" {
    mkdir "$tmp/cwd"
    (cd "$tmp/cwd"; "$ag" compare -n 1 --svg none -- "$prog" 10 4 3 >"$tmp/none.out")
    [ -z "$(ls "$tmp/cwd")" ]
    grep -q 'windows measured  *8  *8$' "$tmp/none.out"
    absent '^figure' "$tmp/none.out"
    (cd "$tmp/cwd"; "$ag" compare -n 1 --warmup 0 -- "$prog" 10 4 3 >"$tmp/def.out")
    python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/cwd/compare.svg"
    grep -q 'windows measured  *10  *10$' "$tmp/def.out"
    grep -qx 'figure: compare.svg' "$tmp/def.out"
}

@test "compare: a run of one is 'run', not 'runs'; a long command gets a smaller title font in the SVG, not one cut off" {
    cli one compare -n 1 --svg "$tmp/short.svg" -- "$prog" 10 4 3
    [ "$rc" -eq 0 ]
    grep -qx '1 run per side, alternating; the first 2 windows of each run left out' "$tmp/one.out"
    cli long compare -n 1 --svg "$tmp/long.svg" -- sh -c \
        'exec "$0" 10 4 3 # a comment long enough to make the whole command line wider than the figure' "$prog"
    [ "$rc" -eq 0 ]
    python3 - "$tmp/short.svg" "$tmp/long.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
def title(path):
    t = [e for e in ET.parse(path).getroot().iter(ns + "text") if e.get("y") == "28"]
    assert len(t) == 1 and "".join(t[0].itertext()).startswith("autograph compare: "), path
    return t[0], float(t[0].get("font-size"))
short, short_font = title(sys.argv[1])
long, long_font = title(sys.argv[2])
assert short_font == 16, short_font
# about 9 px a character at 16 px: the long title must fit 820 px at its font
chars = len("".join(long.itertext()))
assert 11 <= long_font < 16 and chars * 9 * long_font / 16 <= 820 + 1, (chars, long_font)
assert any("1 run per side" in "".join(e.itertext()) for e in ET.parse(sys.argv[2]).getroot().iter(ns + "text"))
PY
}

@test "compare: different stdout between the sides is status 3; output that changes from run to run is not compared" {
    cli differ compare -n 2 --svg none -- sh -c 'echo "$AUTOGRAPH"; exec "$0" 10 4 3' "$prog"
    cat "$tmp/differ.out"
    [ "$rc" -eq 3 ]
    grep -qx 'WARNING: stdout of run on-1 differs from run off-1: graphing changed what the program printed' \
        "$tmp/differ.out"
    cli unstable compare -n 2 --svg none -- sh -c 'echo $$; exec "$0" 10 4 3' "$prog"
    [ "$rc" -eq 0 ]
    grep -qx 'stdout: not compared: it differs between runs with graphing off (--check REGEX compares only the lines that should not change)' "$tmp/unstable.out"
}

@test "compare --check: only the matching lines of stdout are compared; none matching is status 2" {
    cli chk compare -n 2 --svg none --json "$tmp/chk.json" --check '^result ' -- \
        sh -c 'echo "pid $$"; echo "result 42"; exec "$0" 10 4 3' "$prog"
    cat "$tmp/chk.out"
    [ "$rc" -eq 0 ]
    grep -qx "stdout: the 1 line matching --check '^result ' identical in all 4 runs" "$tmp/chk.out"
    grep -q '"stdout": "identical", "stdout_check": "^result ", "stdout_lines_checked": 1' "$tmp/chk.json"
    cli chkdiff compare -n 2 --svg none --check '^result ' -- \
        sh -c 'echo "pid $$"; echo "result $AUTOGRAPH"; exec "$0" 10 4 3' "$prog"
    [ "$rc" -eq 3 ]
    grep -qx 'WARNING: stdout of run on-1 differs from run off-1: graphing changed what the program printed' \
        "$tmp/chkdiff.out"
    cli chknone compare -n 1 --svg none --check '^nothing' -- "$prog" 10 4 3
    [ "$rc" -eq 2 ]
    grep -qx "stdout: not compared: no line matches --check '^nothing'" "$tmp/chknone.out"
    one_line chknone "^autograph: --check '\\^nothing': no line of the program's stdout matches it$"
}

@test "compare: a failing program, or one that never uses CUDA, is status 2 with the reason" {
    cli boom compare -n 2 -- sh -c 'echo boom >&2; exit 4'
    [ "$rc" -eq 2 ]
    grep -qx 'autograph: sh exited with status 4 (run 1, graphing off); its stderr ends:' "$tmp/boom.err"
    grep -qx '  | boom' "$tmp/boom.err"
    cli nocuda compare -n 1 --svg none -- true
    [ "$rc" -eq 2 ]
    one_line nocuda '^autograph: true recorded no window'
}

@test "usage errors: status 1 and one line" {
    usage none
    usage unknown frob
    usage noprog run
    usage dashdash run --
    usage badopt run --bogus -- true
    usage notswitch run --set FOO=1 -- true
    usage unknownswitch run --set AUTOGRAPH_FOO=1 -- true
    usage badcheck compare --check '(' -- true
    usage noequals run --set AUTOGRAPH_WARMUP -- true
    usage liveness run --liveness maybe -- true
    usage novalue run --trace
    usage runs0 compare -n 0 -- true
    usage runsabc compare -n abc -- true
    usage warmupneg compare --warmup -1 -- true
    usage cmpset compare --set AUTOGRAPH=off -- true
    usage cmptiming compare --set AUTOGRAPH_TIMING=x -- true
    usage cmprunopt compare --summary -- true
    usage helpfrob help frob
    usage helptwo help run compare
    one_line liveness "^autograph run: --liveness takes off, warn or error, not 'maybe' \(see autograph help run\)$"
    one_line unknownswitch "^autograph run: --set: 'AUTOGRAPH_FOO' is not a switch of libautograph"
}

@test "help: every command's manual, on stdout, status 0; run's lists every switch docs/switches.md documents" {
    for args in --help -h help "help run" "help compare" "help report" "help help" \
            "run --help" "compare -h" "report --help" "help --help"; do
        # shellcheck disable=SC2086
        cli help $args
        [ "$rc" -eq 0 ]
        [ ! -s "$tmp/help.err" ]
        for part in SYNOPSIS DESCRIPTION 'EXIT STATUS'; do
            grep -q "^$part" "$tmp/help.out" || { echo "$args: no $part"; return 1; }
        done
    done
    for cmd in run compare report; do
        cli help help "$cmd"
        grep -q '^EXAMPLES' "$tmp/help.out"
        grep -q "^  autograph $cmd" "$tmp/help.out"
    done
    cli help help run
    for name in $(sed -n 's/^AG_SWITCH(\(.*\))$/\1/p' shim/switches.def); do
        grep -qw -- "$name" "$tmp/help.out" || { echo "help run lacks $name"; return 1; }
        grep -q "^| \`$name\` |" docs/switches.md || { echo "docs/switches.md lacks $name"; return 1; }
    done
}

@test "report: runs the analyzer beside it with the arguments; none found is status 2" {
    [ -x build/autograph-analyze ] || skip "analyzer not built (zlib.h missing)"
    build/autograph-analyze tests/analyzer/kineto_nokeys.json >"$tmp/direct.out" || [ $? -eq 3 ]
    cli rep report tests/analyzer/kineto_nokeys.json
    [ "$rc" -eq 3 ]     # the analyzer's status: undecided
    cmp "$tmp/direct.out" "$tmp/rep.out"
    cli rephelp report -- --help
    grep -q '^usage: autograph-analyze' "$tmp/rephelp.out" "$tmp/rephelp.err"
    [ "$(head -c 2 "$ag")" != '#!' ] || skip "build/autograph is a wrapper script (memcheck)"
    mkdir "$tmp/bin"
    cp "$ag" "$tmp/bin/autograph"
    ag=$tmp/bin/autograph
    PATH=/usr/bin:/bin cli none report x.json
    [ "$rc" -eq 2 ]
    one_line none "^autograph: autograph-analyze not found \(looked for $tmp/bin/autograph-analyze, then in PATH\)$"
}

@test "compare: runs whose speed guard paused graphing (graphs made slow on the simulator) say so, with the guard's verdict, in the report and the JSON" {
    SIM_LAUNCH_US=20 SIM_GRAPH_LAUNCH_US=2000 cli cmp compare -n 2 --svg none \
        --json "$tmp/c.json" --set AUTOGRAPH_GUARD_MS=1 -- "$prog" 800 4 3
    cat "$tmp/cmp.out"
    [ "$rc" -eq 0 ]
    grep -qE '^speed guard, in each run with graphing on: eager took 0\.[0-9]+x the time of graphed work \(median of 2 runs. last verdicts\); 2 runs paused graphing at least once$' "$tmp/cmp.out"
    python3 - "$tmp/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert 0 < d["guard_speedup"] < 1 and d["guard_runs"] == 2 and d["guard_runs_paused"] == 2, d
PY
    cli plain compare -n 2 --svg none -- "$prog" 40 4 3      # the guard off: no such line
    ! grep -q '^speed guard' "$tmp/plain.out"
}
