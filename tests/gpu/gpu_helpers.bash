# gpu_helpers.bash -- helpers for tests/gpu/gpu.bats and tests/gpu/engine.bats (loaded
# with `load gpu_helpers`).
#
# Every run leaves its files in $BATS_TEST_TMPDIR/<tag>.{out,err}; the shim's exit
# summaries in <tag>.sum.<pid> and the CUPTI counter's counts in <tag>.cupti.<pid>.

# ag_cuda_home: where the toolkit is (for compute-sanitizer).
ag_cuda_home() {
    local nvcc
    nvcc=$(command -v nvcc 2>/dev/null) || nvcc=/usr/local/cuda/bin/nvcc
    echo "${CUDA_HOME:-${nvcc%/bin/nvcc}}"
}

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
