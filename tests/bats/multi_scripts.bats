#!/usr/bin/env bats
# multi_scripts.bats -- the multi-GPU harness (scripts/multi_gpu_check.sh, tests/multi/*.py)
# on a machine without GPUs: what can go wrong before a device run is caught here.
#
#   - the script parses (bash -n, shellcheck -x when installed); the Python programs compile
#     and print their help without PyTorch; the step timer's --time-every (a stub torch);
#     --cpus shares
#   - usage errors exit 2; with fewer than 2 GPUs (no nvidia-smi, a failing one, one GPU)
#     it prints "skipped: fewer than 2 GPUs" and exits 0, with its tarball written
#   - --dry-run (2 GPUs faked) prints every job: the shim and a summary file per pid on
#     one side only; multicast is off in every process, whatever the caller set; the
#     bench ranks pinned to BENCH_CPUS
#   - end to end with tests/bats/fixtures/fake_torchrun.sh standing in for torchrun and
#     the programs: SAME, the per-rank graphed shares, the bench table; a rank that never
#     ends is a timeout, its process (in a session of its own) is killed; a differing
#     loss is DIFFER; both exit 1
# A fake nvidia-smi is always named (NVIDIA_SMI), so that no test runs real GPU jobs on a
# GPU machine either.

setup() {
    cd "$BATS_TEST_DIRNAME/../.." || return 1
    tmp=$BATS_TEST_TMPDIR
    mkdir -p "$tmp/bin"
    printf '#!/bin/sh\nexit 9\n' >"$tmp/bin/smi-fails"
    printf '#!/bin/sh\n[ "$1" = -L ] && echo "GPU 0: Fake (UUID: GPU-0)"\nexit 0\n' >"$tmp/bin/smi-one"
    printf '#!/bin/sh\n[ "$1" = -L ] && { echo "GPU 0: Fake (UUID: GPU-0)"; echo "GPU 1: Fake (UUID: GPU-1)"; }\nexit 0\n' \
        >"$tmp/bin/smi-two"
    printf '#!/bin/sh\necho "torch fake"\nexit 0\n' >"$tmp/bin/python-torch"
    chmod +x "$tmp/bin"/*
    unset NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS
}

mg() { scripts/multi_gpu_check.sh "$@"; }

# fake_run ARGS...: the script end to end with the fake torchrun (no build, no bats file)
fake_run() {
    [ -f build/libautograph.so ] || skip "shim not built (make)"
    run env MD_BATS= NVIDIA_SMI="$tmp/bin/smi-two" PYTHON="$tmp/bin/python-torch" \
        TORCHRUN="bash $PWD/tests/bats/fixtures/fake_torchrun.sh" \
        scripts/multi_gpu_check.sh --no-build --keep "$@"
    echo "$output"
}

@test "multi scripts: multi_gpu_check.sh parses (bash -n, shellcheck when installed)" {
    bash -n scripts/multi_gpu_check.sh
    bash -n tests/bats/fixtures/fake_torchrun.sh
    if command -v shellcheck >/dev/null 2>&1; then
        shellcheck -x scripts/multi_gpu_check.sh tests/bats/fixtures/fake_torchrun.sh
    else
        echo "shellcheck not installed: only bash -n" >&3
    fi
}

@test "multi scripts: the Python programs compile and print their help without PyTorch" {
    PYTHONPYCACHEPREFIX="$tmp/pyc" python3 -m py_compile tests/multi/*.py
    local p
    for p in ddp_train allreduce_loop; do
        run env PYTHONDONTWRITEBYTECODE=1 python3 "tests/multi/$p.py" --help
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"usage: $p.py"* ]]
        [[ "$output" == *"--delay-rank"* ]]
        [[ "$output" == *"--bench"* ]]
    done
}

@test "multi scripts: the step timer: --time-every K times K steps together (one sample each, their mean), none before --warmup" {
    run env PYTHONDONTWRITEBYTECODE=1 python3 - <<'PY'
import sys, types
sys.path.insert(0, "tests/multi")
import mgpu_common as mc
syncs = []
cuda = types.SimpleNamespace(synchronize=lambda dev: syncs.append(dev))
torch = types.SimpleNamespace(cuda=cuda)
for every, want in ((1, 20), (5, 4), (7, 2)):
    syncs.clear()
    args = types.SimpleNamespace(bench=True, warmup=10, time_every=every)
    timer = mc.StepTimer(torch, 0, args)
    for step in range(30):
        timer.start()
        timer.stop(step)
    print(every, len(timer.times), len(syncs))
    assert len(timer.times) == want, (every, len(timer.times))
    assert len(syncs) == 2 * (30 // every) + (30 % every != 0), (every, len(syncs))
args = types.SimpleNamespace(bench=False, warmup=0, time_every=1)
timer = mc.StepTimer(torch, 0, args)
syncs.clear()
timer.start(); timer.stop(0)
assert not syncs and not timer.times
PY
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "multi scripts: --cpus: each local rank pinned to its own equal share, in order; bad lists refused" {
    run env PYTHONDONTWRITEBYTECODE=1 python3 - <<'PY'
import sys
sys.path.insert(0, "tests/multi")
import mgpu_common as mc
assert mc.parse_cpus("2-5") == [2, 3, 4, 5]
assert mc.parse_cpus("2,3,6-7,3") == [2, 3, 6, 7]
assert mc.rank_cpus("2-9", 0, 2) == [2, 3, 4, 5]
assert mc.rank_cpus("2-9", 1, 2) == [6, 7, 8, 9]
assert mc.rank_cpus("2-4", 1, 2) == [3]
assert mc.rank_cpus("2", 1, 2) == [2]
for bad in ("", "x", "5-2", "2-", "2;3"):
    try:
        mc.parse_cpus(bad)
    except SystemExit as e:
        assert "--cpus" in str(e), bad
    else:
        raise AssertionError(bad)
print("ok")
PY
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = ok ]
}

@test "multi scripts: usage errors exit 2" {
    run mg
    [ "$status" -eq 2 ]
    [[ "$output" == *"usage: multi_gpu_check.sh"* ]]
    run mg --bogus "$tmp/o"
    [ "$status" -eq 2 ]
    run mg --repeats x "$tmp/o"
    [ "$status" -eq 2 ]
    run mg --only ddp,nonesuch "$tmp/o"
    [ "$status" -eq 2 ]
    [[ "$output" == *"unknown workload nonesuch"* ]]
    run mg "$tmp/a" "$tmp/b"
    [ "$status" -eq 2 ]
    run mg --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"--repeats"* ]]
}

@test "multi scripts: fewer than 2 GPUs: skipped, exit 0, tarball written" {
    local smi want
    for smi in "$tmp/bin/none" "$tmp/bin/smi-fails" "$tmp/bin/smi-one"; do
        rm -rf "$tmp/o"
        run env NVIDIA_SMI="$smi" scripts/multi_gpu_check.sh "$tmp/o"
        echo "$smi: $output"
        [ "$status" -eq 0 ]
        case $smi in
        */none) want="nvidia-smi not found" ;;
        */smi-fails) want="nvidia-smi -L failed" ;;
        *) want="1 listed by nvidia-smi -L" ;;
        esac
        [[ "$output" == *"skipped: fewer than 2 GPUs ($want)"* ]]
        [ -f "$tmp/o/multi_gpu.tgz" ]
        [ ! -d "$tmp/o/multi_gpu" ]
        tar xzf "$tmp/o/multi_gpu.tgz" -C "$tmp/o" multi_gpu/results.txt
        grep -q 'skipped: fewer than 2 GPUs' "$tmp/o/multi_gpu/results.txt"
    done
}

@test "multi scripts: --dry-run prints every job; the shim and its summary per pid on one side; multicast off" {
    run env NCCL_NVLS_ENABLE=1 NVIDIA_SMI="$tmp/bin/smi-two" MD_BATS= BENCH_CPUS=2-9 \
        scripts/multi_gpu_check.sh --dry-run --no-build --bench --repeats 4 --bench-reps 2 --keep "$tmp/o"
    echo "$output"
    [ "$status" -eq 0 ]
    # 4 workloads x 2 sides, (4 repeats + 1 reference) x 2, 3 benches x 2 sides x 2
    [ "$(grep -c '^+ timeout ' <<<"$output")" -eq $((8 + 10 + 12)) ]
    local on off
    on=$(grep '^+ timeout ' <<<"$output" | grep -c "LD_PRELOAD=$PWD/build/libautograph.so AUTOGRAPH_SUMMARY_FILE=[^ ]*/sum\.%p ")
    off=$(grep '^+ timeout ' <<<"$output" | grep -v 'LD_PRELOAD=/' | grep -c 'env -u LD_PRELOAD')
    echo "on $on off $off"
    [ "$on" -eq $((4 + 8 + 6)) ]
    [ "$off" -eq $((4 + 2 + 6)) ]
    grep '^+ timeout ' <<<"$output" | grep -q -- '--nproc-per-node=2 .*ddp_train.py --out-dir [^ ]*/reps/ddp.2 --steps 20 --delay-rank 1'
    grep '^+ timeout ' <<<"$output" | grep -q -- 'allreduce_loop.py --out-dir [^ ]*/reps/allreduce.4 --iters 200 --delay-rank 0'
    # the bench ranks pinned (BENCH_CPUS), nothing else
    [ "$(grep '^+ timeout ' <<<"$output" | grep -c -- '--cpus 2-9')" -eq 12 ]
    [ "$(grep '^+ timeout ' <<<"$output" | grep -c -- '--cpus')" -eq 12 ]
    grep -q '^NCCL_NVLS_ENABLE=0$' "$tmp/o/multi_gpu/machine.txt"
    grep -q '^TORCH_SYMM_MEM_DISABLE_MULTICAST=1$' "$tmp/o/multi_gpu/machine.txt"
    grep -q '^NVSHMEM_DISABLE_NVLS=1$' "$tmp/o/multi_gpu/machine.txt"
}

@test "multi scripts: end to end with a fake torchrun: SAME, graphed shares per rank, bench table" {
    fake_run --bench --repeats 3 --bench-reps 2 --jobs 2 "$tmp/o"
    [ "$status" -eq 0 ]
    [ "$(grep -c 'SAME; ranks agree; graphed_share per rank 90.0% / 91.0%' <<<"$output")" -eq 4 ]
    [[ "$output" == *"no-hang ddp: 3 runs with the shim: 3 ok, 0 timed out, 0 differ, 0 failed"* ]]
    [[ "$output" == *"no-hang allreduce: 3 runs with the shim: 3 ok, 0 timed out, 0 differ, 0 failed"* ]]
    [[ "$output" == *"| ddp_train.py --bench | 151.00 | 100.00 | 1.510 | 1.510 (1.510, 1.510) | SAME |"* ]]
    [[ "$output" == *"all passed"* ]]
    [ -f "$tmp/o/multi_gpu.tgz" ]
    tar tzf "$tmp/o/multi_gpu.tgz" | grep -q 'multi_gpu/table.md'
    tar tzf "$tmp/o/multi_gpu.tgz" | grep -q 'multi_gpu/check/ddp.on/rank1.out'
}

@test "multi scripts: bench processes that differ: the medians per side, and each pair run in turn with its own ratio and their median" {
    FAKE_SPREAD=1 MD_BATS= fake_run --bench --repeats 0 --bench-reps 3 --only ddp "$tmp/o"
    [ "$status" -eq 0 ]
    # no shim 151, 301, 91; shim 100, 200, 150: medians 151 / 150; pairs 1.51, 1.505, 0.607
    [[ "$output" == *"| ddp_train.py --bench | 151.00 | 150.00 | 1.007 | 1.505 (1.510, 1.505, 0.607) | SAME |"* ]]
}

@test "multi scripts: a rank that never ends is a timeout, and its process is killed" {
    FAKE_HANG=1 TMO_REP=2 fake_run --repeats 2 --only ddp "$tmp/o"
    [ "$status" -eq 1 ]
    [[ "$output" == *"no-hang ddp: 2 runs with the shim: 0 ok, 2 timed out"* ]]
    local d pid st
    for d in "$tmp/o/multi_gpu/reps/ddp.1" "$tmp/o/multi_gpu/reps/ddp.2"; do
        [ "$(cat "$d/status")" = hang ]
        grep -q 'killing rank process' "$d/torchrun.log"
        pid=$(cat "$d/rank0.pid")
        # gone, or a zombie whose parent has not reaped it yet
        st=$(ps -o stat= -p "$pid" || true)
        echo "rank 0 pid $pid: state '$st'"
        [[ -z "$st" || "$st" == Z* ]]
    done
}

@test "multi scripts: a loss that differs with the shim is DIFFER" {
    FAKE_DIFFER=1 fake_run --repeats 1 --only ddp "$tmp/o"
    [ "$status" -eq 1 ]
    [[ "$output" == *"check ddp: DIFFER; ranks agree"* ]]
    [[ "$output" == *"no-hang ddp: 1 runs with the shim: 0 ok, 0 timed out, 1 differ"* ]]
    grep -q 'step 3 loss 0x1.ffp+0' "$tmp/o/multi_gpu/check/ddp.on/diff.rank1"
}
