#!/usr/bin/env bats
# gpu.bats -- the GPU suite: unmodified programs with and without libautograph.
#
# Run from the repository root:  bats tests/gpu/gpu.bats   (or .carry/bats/bin/bats)
# Needs a usable GPU; every test says `skip "no GPU"` otherwise.  Builds what it needs
# with `make all gpu-progs` (tests/gpu/gpu.mk) when a GPU is there.
#
# These tests check interception, not graphing: the shim always runs with AUTOGRAPH=off
# here (ag_run in gpu_helpers.bash), since the engine (on by default) holds launches back
# and replays them as graphs, which CUPTI counts differently.  The engine's own tests are
# in tests/gpu/engine.bats.
#
# For each program: run without the shim -> output A; run with the shim AND the
# independent CUPTI counter (tests/gpu/cupti_count.c, CUDA_INJECTION64_PATH) -> output B,
# the shim's kernel_launches N_shim and CUPTI's kernel records N_cupti.  A == B byte for
# byte, N_shim == N_cupti, and the shim's "door unmapped" is 0.  The numbers are printed
# on the TAP log ("# ..." lines).

load gpu_helpers

setup_file() {
    ag_setup_file || return 1
    ag_setup_python
}

setup() { ag_setup; }

# --- the reference counter itself ---------------------------------------------

@test "gpu: CUPTI counter alone counts rt_static's launches exactly" {
    ag_cupti_only c_rt "$AG_BIN/rt_static" || { ag_show c_rt; false; }
    ag_counts c_rt
    local want
    want=$(ag_expected c_rt)
    ag_log "rt_static without shim: N_cupti=$N_CUPTI, program says $want launches"
    [ -n "$want" ]
    [ "$N_DROPPED" -eq 0 ]
    [ "$N_CUPTI" -eq "$want" ]
}

@test "gpu: CUPTI counter alone counts drv_prog's launches exactly" {
    ag_cupti_only c_drv "$AG_BIN/drv_prog" || { ag_show c_drv; false; }
    ag_counts c_drv
    local want
    want=$(ag_expected c_drv)
    ag_log "drv_prog without shim: N_cupti=$N_CUPTI, program says $want launches"
    [ -n "$want" ]
    [ "$N_DROPPED" -eq 0 ]
    [ "$N_CUPTI" -eq "$want" ]
}

# --- (a)-(c): compiled programs -----------------------------------------------

@test "gpu (a): static cudart <<<>>> + cudaGetDriverEntryPoint: same bytes, N_shim == N_cupti" {
    ag_compiled_program rt_static
}

@test "gpu (b): shared cudart (-cudart=shared): same bytes, N_shim == N_cupti" {
    ag_compiled_program rt_shared
}

@test "gpu (c): driver API, embedded fatbin, params/extra/ptsz: same bytes, N_shim == N_cupti" {
    ag_compiled_program drv_prog
}

# --- (d), (e): Python -----------------------------------------------------------

@test "gpu (d): PyTorch cuBLAS + elementwise: same hash, N_shim == N_cupti" {
    need_torch
    ag_plain a "$AG_PY" tests/gpu/torch_prog.py || { ag_show a; false; }
    ag_shim_cupti b "$AG_PY" tests/gpu/torch_prog.py || { ag_show b; false; }
    grep -q '^sha256 [0-9a-f]\{64\}$' "$BATS_TEST_TMPDIR/a.out"
    ag_check_pair torch a b
}

@test "gpu (e): Triton kernel loop: same hash, N_shim == N_cupti" {
    need_torch
    [ "${AG_TRITON:-0}" = 1 ] || skip "no triton"
    TRITON_CACHE_DIR=$BATS_TEST_TMPDIR/tcache_a ag_plain a "$AG_PY" tests/gpu/triton_prog.py ||
        { ag_show a; false; }
    # a fresh cache: the shim also sees Triton compile (ptxas runs with LD_PRELOAD)
    TRITON_CACHE_DIR=$BATS_TEST_TMPDIR/tcache_b ag_shim_cupti b "$AG_PY" tests/gpu/triton_prog.py ||
        { ag_show b; false; }
    grep -q '^sha256 [0-9a-f]\{64\}$' "$BATS_TEST_TMPDIR/a.out"
    ag_check_pair triton a b
}

# --- tools that share the process with the shim ---------------------------------

@test "gpu: compute-sanitizer memcheck on (a) with the shim: 0 errors, same bytes" {
    local cs
    cs=$(ag_tool compute-sanitizer) || skip "no compute-sanitizer"
    local t=$BATS_TEST_TMPDIR
    ag_plain a "$AG_BIN/rt_static" 5 || { ag_show a; false; }
    # compute-sanitizer passes its environment (LD_PRELOAD included) to the target;
    # its own messages go to --log-file so stdout holds only the program's bytes.
    # AUTOGRAPH=off: this compares launch counts (engine.bats runs it with the engine).
    ag_env_clean
    "${AG_ENV[@]}" LD_PRELOAD="$AG_SHIM" AUTOGRAPH=off AUTOGRAPH_SUMMARY_FILE="$t/san.sum.%p" \
        "$cs" --tool memcheck --error-exitcode 99 --log-file "$t/san.log" \
        "$AG_BIN/rt_static" 5 >"$t/san.out" 2>"$t/san.err" ||
        { sed 's/^/    /' "$t/san.log" | tail -n 40; ag_show san; false; }
    ag_counts san
    local errs want
    errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' "$t/san.log" | tail -n 1)
    want=$(ag_expected san)
    ag_log "compute-sanitizer: ERROR SUMMARY ${errs:-?} errors; N_shim=$N_SHIM (program: $want)" \
        "summary_files=$N_SUMFILES door_unmapped=$N_UNMAPPED"
    [ "$errs" = 0 ]
    cmp "$t/a.out" "$t/san.out"
    [ "$N_SHIM" -eq "$want" ]
    [ "$N_UNMAPPED" -eq 0 ]
}

@test "gpu: PyTorch profiler with the shim: Chrome trace has the kernel events" {
    need_torch
    local t=$BATS_TEST_TMPDIR
    ag_plain a "$AG_PY" tests/gpu/torch_profile.py "$t/trace_a.json" || { ag_show a; false; }
    ag_shim b "$AG_PY" tests/gpu/torch_profile.py "$t/trace_b.json" || { ag_show b; false; }
    ag_counts b
    local ka kb
    ka=$(awk '$1 == "trace_kernels" { print $2 }' "$t/a.out")
    kb=$(awk '$1 == "trace_kernels" { print $2 }' "$t/b.out")
    ag_log "profiler: trace kernel events without shim $ka, with shim $kb;" \
        "N_shim=$N_SHIM (whole process) door_unmapped=$N_UNMAPPED"
    [ "$kb" -gt 0 ]
    [ "$ka" -eq "$kb" ]
    grep -q '"cat": *"kernel"' "$t/trace_b.json"
    cmp "$t/a.out" "$t/b.out"          # same kernel names, same output hash
    [ "$N_SHIM" -ge "$kb" ]
    [ "$N_UNMAPPED" -eq 0 ]
}
