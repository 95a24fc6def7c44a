#!/usr/bin/env bats
# engine_sim.bats -- property test of the graphing engine on the CPU simulator.
#
# build/sim/progs/engine_fuzz SEED NOPS [noevents] (tests/sim/progs/engine_fuzz.c) builds
# a random multi-stream program from SEED and runs it until NOPS stream operations
# were submitted.  Every run is made without the shim and with
# LD_PRELOAD=build/libautograph.so, both with SIM_LOG_SKIP=event (the shim adds its
# own join events) and SIM_LOG_STREAMS=hide (captured nodes carry the label of the
# shim's capture stream): exit status 0, stdout (host-side checksums) and the
# execution log must be identical byte for byte.  The engine's exit summaries must
# show that it really graphed: a passthrough shim fails the tests that say so.
#
# Reproduce one run by hand (the failure message prints the exact command):
#   LD_LIBRARY_PATH=build/sim SIM_LOG=/tmp/a.log SIM_LOG_SKIP=event SIM_LOG_STREAMS=hide \
#       build/sim/progs/engine_fuzz 7 4000
#   ... again with LD_PRELOAD=$PWD/build/libautograph.so SIM_LOG=/tmp/b.log; diff the logs
#   ENGINE_FUZZ_DUMP=1 describes the generated program on stderr.
#
# A run is named by a spec: "SEED" or "SEED:noevents".  In noevents programs the
# program itself never calls cuStreamCreate, cuEventCreate, cuEventRecord or
# cuStreamWaitEvent, so SIM_FAIL=<one of those>:k hits the shim's own call.
#
# build/sim/progs/engine_cases MODE ITER [EVERY] (tests/sim/progs/engine_cases.c) runs
# fixed workloads the random programs do not make: function attribute sets inside
# every iteration (the same value, or one that changes), one window's ops submitted by
# two threads in turn, the legacy stream forked and joined with a non-blocking or a
# blocking created stream.  Same comparison with and without the shim; the summary and
# AUTOGRAPH_EXPLAIN=1 say whether the engine graphed, ended windows or dropped graphs.
#
# build/sim/progs/collective MODE ITER [KERNEL] (tests/sim/progs/collective.c) runs a loop
# whose window holds two collectives (a kernel named as NCCL's): the same comparison, and
# each collective must have run when its call returned (never held past it).
#
# build/sim/progs/churn MODE ITER (tests/sim/progs/churn.c) makes and destroys events,
# a stream or a pinned buffer every iteration: the same sum, and graphed.

# Property test (a): >= 100000 ops per run of this file, fixed for CI.
FUZZ_OPS=4000
FUZZ_SPECS=(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20
            101:noevents 102:noevents 103:noevents 104:noevents 105:noevents)
# (b) other AUTOGRAPH_WARMUP values, (d) AUTOGRAPH=off / AUTOGRAPH_EXPLAIN=1
WARMUP_SPECS=(13 19 101:noevents)
OFF_SPECS=(1 13 101:noevents)
# (b5) programs slower than their GPU: paced windows, chunks handed to the launcher
PACED_SPECS=(2 5 13 17 19 101:noevents 104:noevents)
# (c) fault injection: the driver functions the shim itself calls.  Each one fails
# on its 1st call (those in SHIM_FAULT_AT3 also on their 3rd, and SHIM_FAULT_LATER
# lists later calls, in the middle of replays) under SIM_FAIL; the engine must fall
# back to eager execution.  A spec whose program calls the function itself does
# not test it (the noevents spec tests them all).
SHIM_DRIVER_CALLS="cuStreamCreate cuEventCreate cuStreamBeginCapture_v2 cuStreamEndCapture
    cuStreamGetCaptureInfo_v3 cuGraphInstantiateWithFlags cuGraphLaunch
    cuGraphExecKernelNodeSetParams_v2 cuGraphKernelNodeGetParams_v2 cuEventRecord
    cuStreamWaitEvent cuGraphDestroy cuGraphExecDestroy cuGraphEventRecordNodeSetEvent
    cuGraphExecEventRecordNodeSetEvent"
SHIM_FAULT_AT3="cuGraphLaunch cuGraphExecKernelNodeSetParams_v2"
SHIM_FAULT_LATER="cuGraphLaunch:40 cuGraphExecKernelNodeSetParams_v2:300 cuEventRecord:100
    cuStreamWaitEvent:101 cuStreamBeginCapture_v2:2 cuGraphInstantiateWithFlags:2"
FAULT_SPECS=(101:noevents 13)
FAULT_OPS=3000
# ... and these must really be called by the shim on FAULT_SPECS (else (c) tests nothing)
SHIM_FAULT_MUST_REACH="cuStreamBeginCapture_v2 cuStreamEndCapture cuGraphInstantiateWithFlags
    cuGraphLaunch"

source "$BATS_TEST_DIRNAME/sim_run.bash"   # (not `load`: this file defines a load())

setup() {
    sim_setup engine_fuzz ENGINE_FUZZ_
}

# (Helpers avoid subshells and external commands where they can: under bats every
# fork costs milliseconds, and the property test makes hundreds of runs.)

# fuzz TAG SPEC NOPS [VAR=VALUE...]: one run of engine_fuzz with those variables;
# leaves $tmp/TAG.{log,out,err}, the exit status in rc_TAG and the command in cmd_TAG
fuzz() {
    local tag=$1 spec=$2 nops=$3
    shift 3
    local args=("${spec%%:*}" "$nops")
    [[ "$spec" != *:noevents ]] || args+=(noevents)
    sim_run "$tag" engine_fuzz "$@" -- "${args[@]}"
}

# fuzz_shim TAG SPEC NOPS [VAR=VALUE...]: the same with the shim (summary in $tmp/TAG.summary)
fuzz_shim() {
    local tag=$1 spec=$2 nops=$3
    shift 3
    fuzz "$tag" "$spec" "$nops" LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/$tag.summary" "$@"
}

# sim_pair PROG ARG... : build/sim/progs/PROG ARG... without the shim (run "plain") and
# with it (run "shim"); fails unless both exit 0 with the same stdout and SIM_LOG; loads
# the summary into S.  Skips where PROG is not built.
sim_pair() {
    local prog=$1
    shift
    [ -x "build/sim/progs/$prog" ] || skip "$prog not built (make sim)"
    sim_run plain "$prog" -- "$@"
    sim_run shim "$prog" LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" -- "$@"
    same plain shim "$prog $*" || return 1
    load shim
}

# same REF TAG WHAT: both runs exited 0 with identical stdout and SIM_LOG; else says
# what differs (first differing lines, the commands) and returns 1.
same() {
    local ref=$1 tag=$2 what=$3 rc_ref rc_tag cmd_ref cmd_tag f
    rc_ref=rc_$ref rc_tag=rc_$tag cmd_ref=cmd_$ref cmd_tag=cmd_$tag
    if [ "${!rc_ref}" != 0 ]; then
        echo "FAIL $what: the run without the shim exited ${!rc_ref}"
        tail -n 5 "$tmp/$ref.err"
        echo "  command: ${!cmd_ref}"
        return 1
    fi
    if [ "${!rc_tag}" != 0 ]; then
        echo "FAIL $what: exit status ${!rc_tag} with the shim (want 0); stderr ends:"
        tail -n 5 "$tmp/$tag.err"
        echo "  command: ${!cmd_tag}"
        return 1
    fi
    for f in log out; do
        if ! cmp -s "$tmp/$ref.$f" "$tmp/$tag.$f"; then
            if [ $f = log ]; then
                echo "FAIL $what: SIM_LOG differs; first differing lines (< without the shim, > with):"
            else
                echo "FAIL $what: stdout (checksums) differs; first differing lines:"
            fi
            diff "$tmp/$ref.$f" "$tmp/$tag.$f" | head -n 12
            echo "  without: ${!cmd_ref}"
            echo "  with:    ${!cmd_tag}"
            return 1
        fi
    done
}

# load TAG: reads run TAG's summary into S[key] (numeric "key N" lines; "flush module 2"
# as S[flush module], "skip legacy_mix 40" as S[skip legacy_mix]) and the
# number of ops it submitted (its "engine_fuzz: ... ops=N ..." line) into OPS
load() {
    local k v line
    declare -gA S=()
    OPS=0
    if [ -f "$tmp/$1.summary" ]; then
        while read -r k v; do
            if [[ "$v" =~ ^[0-9]+$ ]]; then
                S[$k]=$v
            elif [[ "$v" =~ ^([a-z_]+)\ ([0-9]+)$ ]]; then      # "flush module 2"
                S["$k ${BASH_REMATCH[1]}"]=${BASH_REMATCH[2]}
            fi
        done <"$tmp/$1.summary"
    fi
    while read -r line; do
        [[ ! "$line" =~ ^engine_fuzz:\ .*\ ops=([0-9]+) ]] || OPS=${BASH_REMATCH[1]}
    done <"$tmp/$1.out"
}

# engine_line SPEC: the engine's counters of the last load, on one line
engine_line() {
    local k line="spec $1: ops=$OPS"
    for k in windows templates replays chunk_launches launches_graphed launches_eager patches \
             variants mismatches events_parked events_repointed launches_held_fast \
             events_held_fast; do
        line+=" $k=${S[$k]:-0}"
    done
    echo "$line"
}

@test "engine (a): property test: random programs log the same with the shim, and it graphs" {
    local spec total=0 graphed=0 replays=0 repointed=0 fast=0 fast_events=0 fails=0
    for spec in "${FUZZ_SPECS[@]}"; do
        fuzz plain "$spec" "$FUZZ_OPS"
        fuzz_shim shim "$spec" "$FUZZ_OPS"
        same plain shim "seed $spec" || fails=$((fails + 1))
        load shim
        total=$((total + OPS))
        graphed=$((graphed + ${S[launches_graphed]:-0}))
        replays=$((replays + ${S[replays]:-0}))
        repointed=$((repointed + ${S[events_repointed]:-0}))
        fast=$((fast + ${S[launches_held_fast]:-0}))
        fast_events=$((fast_events + ${S[events_held_fast]:-0}))
        engine_line "$spec"
    done
    echo "# engine property test: $total ops, ${#FUZZ_SPECS[@]} seeds" >&3
    echo "# engine: launches_graphed $graphed, replays $replays," \
         "graphs re-pointed at events made anew $repointed, launches held by the" \
         "replay's fast path $fast, event records and waits held by it $fast_events over" \
         "the set" >&3
    echo "total: $total ops, $fails failing seeds, launches_graphed $graphed, replays $replays"
    [ "$fails" -eq 0 ]
    [ "$total" -ge 100000 ]
    if [ "$graphed" -eq 0 ] || [ "$replays" -eq 0 ]; then
        echo "FAIL: the shim graphed nothing (launches_graphed $graphed, replays $replays)"
        return 1
    fi
    if [ "$fast" -eq 0 ]; then
        echo "FAIL: no launch took the replay's fast path (launches_held_fast 0)"
        return 1
    fi
    if [ "$fast_events" -eq 0 ]; then
        echo "FAIL: no event record or wait took the replay's fast path (events_held_fast 0)"
        return 1
    fi
}

@test "engine (b): AUTOGRAPH_WARMUP=1 and =3: same log, and graphs" {
    local spec w fails=0 graphed
    for w in 1 3; do
        graphed=0
        for spec in "${WARMUP_SPECS[@]}"; do
            fuzz plain "$spec" "$FUZZ_OPS"
            fuzz_shim shim "$spec" "$FUZZ_OPS" AUTOGRAPH_WARMUP=$w
            same plain shim "seed $spec, AUTOGRAPH_WARMUP=$w" || fails=$((fails + 1))
            load shim
            graphed=$((graphed + ${S[launches_graphed]:-0}))
            echo "warmup $w: $(engine_line "$spec")"
        done
        if [ "$graphed" -eq 0 ]; then
            echo "FAIL: AUTOGRAPH_WARMUP=$w: the shim graphed nothing"
            fails=$((fails + 1))
        fi
    done
    [ "$fails" -eq 0 ]
}

# switched_fuzz COUNTER VAR=VALUE... : the warm-up specs under the shim with VARS (those
# named ENGINE_FUZZ_* change the program: the run without the shim gets them too): the
# same log as without, one line per spec; fails unless something was graphed and the
# summary's COUNTER is above 0 over the set
switched_fuzz() {
    local counter=$1 spec fails=0 graphed=0 seen=0 var prog_vars=()
    shift
    for var in "$@"; do
        [[ $var != ENGINE_FUZZ_* ]] || prog_vars+=("$var")
    done
    for spec in "${WARMUP_SPECS[@]}"; do
        fuzz plain "$spec" "$FUZZ_OPS" "${prog_vars[@]}"
        fuzz_shim shim "$spec" "$FUZZ_OPS" "$@"
        same plain shim "seed $spec, $*" || fails=$((fails + 1))
        load shim
        graphed=$((graphed + ${S[launches_graphed]:-0}))
        seen=$((seen + ${S[$counter]:-0}))
        echo "$*: $(engine_line "$spec") $counter ${S[$counter]:-0}"
    done
    if [ "$graphed" -eq 0 ] || [ "$seen" -eq 0 ]; then
        echo "FAIL: graphed $graphed, $counter $seen: both must be > 0"
        fails=$((fails + 1))
    fi
    [ "$fails" -eq 0 ]
}

@test "engine (b'): AUTOGRAPH_LIGHT_AFTER=1 (light recording after one differing window): same log, and graphs" {
    switched_fuzz light_ops AUTOGRAPH_LIGHT_AFTER=1
}

@test "engine (b''): AUTOGRAPH_LIGHT_AFTER=1 AUTOGRAPH_SKIM_AFTER=1 (skimming after two differing windows): same log, and graphs" {
    switched_fuzz skimmed_ops AUTOGRAPH_LIGHT_AFTER=1 AUTOGRAPH_SKIM_AFTER=1
}

@test "engine (b'''): AUTOGRAPH_CHUNK_TUNE=2 (graphs dropped and rebuilt with other chunk plans as they are timed): same log, and graphs" {
    switched_fuzz tune_rebuilds AUTOGRAPH_CHUNK_TUNE=2
}

@test "engine (b6): a created stream destroyed and made anew at one in two iterations' ends (ENGINE_FUZZ_STREAM_CHURN=2), often with the old handle: same log, and graphs" {
    switched_fuzz launches_graphed ENGINE_FUZZ_STREAM_CHURN=2 || return 1
    grep -q ' streams_made_anew=[1-9]' "$tmp/plain.out"
}

@test "engine (b5): random programs slower than their GPU (ENGINE_FUZZ_PACE_US): paced chunks handed to the launcher thread, spinning or napping: same log, and graphs" {
    local spec env fails=0 graphed handed threaded
    for env in "ENGINE_FUZZ_PACE_US=10" "ENGINE_FUZZ_PACE_US=10 AUTOGRAPH_LAUNCH_POLL_US=5" \
               "ENGINE_FUZZ_PACE_US=4 AUTOGRAPH_CHUNK=2"; do
        graphed=0 handed=0 threaded=0
        for spec in "${PACED_SPECS[@]}"; do
            fuzz plain "$spec" "$FUZZ_OPS"
            # shellcheck disable=SC2086
            fuzz_shim shim "$spec" "$FUZZ_OPS" $env
            same plain shim "seed $spec, $env" || fails=$((fails + 1))
            load shim
            graphed=$((graphed + ${S[launches_graphed]:-0}))
            threaded=$((threaded + ${S[launches_threaded]:-0}))
            handed=$((handed + ${S[launches_threaded]:-0} + ${S[launches_taken_back]:-0}))
            echo "$env: $(engine_line "$spec") paced ${S[templates_paced]:-0}" \
                 "threaded ${S[launches_threaded]:-0} taken_back ${S[launches_taken_back]:-0}"
        done
        # handed to the launcher: launched there, or taken back by the program's thread
        # (under valgrind one thread runs at a time: every launch is taken back)
        if [ "$graphed" -eq 0 ] || [ "$handed" -eq 0 ]; then
            echo "FAIL: $env: graphed $graphed, launches handed to the launcher $handed"
            fails=$((fails + 1))
        fi
        if [ "$(head -c 2 build/sim/progs/engine_fuzz)" != '#!' ] && [ "$threaded" -eq 0 ]; then
            echo "FAIL: $env: no launch made by the launcher thread"
            fails=$((fails + 1))
        fi
    done
    [ "$fails" -eq 0 ]
}

# called TAG: C[function] = how often run TAG (made with SIM_TRACE=1) called it
called() {
    local name n
    declare -gA C=()
    while read -r name n; do
        C[$name]=$n
    done < <(awk '$1 == "sim:" { c[$2]++ } END { for (k in c) print k, c[k] }' "$tmp/$1.err")
}

@test "engine (c): a failing driver call of the shim falls back to eager: same log, exit 0" {
    local spec f e fails=0 runs=0 tested=" " faults=()
    for f in $SHIM_DRIVER_CALLS; do
        faults+=("$f:1")
        [[ " $SHIM_FAULT_AT3 " != *" $f "* ]] || faults+=("$f:3")
    done
    faults+=($SHIM_FAULT_LATER)
    for spec in "${FAULT_SPECS[@]}"; do
        fuzz plain "$spec" "$FAULT_OPS"
        # the driver functions the program calls itself (SIM_FAIL would hit those)
        fuzz trace "$spec" "$FAULT_OPS" SIM_TRACE=1
        [ "$rc_trace" = 0 ]
        called trace
        for e in "${faults[@]}"; do
            f=${e%%:*}
            if [ -n "${C[$f]:-}" ]; then
                echo "seed $spec: the program calls $f itself; SIM_FAIL=$e not injected here"
                continue
            fi
            tested+="$f "
            fuzz_shim shim "$spec" "$FAULT_OPS" SIM_FAIL="$e"
            runs=$((runs + 1))
            same plain shim "seed $spec, SIM_FAIL=$e" || fails=$((fails + 1))
            load shim
            echo "SIM_FAIL=$e: $(engine_line "$spec")"
        done
    done
    echo "# engine fault injection: $runs runs, $fails failed" >&3
    for f in $SHIM_DRIVER_CALLS; do
        if [[ "$tested" != *" $f "* ]]; then
            echo "FAIL: $f was never injected (every fault spec's program calls it)"
            fails=$((fails + 1))
        fi
    done
    [ "$fails" -eq 0 ]
}

@test "engine (c'): the injected functions are really called by the shim on the fault seeds" {
    local spec f n missing=0
    declare -A by_shim=()
    for spec in "${FAULT_SPECS[@]}"; do
        fuzz plain "$spec" "$FAULT_OPS" SIM_TRACE=1
        fuzz_shim shim "$spec" "$FAULT_OPS" SIM_TRACE=1
        [ "$rc_plain" = 0 ]
        [ "$rc_shim" = 0 ]
        called plain
        declare -A program=()
        for f in "${!C[@]}"; do program[$f]=${C[$f]}; done
        called shim
        echo "seed $spec: calls with the shim minus calls without (< 0: program calls replayed in graphs):"
        for f in $SHIM_DRIVER_CALLS; do
            n=$((${C[$f]:-0} - ${program[$f]:-0}))
            by_shim[$f]=$((${by_shim[$f]:-0} + n))
            echo "  $f $n"
        done
    done
    for f in $SHIM_FAULT_MUST_REACH; do
        if [ "${by_shim[$f]}" -lt 3 ]; then
            echo "FAIL: the shim called $f ${by_shim[$f]} times on the fault seeds (want >= 3)"
            missing=$((missing + 1))
        fi
    done
    [ "$missing" -eq 0 ]
}

@test "engine (d): AUTOGRAPH=off: same log, nothing graphed" {
    local spec fails=0
    for spec in "${OFF_SPECS[@]}"; do
        fuzz plain "$spec" "$FUZZ_OPS"
        fuzz_shim shim "$spec" "$FUZZ_OPS" AUTOGRAPH=off
        same plain shim "seed $spec, AUTOGRAPH=off" || fails=$((fails + 1))
        load shim
        engine_line "$spec"
        if [ "${S[launches_graphed]:-0}" -ne 0 ] || [ "${S[replays]:-0}" -ne 0 ]; then
            echo "FAIL seed $spec: AUTOGRAPH=off but the summary counts graphed launches"
            fails=$((fails + 1))
        fi
    done
    [ "$fails" -eq 0 ]
}

@test "engine: AUTOGRAPH_EXPLAIN=1 changes nothing but stderr" {
    local spec fails=0
    for spec in "${OFF_SPECS[@]}"; do
        fuzz plain "$spec" "$FUZZ_OPS"
        fuzz_shim shim "$spec" "$FUZZ_OPS" AUTOGRAPH_EXPLAIN=1
        same plain shim "seed $spec, AUTOGRAPH_EXPLAIN=1" || fails=$((fails + 1))
    done
    [ "$fails" -eq 0 ]
}

@test "engine_fuzz: deterministic and valid without the shim (every seed of the set)" {
    local spec
    for spec in "${FUZZ_SPECS[@]}"; do
        fuzz run1 "$spec" 1000
        fuzz run2 "$spec" 1000 SIM_LOG_STREAMS=show SIM_LOG_SKIP=
        [ "$rc_run1" = 0 ] || { echo "seed $spec: exit $rc_run1"; cat "$tmp/run1.err"; false; }
        cmp "$tmp/run1.out" "$tmp/run2.out"
        # the same ops: only the event lines and the stream labels differ
        diff "$tmp/run1.log" <(grep -v '^event' "$tmp/run2.log" | sed 's/ stream=[^ ]*/ stream=s?/g')
    done
    grep -q ' stream=s[0-9]' "$tmp/run2.log"
    ! grep -q ' stream=[^s]\| stream=s[0-9]' "$tmp/run1.log" || false
    run env LD_LIBRARY_PATH=build/sim build/sim/progs/engine_fuzz 1
    [ "$status" -eq 2 ]
}

# cases ARG... : build/sim/progs/engine_cases ARG... without the shim (run "plain") and
# with it and AUTOGRAPH_EXPLAIN=1 (run "shim"; explain lines in $tmp/shim.err; more
# variables for it in the array CASES_ENV); fails unless both exit 0 with the same
# stdout and SIM_LOG; loads the summary into S and prints the counters the tests below
# look at
cases() {
    local k line="engine_cases $*${CASES_ENV:+ (${CASES_ENV[*]})}:"
    [ -x build/sim/progs/engine_cases ] || skip "engine_cases not built (make sim)"
    sim_run plain engine_cases -- "$@"
    sim_run shim engine_cases LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
        AUTOGRAPH_EXPLAIN=1 "${CASES_ENV[@]}" -- "$@"
    same plain shim "engine_cases $*" || return 1
    load shim
    for k in windows templates templates_paced replays chunk_launches launches_graphed \
             launches_eager retired "flush module" "flush sync" "skip legacy_mix"; do
        line+=" ${k// /_}=${S[$k]:-0}"
    done
    echo "$line"
}

# want KEY OP N: the summary's KEY (as loaded into S; 0 when absent) OP N, else says so
want() {
    if ! [ "${S[$1]:-0}" "$2" "$3" ]; then
        echo "FAIL: summary: $1 is ${S[$1]:-0}, want $2 $3"
        return 1
    fi
}

@test "engine_cases: attribute sets of the value a function already has end no window and drop no graph: same log, graphed" {
    cases attr-same 40
    want "flush module" -le 2        # the first iteration's sets do change the values
    want retired -eq 0
    want replays -ge 30
    want launches_graphed -gt 0
}

@test "engine_cases: a changed dynamic shared memory limit ends no window and keeps the graphs (AUTOGRAPH_SMEM_FLUSH=1: ends it): same log, graphed" {
    cases attr-smem 40
    want "flush module" -le 1        # the policy's first set only
    want windows -le 44              # one a step, and one per copy read at the end
    want retired -eq 0
    want replays -ge 30
    want launches_graphed -gt 0
    local CASES_ENV=(AUTOGRAPH_SMEM_FLUSH=1)
    cases attr-smem 40
    want "flush module" -ge 40       # every iteration, as before the lift
    want retired -eq 0
    want launches_graphed -gt 0
}

@test "engine_cases: a limit lowered under a held launch (cuDNN's toggles) is lifted around its capture and its patch (through the function or the kernel): same log, one window a step, graphed" {
    local how
    for how in function kernel; do
        cases smem-toggle 40 0 $how
        want windows -le 43          # one a step, and one per copy read at the end
        want replays -ge 30
        want patches -ge 1           # add_one's buffer turns: its node is patched
        want launches_graphed -ge 150
        grep -q '^engine_cases: add_one max dynamic shared memory 1024$' "$tmp/shim.out"
    done
}

@test "engine_cases: a held launch over a limit lowered since goes out one by one with the limit lifted around it: same log" {
    cases smem-toggle 40 7
    want replays -ge 30
    grep -q "replay stopped at op 3: a different op" "$tmp/shim.err"
    if grep -q "failed when issued late" "$tmp/shim.err"; then
        echo "FAIL: a held op failed when issued late"
        return 1
    fi
}

@test "engine_cases: a launch over a limit just lowered (through the function or the kernel) fails at its call (the limit asked before the set is not reused): same log" {
    local mode
    for mode in smem-lower smem-lower-kernel; do
        cases $mode 40
        grep -q '^engine_cases: launches over the lowered limit that failed: 8$' "$tmp/plain.out"
        want replays -ge 20          # the windows between the lowered ones
    done
}

@test "engine_cases: a changed cluster scheduling policy ends the window and drops every graph: same log" {
    cases attr-policy 40
    want "flush module" -ge 40
    want launches_graphed -eq 0      # every iteration drops what warmed up
    cases attr-policy 40 5           # every 5th: graphs are built, then dropped
    want retired -gt 0
    grep -q '^libautograph: explain: graph [0-9]* ([0-9]* ops) dropped: a function was reconfigured or a context destroyed$' "$tmp/shim.err"
}

@test "engine_cases: cuLaunchKernelEx launches with a launch attribute take the replay's fast path; one whose attribute differs is not held: same log" {
    cases ex-attrs 40
    want replays -ge 30
    want mismatches -eq 0
    want launches_held_fast -ge $((5 * 30))   # all but each replay's first op
    cases ex-attrs 40 7              # priority 1 at iterations 6, 13, .., 34
    want mismatches -ge 1            # then the replay moves to the other step's template
    [ $((S[mismatches] + S[rematches])) -ge 4 ]
    # AUTOGRAPH_EXPLAIN says what differs, and names the kernels (the driver's names)
    grep -q "replay stopped at op 3: a different op (a kernel, another argument form or launch attributes: scale where the graph has scale)" "$tmp/shim.err"
}

@test "engine_cases: one window's ops from two threads in turn (same stream, and another ordered by events) are graphed: same log" {
    cases threads 40
    want replays -ge 30
    want launches_graphed -gt 0
}

@test "engine_cases: the legacy stream forked and joined with a non-blocking stream shares a graph: same log, graphed" {
    cases legacy-nonblocking 40
    want "skip legacy_mix" -eq 0
    want replays -ge 30
    want launches_graphed -gt 0
}

@test "engine_cases: a fork/join window in chunks of 2 (AUTOGRAPH_CUT_ANYWHERE=1) joins a stream once per launch stream, not per chunk, and forks it back when something else needs it: same log" {
    local CASES_ENV=(AUTOGRAPH_CHUNK=2 AUTOGRAPH_CHUNK_GROWTH=1 AUTOGRAPH_CUT_ANYWHERE=1)
    cases fork-join 40
    want replays -ge 30
    want chunk_launches -eq $((9 * ${S[replays]}))     # 18 ops in chunks of 2
    # the same run with the event lines logged: the program's own eager waits are at
    # most 2 per iteration; joining and forking back per chunk added 2 per chunk (18
    # per replay), the shim now adds at most 4 per replay (its launch stream changes
    # once: s2 alone records e2)
    sim_run events engine_cases LD_PRELOAD="$shim" SIM_LOG_SKIP= "${CASES_ENV[@]}" -- fork-join 40
    [ "$rc_events" -eq 0 ]
    local waits
    waits=$(grep -c '^event_wait' "$tmp/events.log")
    echo "eager waits $waits, replays ${S[replays]}"
    [ "$waits" -le $((2 * 40 + 4 * ${S[replays]})) ]
}

@test "engine_cases: the legacy stream with a blocking stream shares a graph, its implicit order as edges: same log, graphed" {
    cases legacy-blocking 40
    want "skip legacy_mix" -eq 0
    want replays -ge 30
    want launches_graphed -gt 0
}

# The simulator runs graphs in the latest-ready-first order (SIM_GRAPH_ORDER=latest):
# a graph missing one of the legacy stream's implicit orders runs in-place kernels out
# of order and the sums differ (seen with the edges left out).
@test "engine_cases: the legacy stream's implicit order with a blocking stream, as graph edges and chunk cuts (graphs run latest-ready-first): same sums, graphed" {
    local chunk
    for chunk in 8 2; do
        sim_run plain engine_cases SIM_GRAPH_ORDER=latest -- legacy-implicit 40
        sim_run shim engine_cases SIM_GRAPH_ORDER=latest LD_PRELOAD="$shim" \
            AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" AUTOGRAPH_CHUNK=$chunk \
            AUTOGRAPH_CHUNK_GROWTH=1 -- legacy-implicit 40
        [ "$rc_plain" -eq 0 ] && [ "$rc_shim" -eq 0 ]
        cmp "$tmp/plain.out" "$tmp/shim.out"
        load shim
        want "skip legacy_mix" -eq 0
        want launches_graphed -gt 300
        # the implicit order makes every place a cut that adds no order: in chunks
        [ "$chunk" = 8 ] || want chunk_launches -ge $((3 * ${S[replays]}))
    done
}

@test "engine_cases: in chunks of 2 ops the legacy stream with a blocking stream: same log, graphed" {
    CASES_ENV+=(AUTOGRAPH_CHUNK=2 AUTOGRAPH_CHUNK_GROWTH=1)
    cases legacy-blocking 40
    want "skip legacy_mix" -eq 0
    want launches_graphed -gt 0
}

# slow_chunks N PLAN: engine_cases slow 30 5 (40 launches, the program busy 5 us before
# each) with CASES_ENV and debug logging: paced, N chunk launches a replay, and graph 1
# logged as cut by PLAN ("alike ...: 8 8" or "shrinking ...: 16 8", the lengths in order)
slow_chunks() {
    CASES_ENV+=(AUTOGRAPH_LOG=debug)
    cases slow 30 5
    want templates_paced -eq 1
    want replays -ge 20
    want chunk_launches -eq $(($1 * ${S[replays]}))
    grep -q "^libautograph: graph 1: 40 ops, .*: chunks paced ($2\$" "$tmp/shim.err"
}

@test "engine_cases: a program slower than its GPU work gets paced chunks: alike and cut from the start while the launcher thread launches them, cut from the end and shrinking towards it (AUTOGRAPH_CHUNK_GROWTH times) without it; AUTOGRAPH_CHUNK_SLOW_US=0 grows them from the start" {
    local CASES_ENV=(AUTOGRAPH_CHUNK_GROWTH=2)
    slow_chunks 5 'alike, cut from the start): 8 8 8 8 8'      # whatever the growth
    # AUTOGRAPH_CHUNK=16: the rest (8, shorter than a chunk) joins the last chunk: alike
    # chunks are cut from the first op, so that templates of two lengths (steps that
    # part late) have their cuts at the same ops and a replay can move from one to the
    # other in any chunk (it was 24 16, cut from the end)
    CASES_ENV=(AUTOGRAPH_CHUNK=16)
    slow_chunks 2 'alike, cut from the start): 16 24'
    # without the launcher thread, growth 2: 16, 16, 8
    CASES_ENV=(AUTOGRAPH_CHUNK_GROWTH=2 AUTOGRAPH_LAUNCH_THREAD=0)
    slow_chunks 3 'shrinking towards the end): 16 16 8'
    # the default growth, 3: 8, 24, 8 (the rest, as long as the last chunk, stays apart)
    CASES_ENV=(AUTOGRAPH_LAUNCH_THREAD=0)
    slow_chunks 3 'shrinking towards the end): 8 24 8'
    # the same with the rule off: 8, 16, 16 (3 per replay)
    CASES_ENV=(AUTOGRAPH_LOG=debug AUTOGRAPH_CHUNK_SLOW_US=0 AUTOGRAPH_CHUNK_GROWTH=2)
    cases slow 30 5
    want templates_paced -eq 0
    want replays -ge 20
    want chunk_launches -eq $((3 * ${S[replays]}))
    grep -q '^libautograph: graph 1: 40 ops, .*: chunks growing: 8 16 16$' "$tmp/shim.err"
    # AUTOGRAPH_CHUNK_GROWTH: 4 gives 8, 32 (2 per replay); 1 gives 8 x 5
    CASES_ENV=(AUTOGRAPH_CHUNK_SLOW_US=0 AUTOGRAPH_CHUNK_GROWTH=4)
    cases slow 30 5
    want chunk_launches -eq $((2 * ${S[replays]}))
    CASES_ENV=(AUTOGRAPH_CHUNK_SLOW_US=0 AUTOGRAPH_CHUNK_GROWTH=1)
    cases slow 30 5
    want chunk_launches -eq $((5 * ${S[replays]}))
}

@test "engine_cases: a slow program's chunks are launched by the launcher thread (AUTOGRAPH_LAUNCH_THREAD=0: by the program's); a launch that fails there goes out eagerly: same log" {
    local CASES_ENV=()
    cases slow 30 5
    want templates_paced -eq 1
    want replays -ge 20
    # under valgrind (make memcheck: the program is a wrapper script) one thread runs
    # at a time, and the program's takes every launch back before the launcher runs
    if [ "$(head -c 2 build/sim/progs/engine_cases)" != '#!' ]; then
        want launches_threaded -gt 0
    fi
    want launches_threaded -le "${S[chunk_launches]}"
    [ $(( ${S[launches_threaded]} + ${S[launches_taken_back]} )) -eq "${S[chunk_launches]}" ]
    [ -n "${S[launch_wait_us]}" ]      # the program's threads' wait for the launcher, counted
    CASES_ENV=(AUTOGRAPH_LAUNCH_THREAD=0)
    cases slow 30 5
    want launches_threaded -eq 0
    want launches_taken_back -eq 0
    want replays -ge 20
    # a window not paced (its program under the threshold, here a threshold no program
    # reaches: a sanitizer makes any program slow): inline, as without the thread
    CASES_ENV=(AUTOGRAPH_CHUNK_SLOW_US=1000000)
    cases slow 30 5
    want templates_paced -eq 0
    want launches_threaded -eq 0
    # the launcher naps between its looks instead of spinning: the same launches
    CASES_ENV=(AUTOGRAPH_LAUNCH_POLL_US=20)
    cases slow 30 5
    want replays -ge 20
    [ $(( ${S[launches_threaded]} + ${S[launches_taken_back]} )) -eq "${S[chunk_launches]}" ]
    # the 5th graph launch fails (on the launcher, or taken back): its ops go out eagerly
    CASES_ENV=(AUTOGRAPH_INJECT_FAULTS=cuGraphLaunch:5)
    cases slow 30 5
    want retired -ge 1
    grep -q 'launching chunk [0-9]* failed' "$tmp/shim.err"
}

@test "engine_cases: a slow program of two threads (one launch from a helper first) launches its chunks itself, in fewer chunks (AUTOGRAPH_LAUNCH_THREAD=1: by the launcher): same log" {
    local CASES_ENV=() auto_chunks
    cases slow-helper 30 5
    want templates_paced -eq 1
    want replays -ge 20
    want launches_threaded -eq 0
    want launches_taken_back -eq 0
    auto_chunks=${S[chunk_launches]}
    # the same 40-op windows planned for the launcher: alike chunks, more of them
    CASES_ENV=(AUTOGRAPH_LAUNCH_THREAD=1)
    cases slow-helper 30 5
    want templates_paced -eq 1
    [ $(( ${S[launches_threaded]} + ${S[launches_taken_back]} )) -eq "${S[chunk_launches]}" ]
    want chunk_launches -gt "$auto_chunks"
}

@test "engine_cases: AUTOGRAPH_CHUNK_TUNE times each candidate chunk plan over its replays, rebuilds the window with the next, then keeps the fastest: same log" {
    local CASES_ENV=(AUTOGRAPH_LOG=debug AUTOGRAPH_CHUNK_SLOW_US=0 AUTOGRAPH_CHUNK_TUNE=6)
    # 40 launches: 8 x3 (8 24 8), 16 x12 (16 24), 8 x6 (8 32), each timed over 6 replays
    cases slow 90 0
    want plans_tuned -eq 1
    want tune_rebuilds -ge 2
    want replays -ge 40
    local kept last
    for p in "8 x3" "16 x12" "8 x6"; do
        grep -q "^libautograph: graph [0-9]*: chunk plan $p: median replay period [0-9.]* us (IQR [0-9.]* us)$" \
            "$tmp/shim.err" || { echo "FAIL: plan $p was not timed"; return 1; }
    done
    kept=$(sed -n 's/^libautograph: graph [0-9]*: keeps chunk plan \([0-9]* x[0-9]*\) .*/\1/p' "$tmp/shim.err")
    last=$(sed -n 's/^libautograph: graph [0-9]*: 40 ops, .*, plan \([0-9]* x[0-9]*\): chunks.*/\1/p' "$tmp/shim.err" | tail -1)
    echo "kept: '$kept', last graph built: '$last'"
    [ -n "$kept" ] && [ "$kept" = "$last" ]
    grep -q '^libautograph: explain: graph [0-9]* (40 ops) dropped: rebuilt with another chunk plan, to time it (AUTOGRAPH_CHUNK_TUNE)$' "$tmp/shim.err"
    # off (the default): one graph, no tuning
    CASES_ENV=(AUTOGRAPH_CHUNK_SLOW_US=0)
    cases slow 30 0
    want plans_tuned -eq 0
    want tune_rebuilds -eq 0
    want templates -eq 1
}

@test "engine_cases: unloading another module keeps the graphs; unloading their kernels' module drops them: same log" {
    cases unload 40                  # the load and unload come between windows
    want retired -eq 0
    want replays -ge 30
    cases unload 40 10               # every 10th iteration add_one's module goes and comes back
    want retired -ge 3
    want replays -ge 10
    grep -q '^libautograph: explain: graph [0-9]* ([0-9]* ops) dropped: a module or library of its kernels was unloaded$' "$tmp/shim.err"
}

@test "engine_cases: a graph patched to another module's function of the same layout goes when that module is unloaded: same log" {
    cases unload-patched 40
    want patches -ge 1               # the second module's add_two patched in
    want retired -ge 2               # 1 while only the functions a graph was built
                                     # with were looked at
}

@test "engine_cases: a window whose event the program makes anew every step (and destroys after the sync) keeps its graph, its event node patched: same log, graphed" {
    cases event-churn 40
    want retired -eq 0
    want templates -eq 1
    want replays -ge 30
    want events_parked -ge 30        # the destroyed event's node, in the executable
    want events_repointed -ge 30     # patched to the new event before each replay
    want "skip dropped_often" -eq 0
}

@test "engine_cases: a record of a destroyed event is not held: it fails at the same call with the same error: same log" {
    cases event-dead 40
    grep -q '^engine_cases: record of a destroyed event: [1-9]' "$tmp/plain.out"
    want replays -ge 30
    grep -q 'replay stopped at op 2: an event the program destroyed; the held ops were issued eagerly$' "$tmp/shim.err"
}

@test "engine_cases: when an event node cannot be parked, the graph goes (3 times, then dropped_often, then skimmed as futile); when it cannot be patched, the replay goes eager: same log" {
    local fn
    for fn in cuGraphEventRecordNodeSetEvent cuGraphExecEventRecordNodeSetEvent; do
        CASES_ENV=(AUTOGRAPH_INJECT_FAULTS="$fn:1,$fn:2,$fn:3,$fn:4,$fn:5,$fn:6,$fn:7,$fn:8")
        cases event-churn 40
        want retired -ge 3
        want "skip dropped_often" -ge 3
        want futile_windows -ge 20
    done
    # use 1 parks the node at the first destroy, use 2 patches it at the next replay
    CASES_ENV=(AUTOGRAPH_INJECT_FAULTS=cuGraphExecEventRecordNodeSetEvent:2)
    cases event-churn 40
    want retired -eq 1
    want replays -ge 25
    grep -q 'replay stopped at op [0-9]*: launching chunk 0 failed (error 999)' "$tmp/shim.err"
}

# destroys_made: the shim run's new events got a destroyed one's handle at least half as
# often as the plain run's (a destroy the shim held and never made keeps its handle
# taken); nothing to compare where the plain run saw no reuse (ASan holds freed memory)
destroys_made() {
    local plain shim
    plain=$(sed -n 's/^engine_cases: event handle reused //p' "$tmp/plain.err")
    shim=$(sed -n 's/^engine_cases: event handle reused //p' "$tmp/shim.err")
    if [ "${shim:-0}" -lt $(( ${plain:-0} / 2 )) ]; then
        echo "FAIL: handles reused $shim times with the shim, $plain without: destroys not made?"
        return 1
    fi
}

@test "engine_cases: events destroyed inside the window end no window: destroyed at once, or, while a held op names the event, once it went out (AUTOGRAPH_DESTROY_FLUSH=1: a flush point): same log, graphed" {
    cases event-mid 40
    want windows -le 43              # one a step, and one per copy read at the end
    want templates -eq 1
    want build_failures -eq 0        # a destroyed event's record was built on the placeholder
    want replays -ge 35
    want destroys_in_window -ge 76
    want destroys_held -ge 70        # one chunk: both records still held at the destroys
    destroys_made
    local CASES_ENV=(AUTOGRAPH_CHUNK=1 AUTOGRAPH_CHUNK_GROWTH=1)
    cases event-mid 40               # a chunk an op: each record launched before its destroy
    want windows -le 43
    want replays -ge 35
    want destroys_in_window -ge 76
    want destroys_held -eq 0
    destroys_made
    CASES_ENV=(AUTOGRAPH_DESTROY_FLUSH=1)
    cases event-mid 40
    want "flush destroy" -ge 76      # both destroys, every step, as before
    want destroys_in_window -eq 0
}

@test "engine_cases: a second destroy of an event whose destroy is held fails at its call with the driver's error (the first is made there): same log" {
    cases event-twice 40
    grep -q '^engine_cases: a second destroy of an event: [1-9]' "$tmp/plain.out"
    want destroys_held -ge 35
    want "flush destroy" -eq 1
}

@test "engine_cases: a mismatch just after a held destroy: the held ops go out in order, then the destroy: same log" {
    cases event-mid 40 5
    want mismatches -ge 2            # then replays move to the other step's template
    [ $((S[mismatches] + S[rematches])) -ge 5 ]
    want destroys_held -ge 30
    want late_issue_failures -eq 0
    destroys_made
    grep -q 'replay stopped at op 8: a different op' "$tmp/shim.err"
}

# runtime TAG [VAR=VALUE...]: build/sim/progs/runtime_launch 40 with the shim and those
# variables (summary in $tmp/TAG.summary, loaded into S); fails unless it matches the
# run without the shim ("plain", made first); sets MADE and REACHED from its stderr
# (runtime calls the program made, and how many reached the stand-in libcudart)
runtime() {
    local tag=$1 line
    shift
    [ -x build/sim/progs/runtime_launch ] || skip "runtime_launch not built (make sim)"
    [ -f "$tmp/plain.out" ] || sim_run plain runtime_launch -- 40
    sim_run "$tag" runtime_launch LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/$tag.summary" \
        "$@" -- 40
    same plain "$tag" "runtime_launch 40 $*" || return 1
    load "$tag"
    line=$(grep '^runtime_launch: runtime calls' "$tmp/$tag.err")
    [[ "$line" =~ calls\ ([0-9]+),\ reached\ the\ runtime\ ([0-9]+) ]] || return 1
    MADE=${BASH_REMATCH[1]} REACHED=${BASH_REMATCH[2]}
    echo "$tag: held_runtime=${S[launches_held_runtime]:-0} graphed=${S[launches_graphed]:-0} made=$MADE reached=$REACHED"
}

@test "runtime_launch: launches through the runtime's launch calls (a stand-in libcudart, versioned symbols) are held there without the runtime; AUTOGRAPH_HOLD_RUNTIME=0 holds them at the driver only: same log" {
    runtime on
    want launches_held_runtime -ge 600
    want launches_graphed -ge 900
    [ "$REACHED" -le $((MADE - 600)) ]      # the stand-in never saw the held ones
    runtime off AUTOGRAPH_HOLD_RUNTIME=0
    want launches_held_runtime -eq 0
    want launches_graphed -ge 900
    [ "$REACHED" -eq "$MADE" ]
}

@test "runtime_launch: two templates with the same first op (a step with one more launch every 9th step): replays start with the one seen lately, so only those steps mismatch: same log" {
    [ -x build/sim/progs/runtime_launch ] || skip "runtime_launch not built (make sim)"
    sim_run plain runtime_launch -- 45 1
    sim_run shim runtime_launch LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
        -- 45 1
    same plain shim "runtime_launch 45 1" || return 1
    load shim
    echo "templates=${S[templates]} replays=${S[replays]} mismatches=${S[mismatches]}"
    want templates -eq 2
    want mismatches -le 10           # 5 longer steps; each stops a replay (at most) twice
    want replays -ge 30
}

# --- staged copies (shim/record_stage.c) -------------------------------------------

# staged RUN ARGS... [-- VAR=VALUE...]: staged_copies without and with the shim; the
# host's sums and the buffers' sums must agree (SIM_LOG names the ring's addresses).
staged() {
    local args=() vars=()
    [ -x build/sim/progs/staged_copies ] || skip "staged_copies not built (make sim)"
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ "${1:-}" = "--" ] && shift
    vars=("$@")
    sim_run plain staged_copies -- "${args[@]}"
    sim_run shim staged_copies LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
        AUTOGRAPH_EXPLAIN=1 "${vars[@]}" -- "${args[@]}"
    [ "$rc_plain" -eq 0 ] || { cat "$tmp/plain.err"; return 1; }
    [ "$rc_shim" -eq 0 ] || { tail -5 "$tmp/shim.err"; return 1; }
    diff "$tmp/plain.out" "$tmp/shim.out" || return 1
    load shim
    echo "staged_copies ${args[*]} ${vars[*]}: staged_in=${S[staged_in]:-0}" \
         "staged_out=${S[staged_out]:-0} refused=${S[staging_refused]:-0}" \
         "graphed=${S[launches_graphed]:-0} eager=${S[launches_eager]:-0}"
}

@test "staged_copies: pageable copies in and out (the source overwritten at once, the scalar read at the return) are held and graphed: same sums" {
    staged async 200
    want staged_in -ge 300
    want staged_out -ge 150
    want launches_graphed -ge 500
    want unrecorded_calls -eq 0
    # a copy that returns once done ends its window whether it was held or went to the
    # driver: no template is recorded across it (its every replay would stop there)
    want mismatches -le 2
    want retired -eq 0
}

@test "staged_copies: synchronous memsets and copies of a C trainer (legacy stream beside a blocking stream) are held and graphed: same sums" {
    staged sync 200
    want staged_in -ge 150
    want staged_out -ge 150
    want launches_graphed -ge 500
    want unrecorded_calls -eq 0
    want mismatches -le 2            # as above: the synchronous copies end their windows
    want retired -eq 0
}

@test "staged_copies: a page half registered (pinned), half pageable: the pageable half's copy is staged and waited for, not taken for pinned: same sums" {
    staged page 200
    want staged_out -ge 150          # the pageable half's copy, held and waited for
    want launches_graphed -ge 400
}

@test "staged_copies: host memory unmapped and its addresses given to a device temporary: the temporary's copies are taken for device copies, not pageable ones: same sums" {
    local plain
    staged reuse 200
    # the program's buffer and the temporary must share their address, or this tests
    # nothing; under valgrind (make memcheck) memory is placed elsewhere, in both runs
    plain=$(sed -n 's/^staged_copies: host address reused //p' "$tmp/plain.err")
    [ "${plain:-0}" -ge 190 ] || skip "no host address reused as device memory here ($plain of 200)"
    [ "$(sed -n 's/^staged_copies: host address reused //p' "$tmp/shim.err")" -ge 190 ]
    want staged_out -ge 150          # the host buffer's copy only
    want staged_out -le 200
    want mismatches -le 2            # a temporary taken for pageable memory changes the op
    want launches_graphed -ge 900    # of 1000
}

@test "staged_copies: a ring of 1 MiB wraps round many times (slots given back at their fences): same sums" {
    staged async 3000 -- AUTOGRAPH_STAGE_MB=1
    want staged_in -ge 5000
    want staging_refused -eq 0
    want launches_graphed -ge 8000
}

@test "staged_copies: no pinned staging memory (cuMemHostRegister fails): the copies go to the driver, one warning, an explain line: same sums" {
    staged sync 60 -- AUTOGRAPH_INJECT_FAULTS=cuMemHostRegister:1
    want staged_in -eq 0
    want staged_out -eq 0
    [ "$(grep -c 'bytes of staging failed' "$tmp/shim.err")" -eq 1 ]
    grep -q 'explain: window ended by a call that cannot be graphed: no pinned staging memory' \
        "$tmp/shim.err"
}

@test "staged_copies: AUTOGRAPH_STAGE_MB=0 turns staging off: the copies end their windows as before: same sums" {
    staged async 60 -- AUTOGRAPH_STAGE_MB=0
    want staged_in -eq 0
    want unrecorded_calls -gt 0
    grep -q 'staging is off' "$tmp/shim.err"
}

@test "staged_copies: pageable uploads with no synchronization fill the ring: a full ring ends the window, fences what went out, and staging goes on: same sums" {
    staged burst 3000 -- AUTOGRAPH_STAGE_MB=1
    want staging_refused -ge 1
    want staging_refused -le 10
    want staged_in -ge 2900
    want launches_graphed -ge 8000
}

# --- objects made and destroyed every iteration (tests/sim/progs/churn.c) -----------

# churn MODE ITER: sim_pair churn MODE ITER, and what it graphed
churn() {
    sim_pair churn "$@" || return 1
    echo "churn $*: graphed=${S[launches_graphed]:-0} eager=${S[launches_eager]:-0}" \
         "templates=${S[templates]:-0} retired=${S[retired]:-0}"
}

@test "churn: events made, recorded, timed and destroyed every iteration: same sum, graphed, no template rebuilt per iteration" {
    churn events 400
    want launches_graphed -ge 1900   # of 2000 (5 a window)
    want templates -le 4
}

@test "churn: a stream made and destroyed every iteration: same sum, graphed on each new stream, no template rebuilt per iteration" {
    churn streams 400
    want launches_graphed -ge 1900
    want templates -le 4
}

@test "churn: a pinned buffer allocated and freed every iteration (two sizes in turn), copies both ways: same sum, graphed" {
    churn pinned 400
    want launches_graphed -ge 1500   # of 1600
    want templates -le 4
}

# build_cuts.c: a chunk launch is a barrier for its streams, so a fork-join window is
# cut only after its join: the branches stay side by side (8 branches of 4 kernels:
# 56 ops, the plan's first chunk of 8 would end inside the first branch).  Windows on
# one stream are cut as planned (the chunk tests above).
@test "engine_cases: a fork/join window in chunks of 2 is cut only where no order is added (the branches' launches stay in one chunk): same log" {
    local CASES_ENV=(AUTOGRAPH_CHUNK=2 AUTOGRAPH_CHUNK_GROWTH=1)
    cases fork-join 40
    want replays -ge 30
    # 18 ops: e1 recorded on s, s2 waits, 12 launches on s and s2 in turn, e2 recorded on
    # s2, s waits, 2 launches on s: the cuts between the branches' launches move to
    # after the wait for e2 (build_cuts.c): [0,15) [15,16) [16,18)
    want chunk_launches -eq $((3 * ${S[replays]}))
}

@test "branches: a fork-join window is cut into chunks only after its join (no branch waits for another): same log" {
    [ -x build/sim/progs/branches ] || skip "branches not built (make sim)"
    sim_run plain branches -- 10 8 4
    # AUTOGRAPH_CHUNK_SLOW_US=0: growing chunks even where a sanitizer slows the program
    sim_run shim branches LD_PRELOAD="$shim" AUTOGRAPH_LOG=debug AUTOGRAPH_CHUNK_SLOW_US=0 \
        AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" -- 10 8 4
    same plain shim "branches 10 8 4" || return 1
    grep 'chunks growing' "$tmp/shim.err"
    grep -q 'graph 1: 56 ops, .*chunks growing: 54 2$' "$tmp/shim.err"
}

# explained_pair PROGRAM ARG...: PROGRAM without the shim and with it (its summary and
# explain lines), the same log and output; the shim's summary loaded
explained_pair() {
    local prog=$1
    shift
    [ -x "build/sim/progs/$prog" ] || skip "$prog not built (make sim)"
    sim_run plain "$prog" -- "$@"
    sim_run shim "$prog" LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
        AUTOGRAPH_EXPLAIN=1 -- "$@"
    same plain shim "$prog $*" || return 1
    load shim
}

# record_skim.c: skimming stops when a window repeats one of the last 16 skimmed, not
# only the one before; engine.c: a window too short to graph is no step's predecessor,
# so the successor rule picks each shape's template: a cycle of 8 shapes between
# futile one-op windows gets graphed.
@test "cycle_shapes: a cycle of 8 window shapes between futile one-op windows is not skimmed for ever, each replay starts with its own template: same sums, graphed" {
    explained_pair cycle_shapes 400 || return 1
    echo "templates=${S[templates]} replays=${S[replays]} mismatches=${S[mismatches]} graphed=${S[launches_graphed]} eager=${S[launches_eager]}"
    want launches_graphed -ge 5800         # of 6400 (0 before both changes; often less
                                           # while a direct-mapped successor table lost
                                           # one of the 8 shapes to a collision)
    want mismatches -le 80
    # the first replay cut short by the next step's synchronize says which flush point
    grep -q 'replay stopped at op [0-9]*: the window ended before the template did, at a flush point: sync;' \
        "$tmp/shim.err"
}

# match_futile.c, record_skim.c: a step shape that no template starts with, after a
# futile upload, was skimmed at every sighting (skimming went on past the upload and
# stopped only when the step outgrew it, at its end): the one batch size of eight whose
# kernels differ never warmed up.  The upload is now "followed": after it, the next
# window is recorded in full.  The upload comes after steps of two shapes: skimming
# starts after either (one predecessor remembered: 297 of 400 uploads skimmed, the rest
# recorded in full and judged too short again).
@test "batches_cycle: a batch size whose kernels differ, after a futile upload, is recorded and graphed too: same log, graphed" {
    explained_pair batches_cycle 400 || return 1
    echo "templates=${S[templates]} graphed=${S[launches_graphed]} eager=${S[launches_eager]} skimmed=${S[skimmed_windows]}"
    want launches_graphed -ge 6500         # of 6800 (about 5900 before: batch size 1 eager)
    want templates -ge 2
    want futile_windows -ge 380            # the uploads are still skimmed, of 400
    grep -q 'explain: a longer window follows the futile window of 1 ops' "$tmp/shim.err"
}

# ...and where the window after a followed futile shape is futile too (a step too short
# to graph, longer than the upload), the rule ends: both are skimmed, as without it
# (397 of 801 windows skimmed without the end of the rule).
@test "futile_pair: a futile window after a followed futile one ends the rule: both skimmed, same log" {
    explained_pair futile_pair 400 || return 1
    echo "windows=${S[windows]} skimmed=${S[skimmed_windows]} futile=${S[futile_windows]}"
    grep -q 'explain: a longer window follows the futile window of 1 ops' "$tmp/shim.err"
    want skimmed_windows -ge 700           # of 801
}

# decode_long TAG TOKENS SYNC_EVERY: a run with the shim; its peak memory into HWM
decode_long() {
    sim_run "$1" decode_long LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/$1.summary" \
        -- "$2" "$3"
    HWM=$(awk '/^vm_hwm_kb/ { print $2 }' "$tmp/$1.err")
    echo "$1: $2 tokens, sync every $3: peak ${HWM} kB"
}

# decode_long_pair TOKENS FEWER SYNC_EVERY: TOKENS without the shim and with it (same
# sums, its summary loaded), and FEWER with it first: their peaks in HWM and HWM_FEWER
decode_long_pair() {
    [ -x build/sim/progs/decode_long ] || skip "decode_long not built (make sim)"
    sim_run plain decode_long -- "$1" "$3"
    decode_long fewer "$2" "$3"
    HWM_FEWER=$HWM
    decode_long shim "$1" "$3"
    same plain shim "decode_long $1 $3" || return 1
    load shim
}

# peak_within KB: the peak of the longer run is at most KB above the shorter's (not
# under a sanitizer, whose own memory blurs the peaks)
peak_within() {
    [ -n "${AG_TEST_ROOT:-}" ] && return 0
    [ "$HWM" -le $((HWM_FEWER + $1)) ] || { echo "FAIL: peak grew from $HWM_FEWER to $HWM kB"; return 1; }
}

@test "decode_long: a decode loop whose sizes grow, synchronized every token: one template, memory flat from 1000 to 10000 tokens: same sums" {
    decode_long_pair 10000 1000 1 || return 1
    want templates -le 2
    want evicted -eq 0
    want launches_graphed -ge 49000        # of 50000
    peak_within 1024
}

@test "decode_long: the same without a sync for 60000 tokens: the window is bounded (a replay's end ends it past its limit): same sums" {
    decode_long_pair 60000 30000 0 || return 1
    want launches_graphed -ge 299000       # of 300000
    peak_within 2048
}

# decode_long_same ARG...: decode_long ARG... without the shim and with it (same sums),
# the shim run's summary loaded
decode_long_same() {
    [ -x build/sim/progs/decode_long ] || skip "decode_long not built (make sim)"
    sim_run plain decode_long -- "$@"
    sim_run shim decode_long LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
        -- "$@"
    same plain shim "decode_long $*" || return 1
    load shim
}

@test "decode_long: no sync, 4 layers of 11 kernels a token: the token is the period cut, not 3 of its layers: same sums" {
    decode_long_same 400 0 0 11 || return 1
    want mismatches -le 2                  # 399 while a run of 44 ops of period 11 passed
                                           # for two copies of a 33-op block
    want launches_graphed -ge 17500        # of 18000
}

@test "decode_long: no sync, a fifth layer in about one token in 50 (no period): the replays stop there and start again at the next token: same sums" {
    decode_long_same 4000 0 50 || return 1
    want mismatches -ge 40                 # a stop at each odd token
    want templates -le 2
    want launches_graphed -ge 18500        # of 20080 (15690 and 73 templates while a
                                           # stopped template was not started again in
                                           # its window)
}

# layers_cycle TAG CYCLE [VAR=VALUE...]: 400 steps of 24 layers, batch sizes cycling
# (LC_MODE: the program's fourth argument, e.g. alike; LC_BUSY, with LC_MODE: its fifth,
# the microseconds it is busy before each launch)
layers_cycle() {
    local tag=$1 cycle=$2
    shift 2
    [ -x build/sim/progs/layers_cycle ] || skip "layers_cycle not built (make sim)"
    sim_run plain layers_cycle -- 400 24 "$cycle" ${LC_MODE:-} ${LC_BUSY:-}
    sim_run "$tag" layers_cycle LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/$tag.summary" \
        "$@" -- 400 24 "$cycle" ${LC_MODE:-} ${LC_BUSY:-}
    same plain "$tag" "layers_cycle 400 24 $cycle ${LC_MODE:-} ${LC_BUSY:-}" || return 1
    load "$tag"
    echo "$tag: templates=${S[templates]} paced=${S[templates_paced]} replays=${S[replays]} rematches=${S[rematches]} mismatches=${S[mismatches]} period_cuts=${S[period_cuts]} graphed=${S[launches_graphed]} eager=${S[launches_eager]}"
}

@test "layers_cycle: steps of identical layers whose kernels change with a cycling batch size: whole steps graphed (no period cut inside a step, replays move to the template that fits): same sums" {
    layers_cycle shim 4 || return 1
    want launches_graphed -ge 29000        # of 30000 (none before)
    want period_cuts -le 2
    layers_cycle full 8 AUTOGRAPH_LIGHT_AFTER=0 || return 1
    want launches_graphed -ge 33000        # of 34800
    want rematches -ge 50
}

@test "layers_cycle: four step shapes, light recording on: a light window that repeats is recorded in full next time, not skimmed after the futile upload before it: same sums" {
    layers_cycle light 8 || return 1
    want launches_graphed -ge 33000        # of 34800 (16961 while the one-op upload
                                           # window restarted skimming before each step)
    want light_windows -le 20
}

@test "layers_cycle alike: the batch size picks another function of the same parameter layout late in the step: one template's nodes patched to it, no stop: same sums" {
    LC_MODE=alike layers_cycle alike 8 || return 1
    want launches_graphed -ge 29500        # of 30000 (21240 while a launch of another
                                           # function stopped the replay)
    want mismatches -le 8
    want patches -ge 1000
}

@test "layers_cycle late: the batch size changes the second half's layers (another kernel, a launch more): a replay that stops past its first chunk moves to the template that fits, growing chunks and paced ones: same sums" {
    # growing chunks (8, 24, then the rest): the four step shapes part at ops 39 and 40,
    # in the third chunk, which begins at op 32 in all of them; two of them launch
    # another function of the same form in the first half (taken as the same op, as a
    # replay takes it)
    LC_MODE=late layers_cycle grow 8 AUTOGRAPH_CHUNK_SLOW_US=0 || return 1
    want launches_graphed -ge 30000        # of 32400 (22420 while only a replay in
                                           # its first chunk moved, half the steps'
                                           # second halves eager; 26591 while the
                                           # ops before the stop had to be the same
                                           # functions)
    want rematches -ge 100
    want mismatches -le 60                 # 217 then
    # paced (the program busy 5 us before each launch), alike chunks of 8 launched by
    # the launcher thread: cut from the first op, the shapes of 75 and 87 launches have
    # their cuts at the same ops (23220 graphed when only a stop in the first chunk
    # moved, 27003 with late moves but alike chunks cut from the end)
    LC_MODE=late LC_BUSY=5 layers_cycle paced 8 || return 1
    want templates_paced -ge 1
    want launches_graphed -ge 30000        # of 32400
    want rematches -ge 100
}

# qpoll ARG... : sim_pair query_poll ARG... (tests/sim/progs/query_poll.c)
qpoll() { sim_pair query_poll "$@"; }

@test "query_poll: queries of work nothing holds (another stream, its event) end no window; a query of an event a held op records does: same sums, graphed" {
    qpoll 200 || return 1
    echo "templates=${S[templates]} passed=${S[queries_passed]} flush_query=${S[flush query]} graphed=${S[launches_graphed]} eager=${S[launches_eager]}"
    want queries_passed -ge 200            # 400; with an engine per context a query of
                                           # a stream no window names reaches none
    want "flush query" -ge 4               # the event a held (or recorded) record
    want "flush query" -le 5               # makes, every 50th
    want launches_graphed -ge 4600         # of 4800 (3780 when every query ended a window)
}

@test "query_poll pool: a query of an event the window records (PyTorch's pinned pool) ends the recorded window as it ends a replay: no replay stops there, same sums" {
    qpoll 200 pool || return 1
    echo "templates=${S[templates]} mismatches=${S[mismatches]} retired=${S[retired]} graphed=${S[launches_graphed]}"
    want templates -le 3                   # 13 while recording passed that query
    want mismatches -le 8                  # the every-50th query of held work; 171 then
    want retired -eq 0                     # 10 then
    want launches_graphed -ge 4700         # of 5000
}

@test "query_poll watch: a thread that submits no work polls an event the window records (a watchdog): the windows end where the loop synchronizes, replays tell it not ready: same sums, graphed" {
    qpoll 200 watch || return 1
    cat "$tmp/shim.err"
    echo "templates=${S[templates]} mismatches=${S[mismatches]} flush_query=${S[flush query]} deferred=${S[queries_deferred]} graphed=${S[launches_graphed]}"
    want "flush query" -le 8               # the every-50th query of held work; 25-33
                                           # when the watchdog's queries ended windows
    want mismatches -le 16                 # 48-64 then
    want launches_graphed -ge 4650         # of 4800; 4477-4536 then
}

# hostf ARG... : build/sim/progs/host_funcs ARG... (tests/sim/progs/host_funcs.c) without
# the shim (run "plain") and with it (run "shim", more variables in the array HF_ENV);
# fails unless both exit 0 with the same stdout and SIM_LOG; loads the summary into S
hostf() {
    [ -x build/sim/progs/host_funcs ] || skip "host_funcs not built (make sim)"
    sim_run plain host_funcs -- "$@"
    sim_run shim host_funcs LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
        "${HF_ENV[@]}" -- "$@"
    same plain shim "host_funcs $*${HF_ENV:+ (${HF_ENV[*]})}" || return 1
    load shim
}

@test "host_funcs: by default (AUTOGRAPH_HOST_FUNCS=0) a host function ends the window: same sums, nothing graphed" {
    local HF_ENV=()
    hostf 200 || return 1
    want "flush host_func" -ge 400
    want templates -eq 0                   # 3 launches, then a copy and 1: too short
    want unrecorded -eq 0
}

@test "host_funcs: with AUTOGRAPH_HOST_FUNCS=1 host functions are graphed as host nodes, a chunk ending at each (launched at its call): same sums, same callbacks in the same order" {
    local HF_ENV=(AUTOGRAPH_HOST_FUNCS=1)
    hostf 200 || return 1
    echo "templates=${S[templates]} graphed=${S[launches_graphed]} cuts=${S[host_func_cuts]} chunks=${S[chunk_launches]} mismatches=${S[mismatches]}"
    want templates -eq 1
    want host_func_cuts -eq 1             # after the first; the second ends the template
    want launches_graphed -ge 780         # of 800 (0 while host functions ended windows)
    want mismatches -eq 0
}

@test "host_funcs wait: the host waits for a host function to have run, with no CUDA call: it ran at its call, graphed" {
    local HF_ENV=(AUTOGRAPH_HOST_FUNCS=1)
    hostf 200 wait || return 1
    want launches_graphed -ge 780
}

@test "host_funcs each: a host function after every kernel (JAX op by op): too little work per chunk launch, left eager: same sums" {
    local HF_ENV=(AUTOGRAPH_HOST_FUNCS=1)
    hostf 200 each || return 1
    want templates -eq 0
    want "skip too_short" -ge 1
}

@test "host_funcs: a failing host node patch (SIM_FAIL=cuGraphExecHostNodeSetParams) falls back to eager: same sums" {
    local HF_ENV=(AUTOGRAPH_HOST_FUNCS=1 SIM_FAIL=cuGraphExecHostNodeSetParams:1)
    hostf 200 || return 1
    want retired -ge 1                     # the template whose patch failed
}

# coll ARG... : build/sim/progs/collective ARG... (tests/sim/progs/collective.c) without
# the shim (run "plain") and with it (run "shim", more variables in the array COLL_ENV);
# fails unless both exit 0 with the same stdout and SIM_LOG and no collective was late
# without the shim; loads the summary into S and the shim run's late collectives (not
# run when their call returned) into LATE
coll() {
    local k line="collective $*${COLL_ENV:+ (${COLL_ENV[*]})}:"
    [ -x build/sim/progs/collective ] || skip "collective not built (make sim)"
    sim_run plain collective -- "$@"
    sim_run shim collective LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/shim.summary" \
        "${COLL_ENV[@]}" -- "$@"
    same plain shim "collective $*" || return 1
    grep -q '^collective: calls [1-9][0-9]*, late 0$' "$tmp/plain.err"
    load shim
    LATE=$(sed -n 's/^collective: calls [0-9]*, late \([0-9]*\)$/\1/p' "$tmp/shim.err")
    line+=" late=$LATE"
    for k in templates templates_paced collective_cuts replays chunk_launches \
             launches_graphed launches_threaded launches_taken_back period_cuts; do
        line+=" $k=${S[$k]:-0}"
    done
    echo "$line"
    [ -n "$LATE" ]
}

@test "collective: a collective kernel (NCCL's name) is never held past its own call, a chunk ending after it, on one stream, paced (the launcher thread's chunks), on two streams (a cut adding order), cut by period detection: same log, graphed" {
    local mode COLL_ENV=()
    for mode in sync paced streams; do
        coll "$mode" 30 || return 1
        [ "$LATE" -eq 0 ] || { echo "FAIL: $mode: $LATE collectives not run at their call"; return 1; }
        want templates -eq 1
        want replays -ge 20
        want launches_graphed -ge 100
        want collective_cuts -eq 2             # the window's one chunk cut in 3
        want chunk_launches -eq $((3 * ${S[replays]}))
    done
    # paced: each replay's last chunk (after the second collective) goes to the
    # launcher thread; the chunks ending with a collective are launched at its call
    coll paced 30
    want templates_paced -eq 1
    [ $(( ${S[launches_threaded]:-0} + ${S[launches_taken_back]:-0} )) -eq "${S[replays]}" ]
    # no sync: period detection cuts 4 iterations, 8 collectives
    coll period 30
    [ "$LATE" -eq 0 ]
    want period_cuts -eq 1
    want replays -ge 4
    want collective_cuts -eq 8
    # no sync, two streams forked and joined every iteration (DDP's buckets without a
    # loss.item()): period detection cuts it too
    coll streams-period 200
    [ "$LATE" -eq 0 ]
    want period_cuts -le 2
    want launches_graphed -ge 2000             # of 2200
}

@test "collective ddp: a DDP step with no sync (identical forward blocks, other backward blocks, two buckets' collectives on a forked stream, a first step that differs): period detection cuts whole steps: same log, graphed, no collective held" {
    local COLL_ENV=()
    coll ddp 200 || return 1
    [ "$LATE" -eq 0 ]
    want templates -le 2
    want mismatches -le 4
    want launches_graphed -ge 6500             # of 6800
}

@test "collective ddp, AUTOGRAPH_PERIOD_MIN=4: a forward block is cut first; its runs break once a step, so it is suspended and the whole step cut supersedes it: same log, graphed" {
    local COLL_ENV=(AUTOGRAPH_PERIOD_MIN=4)
    coll ddp 200 || return 1
    [ "$LATE" -eq 0 ]
    want subperiods -ge 1
    want superseded -ge 1
    want launches_graphed -ge 6500             # of 6800 (4585 without suspending it)
}

@test "collective: a kernel of another name is held as any other (the check fails without the rule); AUTOGRAPH_COLLECTIVE_PREFIXES makes it a collective" {
    local COLL_ENV=()
    coll sync 30 commAllReduce_sum
    want collective_cuts -eq 0
    want replays -ge 20
    [ "$LATE" -ge 40 ] || { echo "FAIL: the held collectives were not seen late ($LATE)"; return 1; }
    COLL_ENV=(AUTOGRAPH_COLLECTIVE_PREFIXES=nvshmem,commAll)
    coll sync 30 commAllReduce_sum
    want collective_cuts -eq 2
    [ "$LATE" -eq 0 ]
    COLL_ENV=(AUTOGRAPH_COLLECTIVE_PREFIXES=ncclDev)        # the prefixes add to NCCL's
    coll streams 30 ncclKernel_AllGather
    want collective_cuts -eq 2
    [ "$LATE" -eq 0 ]
}

@test "collective: chunks of 2 ops (moved where they add no order, or anywhere) and tuned chunk plans keep every collective at the end of its chunk: same log" {
    local COLL_ENV=(AUTOGRAPH_CHUNK=2 AUTOGRAPH_CHUNK_GROWTH=1)
    coll streams 30
    [ "$LATE" -eq 0 ]
    want launches_graphed -ge 100
    COLL_ENV+=(AUTOGRAPH_CUT_ANYWHERE=1)
    coll streams 30
    [ "$LATE" -eq 0 ]
    local mode
    for mode in sync paced; do
        COLL_ENV=(AUTOGRAPH_CHUNK=2 AUTOGRAPH_CHUNK_TUNE=3)
        coll "$mode" 60
        [ "$LATE" -eq 0 ]
        want tune_rebuilds -ge 1
        want collective_cuts -eq $((2 * ${S[templates]}))
    done
}

# match_speed.c: the speed guard times blocks of the program's run with graphing on and
# paused, from sync to sync.  SIM_LAUNCH_US and SIM_GRAPH_LAUNCH_US (tests/sim/sim_pace.c)
# make the simulator's eager launches or graph launches cost host time, so that graphs
# are slower or faster than eager work on purpose.  AUTOGRAPH_GUARD_MS=1: the first trial
# comes at once.
guarded() {
    local tag=$1
    shift
    sim_run "$tag" branches LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/$tag.summary" \
        AUTOGRAPH_EXPLAIN=1 "$@" -- "${GUARD_ARGS[@]}"
    same plain "$tag" "branches ${GUARD_ARGS[*]} ($*)" || return 1
    load "$tag"
    grep -E '^(guard|graphed_share)' "$tmp/$tag.summary"
}

# build_tune.c: AUTOGRAPH_CHUNK_TUNE=auto (the default; the suites set 0) times a window
# that the chunk plan leaves in one chunk against a first chunk of 2 ops, each over 32
# replays, and keeps the faster.  thrust_like's steps are 12 launches and a sync: one
# chunk of the default plan (8, growing 3x).  SIM_GRAPH_LAUNCH_US makes every graph
# launch cost host time, so the split (two launches a replay) is the slower on purpose.
# AUTOGRAPH_CHUNK_SLOW_US=0: never paced (a loaded machine's slow calls would make the
# window paced, its chunks alike, and the plans' growth 1).
tuned() {
    local tag=$1
    shift
    sim_run "$tag" thrust_like LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/$tag.summary" \
        AUTOGRAPH_LOG=debug AUTOGRAPH_CHUNK_SLOW_US=0 "$@" -- 0 300
    same plain "$tag" "thrust_like 0 300 ($*)" || return 1
    load "$tag"
}

@test "chunk tuning: a window left in one chunk is timed against a first chunk of 2 ops and keeps the faster; longer windows, and AUTOGRAPH_CHUNK_TUNE=0, are not tuned: same log" {
    sim_run plain thrust_like -- 0 300
    tuned auto AUTOGRAPH_CHUNK_TUNE=auto SIM_GRAPH_LAUNCH_US=300
    want plans_tuned -eq 1
    want tune_rebuilds -eq 2                   # one to try the split, one to go back
    want launches_graphed -ge 3000             # of 3600
    grep -q 'graph [0-9]*: chunk plan 2 x3: median replay period' "$tmp/auto.err"
    grep -q 'graph [0-9]*: keeps chunk plan 8 x3 ' "$tmp/auto.err"
    tuned split AUTOGRAPH_CHUNK_TUNE=auto AUTOGRAPH_CHUNK=4   # 4 + 8: two chunks already
    want plans_tuned -eq 0
    want tune_rebuilds -eq 0
    tuned off AUTOGRAPH_CHUNK_TUNE=0 SIM_GRAPH_LAUNCH_US=300
    want plans_tuned -eq 0
    want tune_rebuilds -eq 0
}

@test "speed guard: graphs slower than eager work are paused after a trial, faster ones kept; off with AUTOGRAPH_GUARD_MS=0: same log" {
    [ -x build/sim/progs/branches ] || skip "branches not built (make sim)"
    local GUARD_ARGS=(1500 4 3)
    sim_run plain branches -- "${GUARD_ARGS[@]}"
    guarded slow AUTOGRAPH_GUARD_MS=1 SIM_LAUNCH_US=20 SIM_GRAPH_LAUNCH_US=2000
    want guard_trials -ge 1
    want guard_paused_verdicts -ge 1
    want guard_launches_paused -ge 10000       # of 39000: most of the run went eager
    # paused at exit, unless a later trial was under way (a sanitizer's slower run)
    grep -qE '^guard (paused|trial_on|trial_paused)$' "$tmp/slow.summary"
    grep -q 'explain: speed guard: eager work took 0\.[0-9]*x .*graphing paused' "$tmp/slow.err"
    GUARD_ARGS=(400 4 3)
    sim_run plain branches -- "${GUARD_ARGS[@]}"
    guarded fast AUTOGRAPH_GUARD_MS=1 SIM_LAUNCH_US=300 SIM_GRAPH_LAUNCH_US=300
    want guard_trials -ge 1
    want guard_paused_verdicts -eq 0
    grep -qE '^guard (kept|trial_on|trial_paused)$' "$tmp/fast.summary"
    grep -q 'explain: speed guard: eager work took [1-9][0-9.]*x .*graphing kept' "$tmp/fast.err"
    want launches_graphed -ge 4000             # of 10400, trial blocks paused aside
    guarded off AUTOGRAPH_GUARD_MS=0 SIM_LAUNCH_US=20 SIM_GRAPH_LAUNCH_US=2000
    grep -q '^guard off$' "$tmp/off.summary"
    want launches_graphed -ge 5100             # of 5200: every replay kept, slow or not
}

@test "speed guard: two processes of one job (AUTOGRAPH_GUARD_JOB) share their trials through one shared memory object, gone once both exit: same sums" {
    [ -x build/sim/progs/branches ] || skip "branches not built (make sim)"
    local job="bats-$$-$RANDOM" r before after
    sim_run plain branches -- 1500 4 3
    before=$(ls /dev/shm 2>/dev/null | grep -c "^autograph-guard-$(id -u)-" || true)
    for r in 0 1; do
        printf -v "cmd_rank$r" '%s' "branches 1500 4 3 (rank $r of $job)"
        env LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/rank$r.log" SIM_LOG_SKIP=event \
            SIM_LOG_STREAMS=hide LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/rank$r.summary" \
            AUTOGRAPH_GUARD_JOB="$job" AUTOGRAPH_GUARD_MS=1 AUTOGRAPH_LOG=info \
            SIM_LAUNCH_US=300 SIM_GRAPH_LAUNCH_US=300 build/sim/progs/branches 1500 4 3 \
            >"$tmp/rank$r.out" 2>"$tmp/rank$r.err" &
        eval "pid$r=\$!"
    done
    wait "$pid0" && rc_rank0=0 || rc_rank0=$?
    wait "$pid1" && rc_rank1=0 || rc_rank1=$?
    for r in 0 1; do
        same plain "rank$r" "branches 1500 4 3, rank $r of a job" || return 1
        grep -q "speed guard: trials shared with the job's ranks on this host (AUTOGRAPH_GUARD_JOB=$job)" \
            "$tmp/rank$r.err"
        load "rank$r"
        grep -E '^guard' "$tmp/rank$r.summary"
        want guard_trials -ge 1
    done
    after=$(ls /dev/shm 2>/dev/null | grep -c "^autograph-guard-$(id -u)-" || true)
    echo "guard objects before $before, after $after"
    [ "$after" -eq "$before" ]
}

@test "speed guard: a program whose only waits are copies into pageable memory (staged_copies async) ends its blocks there, paused or not: paused and tried again: same sums" {
    [ -x build/sim/progs/staged_copies ] || skip "staged_copies not built (make sim)"
    sim_run plain staged_copies -- async 3000
    sim_run guard staged_copies LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/guard.summary" \
        AUTOGRAPH_GUARD_MS=1 SIM_LAUNCH_US=150 SIM_GRAPH_LAUNCH_US=20000 -- async 3000
    same plain guard "staged_copies async 3000 (guard)" || return 1
    load guard
    grep -E '^guard' "$tmp/guard.summary"
    want guard_trials -ge 2                    # the pause's end came: a second trial
    want guard_paused_verdicts -ge 2
}

@test "speed guard: a program that never synchronizes but polls an event until its work is done (query_poll spin) ends its blocks at the query that finds it done: paused and tried again: same sums" {
    [ -x build/sim/progs/query_poll ] || skip "query_poll not built (make sim)"
    sim_run plain query_poll -- 600 spin
    sim_run guard query_poll LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/guard.summary" \
        AUTOGRAPH_GUARD_MS=1 SIM_LAUNCH_US=150 SIM_GRAPH_LAUNCH_US=20000 -- 600 spin
    same plain guard "query_poll 600 spin (guard)" || return 1
    load guard
    grep -E '^guard' "$tmp/guard.summary"
    want guard_trials -ge 2
    want guard_paused_verdicts -ge 2
}

@test "speed guard: a program with nothing to graph (staged_copies solver: every window too short) has its recording paused, and looked at again: same sums" {
    [ -x build/sim/progs/staged_copies ] || skip "staged_copies not built (make sim)"
    sim_run plain staged_copies -- solver 6000
    sim_run idle staged_copies LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/idle.summary" \
        AUTOGRAPH_EXPLAIN=1 AUTOGRAPH_GUARD_MS=1000 -- solver 6000
    same plain idle "staged_copies solver 6000 (guard)" || return 1
    load idle
    grep -E '^(guard|windows)' "$tmp/idle.summary"
    want guard_idle_pauses -ge 1
    want windows -lt 6000                      # the paused iterations were not recorded
    want templates -eq 0
    grep -q 'explain: speed guard: nothing made, replayed or stopped in [0-9]* windows: recording paused' "$tmp/idle.err"
}

# intercept_defer.c, engine_scope.c: while graphing is paused and no engine holds
# anything, a flush point skips the engine (paused_flush_points); the pause's end must
# bring the engine back: the graphable steps after the loop are graphed.
@test "speed guard: a Thrust-shaped loop (kernel, sync, alloc, copy, kernel, read back, sync, free, sync) idles, its flush points then pass the engine by, and the graphable steps after it are graphed: same sums" {
    [ -x build/sim/progs/thrust_like ] || skip "thrust_like not built (make sim)"
    sim_run plain thrust_like -- 20000 3000
    # trials after 600 s of replays: none here (under sanitizers a trial can find the
    # simulator's graphs no faster and pause them); idle pauses come all the same
    sim_run idle thrust_like LD_PRELOAD="$shim" AUTOGRAPH_SUMMARY_FILE="$tmp/idle.summary" \
        AUTOGRAPH_GUARD_MS=600000 -- 20000 3000 1700
    same plain idle "thrust_like 20000 3000 1700 (guard)" || return 1
    load idle
    grep -E '^(guard|paused_flush_points|launches_graphed)' "$tmp/idle.summary"
    want guard_idle_pauses -ge 1
    want paused_flush_points -ge 50000        # of 100000 (5 an iteration)
    # of the 36000 launches of the 3000 steps: the loop's last windows, before the
    # program's sleep, are not held against them (the watch begins again after a quiet
    # spell), so no idle pause begins at the steps' first sync, under valgrind too
    want launches_graphed -ge 30000
    want guard_trials -eq 0
}
