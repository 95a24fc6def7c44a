#!/usr/bin/env bats
# engine.bats -- the GPU suite of the auto-graphing engine (AUTOGRAPH, on by default).
#
# Run from the repository root:  bats tests/gpu/engine.bats   (or .carry/bats/bin/bats)
# Needs a usable GPU; every test says `skip "no GPU"` otherwise.  Builds what it needs
# with `make all gpu-progs` (tests/gpu/gpu.mk) when a GPU is there.
#
# Programs: build/gpu/engine_static and build/gpu/engine_shared (tests/gpu/engine_prog.cu,
# static and shared cudart), one workload per run (tiny, jacobi, scalar, forkjoin, churn, legacy,
# norepeat, hostwork, rare, smemtoggle, eventmid, exattrs, pdl).  Each prints one line per result buffer with a hash of its
# exact bytes.  For every workload and both builds: run without the shim -> A, with the
# shim (engine default, i.e. on) -> B; both exit 0, A == B byte for byte, and the shim's
# exit summary (AUTOGRAPH_SUMMARY_FILE) shows launches_graphed > 0 for the repeating
# workloads (a test the engine passes by doing nothing is no test) and launches_graphed
# == 0 for the never-repeating one.  When launches_graphed is 0 where it should not be,
# the run is repeated with AUTOGRAPH_EXPLAIN=1 and its stderr shown.
# The summary numbers go to the TAP log ("# ..." lines), as in gpu.bats.
#
# Knobs: AG_ENGINE_TIMEOUT (seconds one program may run, default 300: a hang fails the
# test instead of hanging the suite).  AUTOGRAPH_* of the caller's environment are
# cleared for every run; the tests set exactly what they need.

load gpu_helpers

setup_file() { ag_setup_file; }

setup() { ag_setup; }

# --- helpers (eg_run, eg_stats, eg_pair, eg_repeating: gpu_helpers.bash) ------------------

# eg_norepeat PROG ARGS... : eg_pair; the engine saw the launches and graphed none.
eg_norepeat() {
    eg_pair "$@" || return 1
    if [ "$EG_GRAPHED" -ne 0 ]; then
        echo "$1 ${*:2}: launches_graphed is $EG_GRAPHED on a sequence that never repeats" >&2
        return 1
    fi
    if [ "$EG_EAGER" -le 0 ]; then
        echo "$1 ${*:2}: launches_eager is 0: the engine did not see the launches" \
            "(is it on?)" >&2
        return 1
    fi
}

# eg_kept_across_destroys: after eg_repeating on churn: every iteration's event was timed
# (the graph really recorded the new event), and the graph was re-pointed at new events
# instead of being dropped.
eg_kept_across_destroys() {
    local sum
    sum=$(cat "$BATS_TEST_TMPDIR"/b.sum.* 2>/dev/null)
    local tag
    for tag in a b; do
        grep -q '^churn timed 100 of 100$' "$BATS_TEST_TMPDIR/$tag.err" && continue
        echo "churn: not every iteration's event was recorded ($tag: a without the shim, b with):" >&2
        grep '^churn timed' "$BATS_TEST_TMPDIR/$tag.err" >&2
        return 1
    done
    ag_log "churn: $(grep -E '^(events_parked|events_repointed|retired) ' <<<"$sum" | tr '\n' ' ')"
    grep -Eq '^events_repointed ([5-9][0-9]|[1-9][0-9]{2,})$' <<<"$sum" || {
        echo "churn: the graph was not re-pointed at the new events (is the handle reused?)" >&2
        grep -E '^(events_|retired|replays|skip)' <<<"$sum" >&2
        return 1
    }
}

# eg_held_runtime MIN: after eg_repeating: the launches held at the runtime's launch call
# (without libcudart: shim/intercept_cudart.c) are at least MIN
eg_held_runtime() {
    local held
    held=$(ag_sum launches_held_runtime "$BATS_TEST_TMPDIR"/b.sum.*)
    ag_log "launches_held_runtime $held of launches_graphed $EG_GRAPHED (want >= $1)"
    [ "$held" -ge "$1" ] || { echo "launches_held_runtime is $held, want >= $1" >&2; return 1; }
}

# --- every workload, static and shared cudart ------------------------------------------

@test "engine: tiny 10 kernels x 200 syncs, static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static tiny 10 200
}
@test "engine: tiny 10 kernels x 200 syncs, shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared tiny 10 200
}
@test "engine: tiny 100 kernels x 100 syncs, static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static tiny 100 100
}
@test "engine: tiny 100 kernels x 100 syncs, shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared tiny 100 100
}
@test "engine: tiny 100 kernels x 100 syncs, shared cudart: most held launches never enter libcudart (held at its launch call): same bytes" {
    eg_repeating engine_shared tiny 100 100 || return 1
    eg_held_runtime $((EG_GRAPHED / 2))
}
@test "engine: tiny 100 kernels x 100 syncs, static cudart: the runtime's launch calls are never reached: same bytes" {
    eg_repeating engine_static tiny 100 100 || return 1
    [ "$(ag_sum launches_held_runtime "$BATS_TEST_TMPDIR"/b.sum.*)" -eq 0 ]
}
@test "engine: tiny 1000 kernels x 30 syncs, static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static tiny 1000 30
}
@test "engine: tiny 1000 kernels x 30 syncs, shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared tiny 1000 30
}

@test "engine: jacobi 200 (memset, ping-pong, pinned H2D/D2H), static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static jacobi 200
}
@test "engine: jacobi 200 (memset, ping-pong, pinned H2D/D2H), shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared jacobi 200
}

@test "engine: scalar 200 (arguments change every iteration), static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static scalar 200
}
@test "engine: scalar 200 (arguments change every iteration), shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared scalar 200
}

@test "engine: forkjoin 100 (3 streams, events), static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static forkjoin 100
}
@test "engine: forkjoin 100 (3 streams, events), shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared forkjoin 100
}

@test "engine: churn 100 (forkjoin, its fork event made anew every iteration), static cudart: same bytes, the graph kept and re-pointed" {
    eg_repeating engine_static churn 100 || return 1
    eg_kept_across_destroys
}
@test "engine: churn 100 (forkjoin, its fork event made anew every iteration), shared cudart: same bytes, the graph kept and re-pointed" {
    eg_repeating engine_shared churn 100 || return 1
    eg_kept_across_destroys
}

@test "engine: legacy 200 (stream 0, cudaDeviceSynchronize), static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static legacy 200
}
@test "engine: legacy 200 (stream 0, cudaDeviceSynchronize), shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared legacy 200
}

# The legacy stream and a blocking stream ordered only by the legacy stream's implicit
# synchronization, in one window: graphed with that order as edges (a long kernel on
# the blocking stream is followed by a legacy kernel reading its output).
@test "engine: legacymix 100 (legacy + blocking stream, implicit order), static cudart: same bytes, graphed > 0, no legacy_mix" {
    eg_repeating engine_static legacymix 100 || return 1
    eg_summary_wants "skip legacy_mix" -eq 0
}
@test "engine: legacymix 100, shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared legacymix 100
}
@test "engine: legacymix 100 in chunks of 2 ops (legacy-and-blocking chunks launched on the legacy stream): same bytes, graphed > 0" {
    eg_repeating_with AUTOGRAPH_CHUNK=2 AUTOGRAPH_CHUNK_GROWTH=1 engine_static legacymix 100
}

@test "engine: norepeat 200, static cudart: same bytes, nothing graphed" {
    eg_norepeat engine_static norepeat 200
}
@test "engine: norepeat 200, shared cudart: same bytes, nothing graphed" {
    eg_norepeat engine_shared norepeat 200
}

# eg_phases PROG : eg_repeating on phases 60, and the first phase was recorded light.
eg_phases() {
    eg_repeating "$1" phases 60 || return 1
    local light
    light=$(ag_sum light_ops "$BATS_TEST_TMPDIR"/b.sum.*)
    if [ "$light" -le 0 ]; then
        echo "$1 phases 60: light_ops is 0: the non-repeating phase was not recorded light" >&2
        return 1
    fi
}

@test "engine: phases 60 (never repeating, then repeating with syncs, then without), static cudart: same bytes, light then graphed" {
    eg_phases engine_static
}
@test "engine: phases 60 (never repeating, then repeating with syncs, then without), shared cudart: same bytes, light then graphed" {
    eg_phases engine_shared
}

@test "engine: hostwork 100 (host work between launches), static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static hostwork 100
}
@test "engine: hostwork 100 (host work between launches), shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared hostwork 100
}

@test "engine: rare 300 (20 kernels/step, sync every 50 steps), static cudart: same bytes, graphed > 0" {
    eg_repeating engine_static rare 300
}
@test "engine: rare 300 (20 kernels/step, sync every 50 steps), shared cudart: same bytes, graphed > 0" {
    eg_repeating engine_shared rare 300
}

# eg_summary_wants KEY OP N [KEY OP N...]: after eg_pair: each summary count KEY (summed
# over the run's summary files) OP N (a test operator: -le, -ge, ...); all of them are
# logged, and the ones that miss are said.
eg_summary_wants() {
    local have line="" bad=0
    while [ $# -ge 3 ]; do
        have=$(ag_sum "$1" "$BATS_TEST_TMPDIR"/b.sum.*)
        line+=" $1 $have"
        if ! [ "$have" "$2" "$3" ]; then
            echo "summary: $1 is $have, want $2 $3" >&2
            bad=1
        fi
        shift 3
    done
    ag_log "${line# }"
    return $bad
}

# eg_odd_steps_handled N: after eg_pair: at least N replays stopped at the odd steps
# (mismatches), or moved within their first chunk to the odd steps' own template
# (rematches: nothing of theirs was launched yet).
eg_odd_steps_handled() {
    local m r
    m=$(ag_sum mismatches "$BATS_TEST_TMPDIR"/b.sum.*)
    r=$(ag_sum rematches "$BATS_TEST_TMPDIR"/b.sum.*)
    ag_log "mismatches $m rematches $r"
    [ $((m + r)) -ge "$1" ] || { echo "summary: mismatches $m + rematches $r, want -ge $1" >&2; return 1; }
}

# eg_one_window_a_step ITERS: after eg_repeating: the limit changes ended no window (one
# per iteration, a few more for the setup: 204 for 200 on the H100) and the turning
# input was patched.
eg_one_window_a_step() {
    eg_summary_wants windows -le $(($1 + 10)) patches -ge 1
}

# cuDNN's pattern: a kernel's dynamic shared memory limit up, a launch, down, a launch,
# every step.  The held 32 KiB launch is captured, patched and (on a mismatch) issued
# under the lowered limit: the shim lifts it around those, its graph runs under it.
@test "engine: smemtoggle 200 (a kernel's shared memory limit 32 <-> 8 KiB each step), static cudart: same bytes, one window a step, graphed" {
    eg_repeating engine_static smemtoggle 200 || return 1
    eg_one_window_a_step 200
}
@test "engine: smemtoggle 200, shared cudart: same bytes, one window a step, graphed" {
    eg_repeating engine_shared smemtoggle 200 || return 1
    eg_one_window_a_step 200
}
@test "engine: smemtoggle 200 with a mismatch every 7th step (the 32 KiB launch goes out alone under 8 KiB): same bytes, no late failure, graphed" {
    eg_repeating engine_static smemtoggle 200 7
}

# Launches with a launch attribute (cuBLAS and cuDNN may launch so): the replay's fast
# path holds them (5 of the 6 a replay holds; its first op starts the replay), and one
# whose attribute value differs is not held but stops the replay.
@test "engine: exattrs 200 (cudaLaunchKernelEx with a priority attribute), static cudart: same bytes, the fast path holds them" {
    eg_repeating engine_static exattrs 200 || return 1
    eg_summary_wants launches_held_fast -ge $((5 * 150)) mismatches -eq 0
}
@test "engine: exattrs 200, shared cudart: same bytes, the fast path holds them" {
    eg_repeating engine_shared exattrs 200 || return 1
    eg_summary_wants launches_held_fast -ge $((5 * 150)) mismatches -eq 0
}
@test "engine: exattrs 200 with another priority every 7th step: same bytes, those replays stop there or move to the odd step's template" {
    eg_repeating engine_static exattrs 200 7 || return 1
    eg_odd_steps_handled 20 && eg_summary_wants launches_held_fast -ge $((5 * 100))
}

# XLA launches every kernel with programmatic stream serialization allowed: recorded,
# captured into programmatic edges; each kernel waits for the one before in the kernel.
@test "engine: pdl 200 (cudaLaunchKernelEx with programmatic stream serialization, as XLA launches), static cudart: same bytes, graphed" {
    eg_repeating engine_static pdl 200 || return 1
    eg_summary_wants launches_graphed -ge $((8 * 150))
}
@test "engine: pdl 200, shared cudart: same bytes, graphed" {
    eg_repeating engine_shared pdl 200 || return 1
    eg_summary_wants launches_graphed -ge $((8 * 150))
}

# eg_repeating_with VAR=VALUE... PROG ARGS...: eg_pair on build/gpu/PROG ARGS with those
# variables set (both runs); the engine graphed some launches.
eg_repeating_with() {
    local vars=()
    while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
    eg_pair_cmd "$* (${vars[*]})" env "${vars[@]}" "$AG_BIN/$1" "${@:2}" || return 1
    [ "$EG_GRAPHED" -gt 0 ] || { echo "$* (${vars[*]}): launches_graphed is 0" >&2; return 1; }
}

# eg_destroys_in_window ITERS [OP N]: after eg_pair: the events destroyed inside the
# window (3 an iteration) ended no window (one per iteration, a few more for the setup),
# and the count of those destroys that were held until their ops went out is OP N
# (default: -ge 0).
eg_destroys_in_window() {
    eg_summary_wants windows -le $(($1 + 10)) destroys_in_window -ge $((3 * $1 - 30)) \
        destroys_held "${2:--ge}" "${3:-0}"
}

# cuDNN's pattern in a PyTorch CNN step: the fork and join events made anew and destroyed
# inside the window.  A destroy is held until the chunk that records its event is
# launched (the step's 13 ops are one chunk: every destroy is held, 594 of 600 on the
# H100); with a chunk an op (AUTOGRAPH_CHUNK=1) each record is launched before its
# destroy, which goes to the driver at once.  The one-chunk runs keep that plan
# (AUTOGRAPH_CHUNK_TUNE=0): tuned, a first chunk of 2 ops may time faster, and its
# replays launch some records before their destroys.
@test "engine: eventmid 200 (fork and join events destroyed inside the window every step), static cudart: same bytes, one window a step, the destroys held, graphed" {
    eg_repeating_with AUTOGRAPH_CHUNK_TUNE=0 engine_static eventmid 200 || return 1
    eg_destroys_in_window 200 -ge 500
}
@test "engine: eventmid 200, shared cudart: same bytes, one window a step, the destroys held, graphed" {
    eg_repeating_with AUTOGRAPH_CHUNK_TUNE=0 engine_shared eventmid 200 || return 1
    eg_destroys_in_window 200 -ge 500
}
@test "engine: eventmid 200 with chunk plans tuned (AUTOGRAPH_CHUNK_TUNE=auto, the default): same bytes, one window a step, graphed" {
    eg_repeating_with AUTOGRAPH_CHUNK_TUNE=auto engine_static eventmid 200 || return 1
    eg_destroys_in_window 200
}
@test "engine: eventmid 200 in chunks of one op (AUTOGRAPH_CHUNK=1: each record launched before its destroy, which goes out at once): same bytes, one window a step, graphed" {
    eg_repeating_with AUTOGRAPH_CHUNK=1 AUTOGRAPH_CHUNK_GROWTH=1 engine_static eventmid 200 ||
        return 1
    eg_destroys_in_window 200 -le 10
}
@test "engine: eventmid 200 with a mismatch every 7th step (just after the fork's destroy, held in one chunk): same bytes, no late failure, graphed" {
    eg_repeating_with AUTOGRAPH_CHUNK_TUNE=0 engine_static eventmid 200 7 || return 1
    eg_odd_steps_handled 20 && eg_destroys_in_window 200 -ge 100
}

# One window of 400 steps (8400 ops) and a single sync: no window ever repeats, so only
# period detection can graph it.
@test "engine: rare 400 steps with one sync at the end: period detection graphs it, same bytes" {
    eg_repeating engine_static rare 400 400
}

# --- switches ----------------------------------------------------------------------------

@test "engine: AUTOGRAPH=off: same bytes, nothing graphed, N_shim == N_cupti == program's count" {
    local dir=$BATS_TEST_TMPDIR
    eg_run a plain "$AG_BIN/engine_static" tiny 100 50 || { ag_show a; false; }
    eg_run b shim+cupti AUTOGRAPH=off "$AG_BIN/engine_static" tiny 100 50 || { ag_show b; false; }
    ag_counts b
    eg_stats b
    ag_log "AUTOGRAPH=off: N_shim=$N_SHIM N_cupti=$N_CUPTI (dropped $N_DROPPED)" \
        "program $EG_EXPECTED; $EG_LINE"
    cmp "$dir/a.out" "$dir/b.out"
    [ "$EG_GRAPHED" -eq 0 ]
    [ "$N_DROPPED" -eq 0 ]
    [ "$N_SHIM" -eq "$EG_EXPECTED" ]
    [ "$N_CUPTI" -eq "$EG_EXPECTED" ]
}

@test "engine: AUTOGRAPH_WARMUP=5: same bytes, graphed > 0" {
    local dir=$BATS_TEST_TMPDIR
    eg_run a plain "$AG_BIN/engine_static" tiny 100 100 || { ag_show a; false; }
    eg_run b shim AUTOGRAPH_WARMUP=5 "$AG_BIN/engine_static" tiny 100 100 ||
        { ag_show b; false; }
    eg_stats b
    ag_log "AUTOGRAPH_WARMUP=5: $EG_LINE"
    cmp "$dir/a.out" "$dir/b.out"
    [ "$EG_GRAPHED" -gt 0 ]
}

@test "engine: AUTOGRAPH_CHUNK_TUNE=8 on tiny 100 x 300 (graphs rebuilt with each chunk plan, the fastest kept): same bytes" {
    local dir=$BATS_TEST_TMPDIR tuned rebuilds
    eg_run a plain "$AG_BIN/engine_static" tiny 100 300 || { ag_show a; false; }
    eg_run b shim AUTOGRAPH_CHUNK_TUNE=8 AUTOGRAPH_LOG=debug "$AG_BIN/engine_static" tiny 100 300 ||
        { ag_show b; false; }
    eg_stats b
    tuned=$(ag_sum plans_tuned "$dir"/b.sum.*)
    rebuilds=$(ag_sum tune_rebuilds "$dir"/b.sum.*)
    ag_log "AUTOGRAPH_CHUNK_TUNE=8: $EG_LINE plans_tuned $tuned tune_rebuilds $rebuilds"
    ag_log "$(grep -E 'chunk plan|keeps chunk plan' "$dir/b.err" | tr '\n' ';')"
    cmp "$dir/a.out" "$dir/b.out"
    [ "$EG_GRAPHED" -gt 0 ] && [ "$tuned" -ge 1 ] && [ "$rebuilds" -ge 2 ]
}

@test "engine: AUTOGRAPH_EXPLAIN=1 on norepeat: same stdout, the explanations go to stderr" {
    local dir=$BATS_TEST_TMPDIR
    eg_run a plain "$AG_BIN/engine_static" norepeat 100 || { ag_show a; false; }
    eg_run b shim AUTOGRAPH_EXPLAIN=1 "$AG_BIN/engine_static" norepeat 100 ||
        { ag_show b; false; }
    local n
    n=$(grep -c 'explain' "$dir/b.err" || true)
    ag_log "AUTOGRAPH_EXPLAIN=1: $n explain lines on stderr; first:" \
        "$(grep -m 1 'explain' "$dir/b.err")"
    cmp "$dir/a.out" "$dir/b.out"
    [ "$n" -gt 0 ]
}

# --- every kernel runs exactly once --------------------------------------------------------

# CUPTI (tests/gpu/cupti_count.c) counts kernel executions, graph nodes included: with the
# engine on, the count must still be exactly the program's number of launches (none
# dropped, none replayed twice).
@test "engine: with CUPTI, every kernel runs exactly once (tiny, jacobi, forkjoin, legacy, rare)" {
    local w i=0 bad=0
    for w in "tiny 100 50" "jacobi 100" "forkjoin 50" "legacy 100" "rare 300"; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        eg_exactly_once $i engine_static $w || bad=1
        if [ "$EG_GRAPHED" -le 0 ]; then
            echo "$w: nothing graphed with CUPTI loaded" >&2
            bad=1
        fi
    done
    [ "$bad" = 0 ]
}

# --- the interception suite's programs with the engine on ---------------------------------

@test "engine: rt_static (issue-2 program: legacy + stream, door 4, LaunchKernelEx) with the engine: same bytes" {
    eg_pair rt_static
}
@test "engine: rt_shared (issue-2 program) with the engine: same bytes" {
    eg_pair rt_shared
}
@test "engine: drv_prog (driver API, params/extra/ptsz) with the engine: same bytes" {
    eg_pair drv_prog
}

# --- tools that share the process with the engine -------------------------------------------

@test "engine: compute-sanitizer memcheck on jacobi with the shim: 0 errors, same bytes, graphed > 0" {
    eg_memcheck engine_static jacobi 60
}

# The driver rules the replay relies on, tried on this GPU: a kernel node's launch size
# and parameters, a memset's and a memcpy's addresses are patched to the same bytes as
# eager.  The others are printed for docs/how-it-works.md.
@test "engine: driver rules: kernel launch sizes, memset and memcpy addresses patch to the same bytes as eager" {
    run "$AG_BIN/rules_static"
    echo "$output"
    ag_log "$(echo "$output" | tr '\n' ';')"
    [ "$status" -eq 0 ]
    echo "$output" | grep -q '^rule kernel-grid ok$'
    echo "$output" | grep -q '^rule memset-dst ok$'
    echo "$output" | grep -q '^rule memcpy-ptrs ok$'
}
