#!/usr/bin/env bats
# multi_device.bats -- the shim's engine per context on two GPUs (issue 32).
#
# Run from the repository root:  bats tests/gpu/multi_device.bats
# Needs two usable GPUs: every test says `skip "no GPU"` without one and `skip "fewer
# than 2 GPUs"` with one.  Builds what it needs with `make all gpu-progs`.
#
# Program: build/gpu/two_devices_static and _shared (tests/gpu/two_devices_prog.cu):
# one host thread switching devices with cudaSetDevice every step, the same with
# cross-device event waits and cudaMemcpyPeerAsync copies (through the host where peer
# access is not available), synchronous cudaMemcpy between the devices on the legacy
# streams, and a host thread per device.  Each run is made without
# the shim (a) and with it (b, the engine on): both exit 0, the result hashes are
# identical byte for byte, and the exit summary's per-context lines ("context I
# device D templates T ... launches_graphed G ...") show graphs on both devices.

load gpu_helpers

setup_file() {
    ag_setup_file
    local n=0
    if [ "${AG_GPU:-0}" = 1 ]; then
        n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
        [ "$n" -ge 2 ] || echo "# skipped: fewer than 2 GPUs ($n)" >&3
    else
        echo "# skipped: no GPU" >&3
    fi
    export AG_NGPUS=$n
}

setup() {
    ag_setup
    [ "${AG_NGPUS:-0}" -ge 2 ] || skip "fewer than 2 GPUs"
}

# md_graphed_on DEVICE : b's summary has a line for DEVICE's context with a template and
# launches graphed (summed over its summary files).
md_graphed_on() {
    local lines graphed
    lines=$(cat "$BATS_TEST_TMPDIR"/b.sum.* 2>/dev/null | grep "^context [0-9]* device $1 ")
    ag_log "device $1: $(echo "${lines:-no context line}" | paste -sd ';')"
    graphed=$(echo "$lines" | awk '{ for (i = 1; i < NF; i++) if ($i == "launches_graphed") s += $(i + 1) }
                                   END { print s + 0 }')
    if [ "$graphed" -le 0 ]; then
        echo "device $1: no launch graphed (context lines: ${lines:-none})" >&2
        eg_explain explain $MD_CMD
        return 1
    fi
}

# md_pair PROG MODE ITERS : the pair of runs, then both devices graphed.
md_pair() {
    MD_CMD="$AG_BIN/$1 $2 $3"
    eg_pair "$@" || return 1
    grep -h "^contexts " "$BATS_TEST_TMPDIR"/b.sum.* | grep -qx "contexts 2" || {
        echo "$1 $2: the summary does not count 2 contexts" >&2
        return 1
    }
    md_graphed_on 0 && md_graphed_on 1
}

@test "two GPUs: one thread switching devices every step: same results, both devices graphed" {
    md_pair two_devices_static switch 200
    md_pair two_devices_shared switch 200
}

@test "two GPUs: cross-device event waits and peer copies: same results, both devices graphed" {
    md_pair two_devices_static peer 200
    ag_log "$(grep -h '^peer_access' "$BATS_TEST_TMPDIR/b.err")"
    grep -h "^cross_context_ops" "$BATS_TEST_TMPDIR"/b.sum.* | grep -qv "cross_context_ops 0"
    md_pair two_devices_shared peer 200
}

@test "two GPUs: a synchronous copy between the devices on the legacy streams (ordered after both devices' work): same results, both devices graphed, the copy never held" {
    md_pair two_devices_static legacy 200
    grep -h "^unrecorded_calls" "$BATS_TEST_TMPDIR"/b.sum.* | grep -qv "unrecorded_calls 0"
}

@test "two GPUs: a host thread per device: same results, both devices graphed" {
    md_pair two_devices_static threads 200
    md_pair two_devices_shared threads 200
}

@test "two GPUs: every mode in one process, with the launcher thread pacing chunks" {
    # AUTOGRAPH_CHUNK_SLOW_US=1: a window whose program spends over 1 us of its own
    # between calls is paced, its chunks handed to its own engine's launcher thread
    md_pair two_devices_static all 100
    eg_pair_cmd "two_devices paced" AUTOGRAPH_CHUNK_SLOW_US=1 \
        "$AG_BIN/two_devices_static" all 100
}
