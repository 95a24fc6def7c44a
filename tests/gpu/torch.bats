#!/usr/bin/env bats
# torch.bats -- unmodified PyTorch training loops under the engine: an MLP, a small CNN and
# a transformer encoder (tests/gpu/torch_models.py MODEL eager: zero_grad, forward, loss,
# backward, optimizer.step, then torch.cuda.synchronize() per step; batches copied from
# pinned host memory every step).
#
# Run from the repository root:  bats tests/gpu/torch.bats   (or .carry/bats/bin/bats)
# Needs a usable GPU and python3 with PyTorch and CUDA; every test skips otherwise
# ("no GPU", "no python3 with PyTorch and CUDA").
#
# For each model: the program without the shim (a) and with it (b: LD_PRELOAD, default
# switches, AUTOGRAPH_SUMMARY_FILE) prints the same "sha256" line (final parameters,
# buffers and last loss, bit for bit: the step times differ, so only that line is
# compared); the shim's summary shows launches_graphed > 0 (it graphed something) and
# late_issue_failures 0.  The graphed share and both step_us p50 go to the TAP log.
#
# Knobs: AG_TORCH_STEPS (timed steps per run, default 150), AG_TORCH_WARMUP (untimed
# steps first, default 30), AG_ENGINE_TIMEOUT (seconds one program may run, default
# here 180).  AUTOGRAPH_* of the caller's environment are cleared for every run.
# About 6 Python processes of a few seconds each on an H100.

load gpu_helpers

setup_file() {
    export AG_ENGINE_TIMEOUT=${AG_ENGINE_TIMEOUT:-180}
    ag_setup_file || return 1
    ag_setup_python
}

setup() { ag_setup; }

# tm_field TAG KEY N : field N of TAG's stdout line that starts with KEY
tm_field() {
    awk -v k="$2" -v n="$3" '$1 == k { v = $n } END { print v }' "$BATS_TEST_TMPDIR/$1.out"
}

# tm_model MODEL : torch_models.py MODEL eager without (a) and with (b) the shim.
tm_model() {
    need_torch
    local m=$1 t=$BATS_TEST_TMPDIR rc=0 ha hb hc pa pb share
    local cmd=("$AG_PY" tests/gpu/torch_models.py "$m" eager
               --steps "${AG_TORCH_STEPS:-150}" --warmup "${AG_TORCH_WARMUP:-30}")
    eg_run a plain "${cmd[@]}" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "$m: exit status $rc without the shim" >&2
        ag_show a >&2
        return 1
    fi
    ha=$(tm_field a sha256 2)
    if ! [[ $ha =~ ^[0-9a-f]{64}$ ]]; then
        echo "$m: no sha256 line without the shim:" >&2
        head -n 5 "$t/a.out" >&2
        ag_show a >&2
        return 1
    fi
    eg_run b shim "${cmd[@]}" || rc=$?
    eg_stats b
    hb=$(tm_field b sha256 2)
    pa=$(tm_field a step_us 3)
    pb=$(tm_field b step_us 3)
    share=$(awk -v g="$EG_GRAPHED" -v e="$EG_EAGER" 'BEGIN {
        if (g + e > 0) printf "%.1f%%", 100 * g / (g + e); else print "n/a" }')
    ag_log "$m: step_us p50 without the shim ${pa:-?} us, with ${pb:-?} us;" \
        "graphed share $share; ${EG_LINE/, program made ?)/)}"
    if [ "$rc" -ne 0 ]; then
        echo "$m: exit status $rc with the shim$([ "$rc" -ge 124 ] && echo ' (timed out or killed)')" >&2
        ag_show b >&2
        return 1
    fi
    if [ "$ha" != "$hb" ]; then
        echo "$m: sha256 differs with the shim: $ha without, ${hb:-<none>} with" >&2
        # is PyTorch itself deterministic here? a second run without the shim tells
        eg_run c plain "${cmd[@]}" || true
        hc=$(tm_field c sha256 2)
        if [ "$hc" = "$ha" ]; then
            echo "$m: a second run without the shim gives $ha again: the shim changed the result" >&2
        else
            echo "$m: a second run without the shim gives ${hc:-<none>}: PyTorch itself is" \
                "not deterministic here, so this comparison proves nothing" >&2
        fi
        ag_show b >&2
        return 1
    fi
    eg_summary_ok "$m" || return 1
    if [ "$EG_GRAPHED" -le 0 ] && [ "${2:-}" = not_yet_graphed ]; then
        # known (issue 7): results identical, nothing graphed; the log says why
        eg_explain x "${cmd[@]}" 2>/dev/null || true
        ag_log "$m: not graphed (known, open); explain's most frequent lines:"
        grep -o 'explain: .*' "$t/x.err" | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c |
            sort -rn | head -n 4 | while read -r line; do ag_log "$m:   $line"; done
        return 0
    fi
    if [ "$EG_GRAPHED" -le 0 ]; then
        echo "$m: launches_graphed is 0: the engine graphed nothing of a repeating training loop" >&2
        sed 's/^/    summary: /' "$t"/b.sum.* 2>/dev/null | grep -v ' call ' >&2
        eg_explain x "${cmd[@]}"
        return 1
    fi
}

@test "torch: MLP (16 x Linear 1024 + ReLU, SGD) training steps: same sha256 with the shim, graphed > 0" {
    tm_model mlp
}

# Measured on the H100 (2026-11-22): bit-identical, but nothing graphed (0 of 22358
# launches) and 20% slower; the log gives explain's reasons.  Open in issue 7.
@test "torch: CNN (Conv2d + BatchNorm2d + ReLU + MaxPool2d, SGD) training steps: same sha256 with the shim (graphing: logged)" {
    tm_model cnn not_yet_graphed
}

@test "torch: TransformerEncoder (2 layers, d_model 256, Adam) training steps: same sha256 with the shim, graphed > 0" {
    tm_model transformer
}
