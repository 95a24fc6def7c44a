#!/usr/bin/env bats
# sim_devices.bats -- the simulator with several devices (SIM_DEVICES=N): device
# count, a context per device, the driver's errors for cross-context misuse and
# peer access, peer copies, cross-device event waits, one thread per device, a
# capture that spans two devices, the log format, and the single-device
# simulator left exactly as it was.  Program: build/sim/progs/two_devices.
# Then the shim's engine per context (build/sim/progs/devices_loop): each device's
# steps graphed whether one thread switches devices or a thread drives each, and
# cross-device waits and peer copies with the results of AUTOGRAPH=off.

setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}"   # AG_TEST_ROOT: see tests/run.sh
    [ -f build/sim/libcuda.so.1 ] || skip "simulator not built (make sim)"
    [ -x build/sim/progs/two_devices ] || skip "two_devices not built (make sim)"
    local v
    for v in $(compgen -e); do
        case "$v" in SIM_*|AUTOGRAPH*) unset "$v" ;; esac
    done
    export AUTOGRAPH_GUARD_MS=0 AUTOGRAPH_CHUNK_TUNE=0   # no clock-driven choices (sim_run.bash)
    progs=build/sim/progs
    tmp="$BATS_TEST_TMPDIR"
}

# two TAG MODE [VAR=VALUE...]: two_devices MODE on 2 devices; $tmp/TAG.{out,err,log}.
two() {
    local tag=$1 mode=$2
    shift 2
    rm -f "$tmp/$tag".*
    rc=0
    env LD_LIBRARY_PATH=build/sim SIM_DEVICES=2 SIM_LOG="$tmp/$tag.log" "$@" \
        "$progs/two_devices" "$mode" >"$tmp/$tag.out" 2>"$tmp/$tag.err" || rc=$?
    echo "--- two_devices $mode (rc $rc)"; cat "$tmp/$tag.out" "$tmp/$tag.err"
}

@test "sim devices: SIM_DEVICES sets the count; unset, 1 or out of range is one device" {
    two info info
    [ "$rc" -eq 0 ]
    grep -qx "devices: 2" "$tmp/info.out"
    run env LD_LIBRARY_PATH=build/sim SIM_DEVICES=8 "$progs/two_devices" info
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "devices: 8" ]
    run env LD_LIBRARY_PATH=build/sim "$progs/two_devices" info
    [ "$status" -eq 3 ]
    [[ "$output" == *"have 1"* ]]
    run env LD_LIBRARY_PATH=build/sim SIM_DEVICES=9 "$progs/two_devices" info
    [ "$status" -eq 3 ]
    [[ "$output" == *"sim: ignoring SIM_DEVICES='9' (1..8)"* ]]
}

@test "sim devices: names, bus ids and contexts per device; pointer attributes per allocation" {
    two info info
    [ "$rc" -eq 0 ]
    diff - "$tmp/info.out" <<'EOF'
devices: 2
primary contexts distinct: yes
device 0: name='libautograph CPU simulator 0 (sm_90)' bus=0000:01:00.0 uuid[15]=m ctx_device=0 current=own used=2048
device 1: name='libautograph CPU simulator 1 (sm_90)' bus=0000:02:00.0 uuid[15]=1 ctx_device=1 current=own used=2048
pointer p0: device=0 context=ctx0
pointer p1+16: device=1 context=ctx1
stream s of device 1: device=1 ctx=ctx1
can access peer: 0->1 1, 0->0 0
created context on device 1: device=1 distinct=yes
EOF
}

@test "sim devices: cross-context misuse and peer access get the driver's errors" {
    two errors errors
    [ "$rc" -eq 0 ]
    diff - "$tmp/errors.out" <<'EOF'
launch ctx1 function on ctx0 stream: CUDA_ERROR_INVALID_HANDLE
launch ctx0 function on ctx1 stream: CUDA_ERROR_INVALID_HANDLE
launch ctx0 function on the default stream of ctx1: CUDA_ERROR_INVALID_HANDLE
record ctx0 event on ctx1 stream: CUDA_ERROR_INVALID_HANDLE
record ctx0 event on the default stream of ctx1: CUDA_ERROR_INVALID_HANDLE
record ctx1 event on ctx1 stream: CUDA_SUCCESS
ctx0 stream waits for ctx1 event: CUDA_SUCCESS
launch ctx0 graph on ctx1 stream: CUDA_ERROR_INVALID_VALUE
launch ctx0 graph on ctx0 stream: CUDA_SUCCESS
enable peer ctx1 flags=1: CUDA_ERROR_INVALID_VALUE
enable peer ctx1: CUDA_SUCCESS
enable peer ctx1 again: CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
enable peer own context: CUDA_ERROR_INVALID_CONTEXT
disable peer ctx1: CUDA_SUCCESS
disable peer ctx1 again: CUDA_ERROR_PEER_ACCESS_NOT_ENABLED
enable peer to a context of the same device: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
enable peer to a destroyed context: CUDA_ERROR_INVALID_CONTEXT
device ordinal 2: CUDA_ERROR_INVALID_DEVICE
memcpy peer with the contexts swapped: CUDA_ERROR_INVALID_VALUE
memcpy peer: CUDA_SUCCESS
EOF
    # the failed calls ran nothing: the only work is the graph's empty launch and the
    # one good peer copy
    [ "$(grep -vc '^checksum' "$tmp/errors.log")" -eq 3 ]
    grep -qx "event_record e2@d1 stream=s2 dev=1" "$tmp/errors.log"
    grep -qx "event_wait e2@d1 stream=s1 dev=0" "$tmp/errors.log"
    grep -qx "memcpy PtoP dst=a3@d1+0 src=a1@d0+0 bytes=1024 stream=legacy dev=0" \
        "$tmp/errors.log"
}

@test "sim devices: peer copies carry the data both ways (one thread switching contexts)" {
    two seq seq
    [ "$rc" -eq 0 ]
    # it=3: ((4 + 1) * 3 -> device 1: + 1) * 2 = 32; back on device 0: + 1 = 33
    diff - "$tmp/seq.out" <<'EOF'
dev1 p[0]=32 sum=8192
dev0 q[0]=33 sum=8448
EOF
    [ "$(grep -c '^memcpy PtoP dst=a3@d1+0 src=a1@d0+0 bytes=1024 stream=s2 dev=1$' "$tmp/seq.log")" -eq 4 ]
    [ "$(grep -c '^memcpy PtoP dst=a2@d0+0 src=a3@d1+0 bytes=1024 stream=s1 dev=0$' "$tmp/seq.log")" -eq 4 ]
}

# The lines of one round trip, in order: record on device 0, device 1's wait, its
# peer copy, its record, device 0's wait and its copy back.
order_of() {
    grep -E '^(event_record|event_wait|memcpy PtoP)' "$1" | sed 's/ dst=.*stream=/ stream=/'
}

@test "sim devices: a cross-device event wait follows its record, every round (seq and threads)" {
    local want round
    round='event_record e1@d0 stream=s1 dev=0
event_wait e1@d0 stream=s2 dev=1
memcpy PtoP stream=s2 dev=1
event_record e2@d1 stream=s2 dev=1
event_wait e2@d1 stream=s1 dev=0
memcpy PtoP stream=s1 dev=0'
    want=$(for _ in 1 2 3 4; do echo "$round"; done)
    two seq seq
    [ "$rc" -eq 0 ]
    diff <(echo "$want") <(order_of "$tmp/seq.log")
    two threads threads
    [ "$rc" -eq 0 ]
    diff <(echo "$want") <(order_of "$tmp/threads.log")
}

@test "sim devices: a host thread per device gives the results and (sorted) log of one thread" {
    two seq seq
    two threads threads
    [ "$rc" -eq 0 ]
    cmp "$tmp/seq.out" "$tmp/threads.out"
    diff <(sort "$tmp/seq.log") <(sort "$tmp/threads.log")
    # each device's own lines come in the same order either way
    for d in 0 1; do
        diff <(grep " dev=$d\$" "$tmp/seq.log") <(grep " dev=$d\$" "$tmp/threads.log")
    done
}

@test "sim devices: a capture forked onto device 1 replays there, nodes named by device" {
    two graph graph SIM_LOG_GRAPH=marked
    [ "$rc" -eq 0 ]
    grep -qx "graph q\[0\]=16 sum=4096" "$tmp/graph.out"
    [ "$(grep -c '^g:kernel scale .* stream=s2 args=a3@d1+0,02000000,00010000 dev=1$' "$tmp/graph.log")" -eq 3 ]
    [ "$(grep -c '^g:memcpy PtoP dst=a3@d1+0 src=a1@d0+0 bytes=1024 stream=s2 dev=1$' "$tmp/graph.log")" -eq 3 ]
    [ "$(grep -c '^g:graph_launch graph[0-9]* stream=s1 dev=0$' "$tmp/graph.log")" -eq 3 ]
}

@test "sim devices: the log names the device of every line; checksums name theirs" {
    two seq seq
    [ "$rc" -eq 0 ]
    [ -z "$(grep -Ev ' dev=[01]$' "$tmp/seq.log")" ]
    [ -z "$(grep -E 'a[0-9]+\+' "$tmp/seq.log")" ]    # every device pointer has its @d
    grep -qx "checksum a3 device bytes=1024 fnv1a=[0-9a-f]* dev=1" "$tmp/seq.log"
}

@test "sim devices: one device, SIM_DEVICES unset or 1, logs exactly as before" {
    local p
    for p in graph_basic threads; do
        rm -f "$tmp"/u.log "$tmp"/one.log "$tmp"/two.log
        LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/u.log" "$progs/$p" >"$tmp/u.out"
        LD_LIBRARY_PATH=build/sim SIM_DEVICES=1 SIM_LOG="$tmp/one.log" "$progs/$p" >"$tmp/one.out"
        # on 2 devices a program that uses device 0 only: the same lines plus dev=0, @d0
        LD_LIBRARY_PATH=build/sim SIM_DEVICES=2 SIM_LOG="$tmp/two.log" "$progs/$p" >"$tmp/two.out"
        cmp "$tmp/u.out" "$tmp/one.out"
        cmp "$tmp/u.out" "$tmp/two.out"
        diff <(sort "$tmp/u.log") <(sort "$tmp/one.log")
        [ -z "$(grep -E ' dev=|@d[0-9]' "$tmp/u.log")" ]
        diff <(sort "$tmp/u.log") <(sed 's/ dev=0$//; s/@d0//g' "$tmp/two.log" | sort)
    done
}

@test "sim devices: the shim on two devices gives the same results and log" {
    [ -f build/libautograph.so ] || skip "shim not built"
    local m d
    for m in seq threads graph; do
        # the shim's own join events left out, and the stream labels (a graph's nodes
        # carry its capture stream's)
        two "plain_$m" "$m" SIM_LOG_SKIP=event SIM_LOG_STREAMS=hide
        [ "$rc" -eq 0 ]
        two "shim_$m" "$m" SIM_LOG_SKIP=event SIM_LOG_STREAMS=hide \
            LD_PRELOAD="$PWD/build/libautograph.so" AUTOGRAPH_SUMMARY_FILE="$tmp/summary_$m"
        [ "$rc" -eq 0 ]
        cmp "$tmp/plain_$m.out" "$tmp/shim_$m.out"
        diff <(sort "$tmp/plain_$m.log") <(sort "$tmp/shim_$m.log")
        for d in 0 1; do            # each device's work in the same order
            diff <(grep " dev=$d\$" "$tmp/plain_$m.log") <(grep " dev=$d\$" "$tmp/shim_$m.log")
        done
        grep -qx "door unmapped 0" "$tmp/summary_$m"
    done
}

# ---- the shim's engine per context: build/sim/progs/devices_loop ----

# loop TAG MODE STEPS [VAR=VALUE...]: devices_loop MODE STEPS $think_us on 2 devices,
# with the shim's join events and stream labels left out of $tmp/TAG.log.
loop() {
    local tag=$1 mode=$2 steps=$3
    shift 3
    rm -f "$tmp/$tag".*
    rc=0
    env LD_LIBRARY_PATH=build/sim SIM_DEVICES=2 SIM_LOG="$tmp/$tag.log" SIM_LOG_SKIP=event \
        SIM_LOG_STREAMS=hide "$@" "$progs/devices_loop" "$mode" "$steps" "${think_us:-0}" \
        >"$tmp/$tag.out" 2>"$tmp/$tag.err" || rc=$?
    echo "--- devices_loop $mode $steps ${think_us:-0} (rc $rc)"; cat "$tmp/$tag.out" "$tmp/$tag.err"
}

# same_as_off MODE STEPS [VAR=VALUE...]: the run with the shim (summary in
# $tmp/on_MODE.summary) prints the checksums of a run with AUTOGRAPH=off, bit for bit,
# and each device's work reaches the simulator in the same order.
same_as_off() {
    local mode=$1 steps=$2 d
    shift 2
    [ -x "$progs/devices_loop" ] || skip "devices_loop not built (make sim)"
    [ -f build/libautograph.so ] || skip "shim not built"
    loop "off_$mode" "$mode" "$steps" LD_PRELOAD="$PWD/build/libautograph.so" AUTOGRAPH=off
    [ "$rc" -eq 0 ]
    loop "on_$mode" "$mode" "$steps" LD_PRELOAD="$PWD/build/libautograph.so" \
        AUTOGRAPH_SUMMARY_FILE="$tmp/on_$mode.summary" AUTOGRAPH_EXPLAIN=1 "$@"
    [ "$rc" -eq 0 ]
    cmp "$tmp/off_$mode.out" "$tmp/on_$mode.out"
    for d in 0 1; do
        diff <(grep " dev=$d\$" "$tmp/off_$mode.log") <(grep " dev=$d\$" "$tmp/on_$mode.log")
    done
    [ "$(grep -c ' dev=1$' "$tmp/on_$mode.log")" -gt 0 ]
    cat "$tmp/on_$mode.summary"
}

# graphed_on DEVICE MIN SUMMARY: the summary's line of DEVICE's context says it
# graphed at least MIN percent of its launches, with a template.
graphed_on() {
    local line share
    line=$(grep "^context [0-9]* device $1 " "$3")
    echo "$line"
    [[ "$line" =~ templates\ ([0-9]+).*graphed_share\ ([0-9.]+)% ]]
    [ "${BASH_REMATCH[1]}" -ge 1 ]
    share=${BASH_REMATCH[2]%.*}
    [ "$share" -ge "$2" ]
}

@test "sim devices: one thread switching devices every step gets both devices graphed" {
    same_as_off switch 40
    grep -qx "contexts 2" "$tmp/on_switch.summary"
    graphed_on 0 85 "$tmp/on_switch.summary"
    graphed_on 1 85 "$tmp/on_switch.summary"
    grep -qx "cross_context_ops 0" "$tmp/on_switch.summary"
    # a device's stream synchronize ends that device's window only: as many windows
    # end at a sync as the program synchronizes (80), and the copies it reads back at
    # the end, which wait as a synchronize does, end theirs (4)
    grep -qx "flush sync 84" "$tmp/on_switch.summary"
}

@test "sim devices: the legacy stream and cuCtxSynchronize, switching devices, both graphed" {
    same_as_off legacy 40
    graphed_on 0 85 "$tmp/on_legacy.summary"
    graphed_on 1 85 "$tmp/on_legacy.summary"
    grep -qx "flush sync 84" "$tmp/on_legacy.summary"
}

@test "sim devices: a host thread per device gets both devices graphed" {
    same_as_off threads 40
    graphed_on 0 85 "$tmp/on_threads.summary"
    graphed_on 1 85 "$tmp/on_threads.summary"
    grep -qx "flush sync 84" "$tmp/on_threads.summary"
}

@test "sim devices: cross-device event waits and peer copies stay correct, windows end there" {
    local m
    for m in cross cross-threads; do
        same_as_off "$m" 40
        # every wait on the other device's event ended every window first
        grep -qx "cross_context_ops 80" "$tmp/on_$m.summary"
        grep -q "explain: a wait on an event of another context's engine" "$tmp/on_$m.err"
        graphed_on 1 80 "$tmp/on_$m.summary"
    done
}

@test "sim devices: a copy between the devices, synchronous or on the legacy stream, goes out after both devices' work, never held" {
    local m
    for m in peer-legacy peer-legacy-async; do
        same_as_off "$m" 40
        # the copy (cuMemcpyDtoD, or cuMemcpyAsync on the legacy stream, of device 1's
        # memory, device 0 current) is not recorded: every engine's window ends first,
        # device 1's held kernels with it
        grep -qx "unrecorded_calls 40" "$tmp/on_$m.summary"
        graphed_on 1 50 "$tmp/on_$m.summary"
    done
}

@test "sim devices: the per-context engines under the launcher thread and light recording" {
    # a slow program: every engine paces its chunks and hands them to its own launcher
    # thread (AUTOGRAPH_LAUNCH_SPIN_US=0: it sleeps between them)
    local think_us=20
    same_as_off threads 30 AUTOGRAPH_LAUNCH_SPIN_US=0
    grep -qx "templates_paced 2" "$tmp/on_threads.summary"
    graphed_on 0 80 "$tmp/on_threads.summary"
    graphed_on 1 80 "$tmp/on_threads.summary"
    same_as_off switch 30 AUTOGRAPH_LAUNCH_SPIN_US=0
    grep -qx "templates_paced 2" "$tmp/on_switch.summary"
    graphed_on 0 80 "$tmp/on_switch.summary"
    graphed_on 1 80 "$tmp/on_switch.summary"
    # light recording and skimming: after every window differed (no warm-up reaches
    # 3 windows in a row here), then the steps repeat
    think_us=0
    same_as_off switch 40 AUTOGRAPH_LIGHT_AFTER=1 AUTOGRAPH_SKIM_AFTER=1
    graphed_on 0 50 "$tmp/on_switch.summary"
    graphed_on 1 50 "$tmp/on_switch.summary"
}
