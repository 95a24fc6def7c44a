# gpu_helpers.bash -- helpers for the GPU suites tests/gpu/gpu.bats, engine.bats and
# safety.bats (loaded with `load gpu_helpers`).
#
# Every run leaves its files in $BATS_TEST_TMPDIR/<tag>.{out,err}; the shim's exit
# summaries in <tag>.sum.<pid> and the CUPTI counter's counts in <tag>.cupti.<pid>.

# ag_cuda_home: where the toolkit is (for compute-sanitizer).
ag_cuda_home() {
    local nvcc
    nvcc=$(command -v nvcc 2>/dev/null) || nvcc=/usr/local/cuda/bin/nvcc
    echo "${CUDA_HOME:-${nvcc%/bin/nvcc}}"
}

# ag_tool NAME : the path of a toolkit program (compute-sanitizer, ncu): from PATH, else
# the toolkit's bin/; prints nothing and fails when there is none.
ag_tool() {
    local p
    p=$(command -v "$1" 2>/dev/null) || p="$(ag_cuda_home)/bin/$1"
    [ -x "$p" ] && echo "$p"
}

# ag_setup_python: for setup_file, after ag_setup_file: exports AG_PY (python3, or
# $PYTHON), PYTHONUNBUFFERED=1, AG_TORCH=1 when it has PyTorch with CUDA and AG_TRITON=1
# when it also has Triton (else 0).
ag_setup_python() {
    export AG_PY=${PYTHON:-python3}
    export PYTHONUNBUFFERED=1
    export AG_TORCH=0 AG_TRITON=0 AG_JAX=0
    [ "${AG_GPU:-0}" = 1 ] || return 0
    if "$AG_PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
        >/dev/null 2>&1; then
        AG_TORCH=1
        "$AG_PY" -c 'import triton' >/dev/null 2>&1 && AG_TRITON=1
    fi
    "$AG_PY" -c 'import jax' >/dev/null 2>&1 && AG_JAX=1
    return 0
}

need_torch() { [ "${AG_TORCH:-0}" = 1 ] || skip "no python3 with PyTorch and CUDA"; }
need_jax() { [ "${AG_JAX:-0}" = 1 ] || skip "no python3 with JAX"; }

# ag_setup_file: the suites' setup_file: exports AG_TOP, AG_SHIM, AG_BIN and AG_GPU
# (1 with a usable GPU, after building the library and the GPU programs; else 0, with
# the reason on the TAP log).
ag_setup_file() {
    cd "$BATS_TEST_DIRNAME/../.." || return 1
    export AG_TOP=$PWD
    export AG_SHIM=$AG_TOP/build/libautograph.so
    export AG_BIN=$AG_TOP/build/gpu
    local why
    why=$(ag_gpu_reason)
    if [ -n "$why" ]; then
        export AG_GPU=0
        echo "# no GPU: $why" >&3
        return 0
    fi
    export AG_GPU=1
    make -s all gpu-progs >&2 || return 1
    echo "# GPU: $("$AG_BIN/probe")" >&3
}

# ag_setup: the suites' setup: skips with "no GPU" unless AG_GPU=1; needs the library.
ag_setup() {
    [ "${AG_GPU:-0}" = 1 ] || skip "no GPU"
    cd "$AG_TOP" || return 1
    [ -f "$AG_SHIM" ] || {
        echo "$AG_SHIM not built (make)" >&2
        return 1
    }
}

# ag_gpu_reason: empty when a GPU is usable, else why not (one line).
ag_gpu_reason() {
    if ! command -v nvidia-smi >/dev/null 2>&1; then
        echo "nvidia-smi not found"
        return
    fi
    if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
        echo "nvidia-smi -L lists no GPU"
        return
    fi
    local probe="$AG_TOP/build/gpu/probe" out
    if [ ! -x "$probe" ]; then
        probe="$BATS_FILE_TMPDIR/probe"
        cc -o "$probe" "$AG_TOP/tests/gpu/probe.c" -ldl 2>/dev/null || {
            echo "cannot build the probe"
            return
        }
    fi
    out=$("$probe" 2>&1) || echo "probe failed: $out"
}

# ag_sum KEY FILE... : the sum of the values of "KEY value" lines over the files
# (KEY may contain spaces, e.g. "door unmapped").  Prints 0 for no file.
ag_sum() {
    local key=$1
    shift
    local f files=()
    for f in "$@"; do [ -f "$f" ] && files+=("$f"); done
    if [ ${#files[@]} -eq 0 ]; then
        echo 0
        return
    fi
    awk -v key="$key" '
        { line = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", line) }
        line == key { s += $NF }
        END { printf "%d\n", s }' "${files[@]}"
}

# ag_env_clean: the start of a command line that runs without the shim, the CUPTI
# counter or any AUTOGRAPH_* switch of the caller's environment (sets array AG_ENV).
ag_env_clean() {
    local v
    AG_ENV=(env -u LD_PRELOAD -u CUDA_INJECTION64_PATH)
    for v in $(compgen -e); do
        case $v in AUTOGRAPH*) AG_ENV+=(-u "$v") ;; esac
    done
}

# ag_run TAG SHIM CUPTI CMD... : run CMD with stdout/stderr in $BATS_TEST_TMPDIR/TAG.*;
# SHIM=1 preloads the shim with AUTOGRAPH=off (summary in TAG.sum.<pid>), CUPTI=1
# injects the CUPTI counter (count in TAG.cupti.<pid>).  Neither leaks in from the
# caller's environment, nor does any AUTOGRAPH_* switch.
# AUTOGRAPH=off: these tests check interception (every launch reaches the driver as
# made, N_shim == N_cupti); the engine, on by default, holds launches back and replays
# graphs, so the shim's launch counters and CUPTI's kernel records would no longer
# match.  The engine has its own suite (tests/gpu/engine.bats).
ag_run() {
    local tag=$1 shim=$2 cupti=$3
    shift 3
    ag_env_clean
    local cmd=("${AG_ENV[@]}")
    [ "$shim" = 1 ] && cmd+=(LD_PRELOAD="$AG_SHIM" AUTOGRAPH=off
                             AUTOGRAPH_SUMMARY_FILE="$BATS_TEST_TMPDIR/$tag.sum.%p")
    [ "$cupti" = 1 ] && cmd+=(CUDA_INJECTION64_PATH="$AG_TOP/build/gpu/libcupti_count.so"
                              AG_CUPTI_COUNT_FILE="$BATS_TEST_TMPDIR/$tag.cupti.%p")
    "${cmd[@]}" "$@" >"$BATS_TEST_TMPDIR/$tag.out" 2>"$BATS_TEST_TMPDIR/$tag.err"
}

ag_plain()      { ag_run "$1" 0 0 "${@:2}"; }   # neither shim nor CUPTI
ag_cupti_only() { ag_run "$1" 0 1 "${@:2}"; }   # CUPTI counter, no shim
ag_shim_cupti() { ag_run "$1" 1 1 "${@:2}"; }   # shim and CUPTI counter
ag_shim()       { ag_run "$1" 1 0 "${@:2}"; }   # shim only

# ag_show TAG : the stderr of a run, indented, on the TAP log (for failures).
ag_show() {
    local f="$BATS_TEST_TMPDIR/$1.err"
    [ -f "$f" ] && sed 's/^/    /' "$f" | tail -n 30
}

ag_log() { echo "# $*" >&3; }

# ag_expected TAG : the program's own "expected_launches N" (stderr), or empty.
ag_expected() {
    awk '$1 == "expected_launches" { print $2 }' "$BATS_TEST_TMPDIR/$1.err" | tail -n 1
}

# ag_counts TAG : sets N_SHIM, N_CUPTI, N_UNMAPPED, N_DROPPED, N_SUMFILES from TAG's files.
ag_counts() {
    local t="$BATS_TEST_TMPDIR/$1"
    N_SHIM=$(ag_sum kernel_launches "$t".sum.*)
    N_UNMAPPED=$(ag_sum "door unmapped" "$t".sum.*)
    N_CUPTI=$(ag_sum kernels "$t".cupti.*)
    N_DROPPED=$(ag_sum dropped "$t".cupti.*)
    N_SUMFILES=$(find "$BATS_TEST_TMPDIR" -maxdepth 1 -name "$1.sum.*" | wc -l)
}

# ag_doors TAG : the shim's door counts and launch-call counts, summed over files.
ag_doors() {
    cat "$BATS_TEST_TMPDIR/$1".sum.* 2>/dev/null |
        awk 'NF == 3 && ($1 == "door" || ($1 == "call" && $2 ~ /Launch|GraphLaunch/)) {
                 s[$1 ":" $2] += $3 }
             END { for (k in s) print k "=" s[k] }' | sort | paste -sd ' ' -
}

# ag_check_pair NAME A_TAG B_TAG : the common assertions of "(x) with vs without the
# shim": both ran, outputs identical byte for byte, N_shim == N_cupti, no escapes.
ag_check_pair() {
    local name=$1 a=$2 b=$3 dir=$BATS_TEST_TMPDIR
    ag_counts "$b"
    ag_log "$name: output sha256 without shim $(sha256sum <"$dir/$a.out" | cut -c1-16)," \
        "with shim $(sha256sum <"$dir/$b.out" | cut -c1-16) ($(wc -c <"$dir/$b.out") bytes)"
    ag_log "$name: N_shim=$N_SHIM N_cupti=$N_CUPTI (cupti dropped $N_DROPPED)" \
        "door_unmapped=$N_UNMAPPED summary_files=$N_SUMFILES"
    ag_log "$name: $(ag_doors "$b")"
    if ! cmp -s "$dir/$a.out" "$dir/$b.out"; then
        echo "$name: outputs differ with the shim" >&2
        return 1
    fi
    if [ "$N_SUMFILES" -lt 1 ]; then
        echo "$name: the shim wrote no summary file" >&2
        return 1
    fi
    if [ "$N_CUPTI" -le 0 ]; then
        echo "$name: the CUPTI counter saw no kernel" >&2
        return 1
    fi
    if [ "$N_DROPPED" -ne 0 ]; then
        echo "$name: CUPTI dropped $N_DROPPED records: the reference count is not exact" >&2
        return 1
    fi
    if [ "$N_SHIM" -ne "$N_CUPTI" ]; then
        echo "$name: N_shim=$N_SHIM != N_cupti=$N_CUPTI" \
            "($((N_CUPTI - N_SHIM)) launches the shim did not count)" >&2
        return 1
    fi
    if [ "$N_UNMAPPED" -ne 0 ]; then
        echo "$name: door unmapped=$N_UNMAPPED (a wrapped name escaped the shim)" >&2
        return 1
    fi
}

# ag_compiled_program NAME : the common test of programs (a)-(c): build/gpu/NAME runs
# without the shim and with shim + CUPTI; same bytes, N_shim == N_cupti == the
# program's own count, and every per-symbol count it printed matches the shim's.
ag_compiled_program() {
    ag_plain a "$AG_BIN/$1" || { ag_show a; false; }
    ag_shim_cupti b "$AG_BIN/$1" || { ag_show b; false; }
    ag_check_pair "$1" a b
    [ "$N_SHIM" -eq "$(ag_expected b)" ]
    ag_check_calls b
}

# ag_check_calls TAG : every "expected_call SYMBOL N" the program printed on stderr
# matches the shim's "call SYMBOL" count (summed over summary files).
ag_check_calls() {
    local t="$BATS_TEST_TMPDIR/$1" sym want got bad=0
    while read -r _ sym want; do
        got=$(ag_sum "call $sym" "$t".sum.*)
        ag_log "$1: call $sym: shim $got, program $want"
        if [ "$got" -ne "$want" ]; then
            echo "$1: call $sym counted $got, the program made $want" >&2
            bad=1
        fi
    done < <(awk '$1 == "expected_call"' "$t.err")
    return $bad
}

# --- runs with the engine (engine.bats, safety.bats) ----------------------------------------
# AG_ENGINE_TIMEOUT: seconds one program may run (default 300): a hang fails the test.

# eg_run TAG WHAT CMD... : run CMD (which may start with NAME=value words for env) with
# stdout/stderr in $BATS_TEST_TMPDIR/TAG.{out,err}, under a time limit.
#   WHAT = plain | shim | shim+cupti | cupti
# shim: LD_PRELOAD the shim, summary in TAG.sum.<pid> (AUTOGRAPH left to its default
# unless CMD sets it); cupti: the independent CUPTI counter, counts in TAG.cupti.<pid>.
# An earlier run's TAG.sum.* and TAG.cupti.* go first: a test that runs a tag twice
# sums only the last run's.
eg_run() {
    local tag=$1 what=$2
    shift 2
    rm -f "$BATS_TEST_TMPDIR/$tag".sum.* "$BATS_TEST_TMPDIR/$tag".cupti.*
    ag_env_clean
    local cmd=("${AG_ENV[@]}") lim=()
    case $what in *shim*)
        cmd+=(LD_PRELOAD="$AG_SHIM" AUTOGRAPH_SUMMARY_FILE="$BATS_TEST_TMPDIR/$tag.sum.%p") ;;
    esac
    case $what in *cupti*)
        cmd+=(CUDA_INJECTION64_PATH="$AG_BIN/libcupti_count.so"
              AG_CUPTI_COUNT_FILE="$BATS_TEST_TMPDIR/$tag.cupti.%p") ;;
    esac
    command -v timeout >/dev/null 2>&1 && lim=(timeout -k 10 "${AG_ENGINE_TIMEOUT:-300}")
    "${lim[@]}" "${cmd[@]}" "$@" >"$BATS_TEST_TMPDIR/$tag.out" 2>"$BATS_TEST_TMPDIR/$tag.err"
}

# eg_stats TAG : the engine's summary counts of TAG's run (summed over its summary files)
# and the program's own launch count.
eg_stats() {
    local t="$BATS_TEST_TMPDIR/$1"
    EG_GRAPHED=$(ag_sum launches_graphed "$t".sum.*)
    EG_EAGER=$(ag_sum launches_eager "$t".sum.*)
    EG_SUMFILES=$(find "$BATS_TEST_TMPDIR" -maxdepth 1 -name "$1.sum.*" | wc -l)
    EG_EXPECTED=$(ag_expected "$1")
    EG_LATE_FAIL=$(ag_sum late_issue_failures "$t".sum.*)
    local k line=""
    for k in templates variants replays chunk_launches patches mismatches period_cuts \
        build_failures late_issue_failures; do
        line+=" $k $(ag_sum "$k" "$t".sum.*)"
    done
    EG_LINE="launches_graphed $EG_GRAPHED launches_eager $EG_EAGER (sum $((EG_GRAPHED + EG_EAGER)), program made ${EG_EXPECTED:-?})$line"
}

# eg_explain TAG CMD... : rerun CMD with the shim and AUTOGRAPH_EXPLAIN=1; show its stderr.
eg_explain() {
    local tag=$1
    shift
    eg_run "$tag" shim AUTOGRAPH_EXPLAIN=1 "$@" || true
    echo "--- stderr with AUTOGRAPH_EXPLAIN=1 (last 40 lines):" >&2
    tail -n 40 "$BATS_TEST_TMPDIR/$tag.err" | sed 's/^/    /' >&2
}

# eg_pair PROG ARGS... : eg_pair_cmd for build/gpu/PROG ARGS.
eg_pair() { eg_pair_cmd "$*" "$AG_BIN/$1" "${@:2}"; }

# eg_pair_cmd NAME CMD... : CMD without the shim (a) and with it (b): both exit 0, a's
# stdout is not empty (and, for engine_* programs, only hash lines), b's stdout equals
# a's byte for byte, the shim wrote a summary, and no held work failed when issued late
# (late_issue_failures 0: these programs make no failing call).  Sets EG_* from b's
# summary and logs them; NAME names the run in messages.
eg_pair_cmd() {
    local name=$1 dir=$BATS_TEST_TMPDIR rc=0
    shift
    eg_run a plain "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "$name: exit status $rc without the shim" >&2
        ag_show a >&2
        return 1
    fi
    if [ ! -s "$dir/a.out" ] || { [[ $name == engine_* ]] &&
            grep -qvE '^[a-z]+ [a-z_0-9]+ bytes [0-9]+ fnv1a64 [0-9a-f]{16}$' "$dir/a.out"; }; then
        echo "$name: malformed output without the shim:" >&2
        head -n 5 "$dir/a.out" >&2
        return 1
    fi
    eg_run b shim "$@" || rc=$?
    eg_stats b
    ag_log "$name: $EG_LINE"
    if [ "$rc" -ne 0 ]; then
        echo "$name: exit status $rc with the shim$([ "$rc" -ge 124 ] && echo ' (timed out or killed)')" >&2
        ag_show b >&2
        return 1
    fi
    if ! cmp -s "$dir/a.out" "$dir/b.out"; then
        echo "$name: stdout differs with the shim (results not bit-identical):" >&2
        diff "$dir/a.out" "$dir/b.out" | head -n 20 >&2
        ag_show b >&2
        return 1
    fi
    eg_summary_ok "$name"
}

# eg_summary_ok NAME : after eg_run/eg_load: the shim wrote a summary, and no held work
# failed when it was issued late
eg_summary_ok() {
    if [ "$EG_SUMFILES" -lt 1 ]; then
        echo "$1: the shim wrote no summary file" >&2
        return 1
    fi
    if [ "$EG_LATE_FAIL" -ne 0 ]; then
        echo "$1: late_issue_failures $EG_LATE_FAIL: held work failed when issued late" >&2
        return 1
    fi
}

# eg_repeating PROG ARGS... : eg_pair, and the engine graphed some of the launches.
eg_repeating() {
    eg_pair "$@" || return 1
    if [ "$EG_GRAPHED" -le 0 ]; then
        echo "$1 ${*:2}: launches_graphed is 0: the engine graphed nothing of a repeating workload" >&2
        sed 's/^/    summary: /' "$BATS_TEST_TMPDIR"/b.sum.* 2>/dev/null | grep -v ' call ' >&2
        eg_explain x "$AG_BIN/$1" "${@:2}"
        return 1
    fi
}

# eg_exactly_once I PROG ARGS... : build/gpu/PROG ARGS without the shim (tag aI) and with
# the shim and the CUPTI counter (tag bI): both exit 0, the same stdout, and CUPTI, which
# counts kernel executions (graph nodes included), saw exactly the program's number of
# launches: none dropped, none run twice.  Sets EG_* from bI and logs them.
eg_exactly_once() {
    local i=$1 prog=$2 dir=$BATS_TEST_TMPDIR bad=0
    shift 2
    eg_run "a$i" plain "$AG_BIN/$prog" "$@" || { ag_show "a$i"; return 1; }
    eg_run "b$i" shim+cupti "$AG_BIN/$prog" "$@" || { ag_show "b$i"; return 1; }
    ag_counts "b$i"
    eg_stats "b$i"
    ag_log "$prog $* with CUPTI: N_cupti=$N_CUPTI (dropped $N_DROPPED), program $EG_EXPECTED; $EG_LINE"
    if ! cmp -s "$dir/a$i.out" "$dir/b$i.out"; then
        echo "$prog $*: stdout differs with the shim and CUPTI" >&2
        bad=1
    fi
    if [ "$N_DROPPED" -ne 0 ] || [ "$N_CUPTI" -ne "$EG_EXPECTED" ]; then
        echo "$prog $*: CUPTI saw $N_CUPTI kernels (dropped $N_DROPPED), the program made $EG_EXPECTED" >&2
        bad=1
    fi
    return $bad
}

# eg_memcheck PROG ARGS... : build/gpu/PROG ARGS without the shim (tag a) and under
# compute-sanitizer memcheck with the shim (tag san; the tool's own messages in san.log,
# so san.out holds only the program's output): 0 errors, the same stdout, and the engine
# graphed some launches.  Skips without compute-sanitizer.
eg_memcheck() {
    local cs t=$BATS_TEST_TMPDIR errs
    cs=$(ag_tool compute-sanitizer) || skip "no compute-sanitizer"
    eg_run a plain "$AG_BIN/$1" "${@:2}" || { ag_show a; return 1; }
    # compute-sanitizer passes its environment (LD_PRELOAD included) to the target
    eg_run san shim "$cs" --tool memcheck --error-exitcode 99 --log-file "$t/san.log" \
        "$AG_BIN/$1" "${@:2}" ||
        { sed 's/^/    /' "$t/san.log" | tail -n 40; ag_show san; return 1; }
    eg_stats san
    errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' "$t/san.log" | tail -n 1)
    ag_log "compute-sanitizer memcheck, $*: ERROR SUMMARY ${errs:-?} errors; $EG_LINE"
    [ "$errs" = 0 ] || { echo "$*: memcheck found ${errs:-?} errors" >&2; return 1; }
    cmp "$t/a.out" "$t/san.out" || { echo "$*: stdout differs under memcheck" >&2; return 1; }
    [ "$EG_SUMFILES" -ge 1 ] || { echo "$*: the shim wrote no summary" >&2; return 1; }
    [ "$EG_GRAPHED" -gt 0 ] || { echo "$*: nothing graphed under memcheck" >&2; return 1; }
}
