#!/usr/bin/env bats
# sim_devices.bats -- the simulator with several devices (SIM_DEVICES=N): device
# count, a context per device, the driver's errors for cross-context misuse and
# peer access, peer copies, cross-device event waits, one thread per device, a
# capture that spans two devices, the log format, and the single-device
# simulator left exactly as it was.  Program: build/sim/progs/two_devices.

setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}"   # AG_TEST_ROOT: see tests/run.sh
    [ -f build/sim/libcuda.so.1 ] || skip "simulator not built (make sim)"
    [ -x build/sim/progs/two_devices ] || skip "two_devices not built (make sim)"
    local v
    for v in $(compgen -e); do
        case "$v" in SIM_*|AUTOGRAPH*) unset "$v" ;; esac
    done
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
    local m
    for m in seq threads graph; do
        two "plain_$m" "$m"
        [ "$rc" -eq 0 ]
        two "shim_$m" "$m" LD_PRELOAD="$PWD/build/libautograph.so" \
            AUTOGRAPH_SUMMARY_FILE="$tmp/summary_$m"
        [ "$rc" -eq 0 ]
        cmp "$tmp/plain_$m.out" "$tmp/shim_$m.out"
        diff <(sort "$tmp/plain_$m.log") <(sort "$tmp/shim_$m.log")
        grep -qx "door unmapped 0" "$tmp/summary_$m"
    done
}
