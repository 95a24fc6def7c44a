# shellcheck shell=bash disable=SC2034,SC2154  # (sets and reads the caller's variables)
# compare_lib.bash -- the driver shared by loose_bench.sh and dyn_bench.sh: run each
# workload with and without libautograph, compare the outputs (SAME / DIFFER), time it in
# alternating processes per side and take medians.  Each script keeps its own workload
# list and table columns.
#
# Sourced after `set -u`; the caller sets first:
#   prog        the script's name for messages ("loose_bench.sh")
#   keys        the ERE of the first words of the lines both sides must print alike
#   TMO         the per-process timeout default (TMO=${TMO:-60})
#   check_runs  1: every timing run must print the first one's key lines, keeps each timing
#               run's summary (<name>.time.<side>.<rep>.summary) and reports its rc
# then calls `cmp_init DEFAULT_REPS WITH_ONLY "$@"` (WITH_ONLY 1: accept --only LIST).
# --alt "VAR=VAL ..." adds a third side, the shim with those switches (AUTOGRAPH_LAUNCH_
# THREAD=0, say): checked like the shim, timed in the same turns (no shim, shim, alt),
# and shown in two more columns (alt_head, alt_sep, alt_row).

# shellcheck source=tests/bench/stats.bash
. "$(dirname "${BASH_SOURCE[0]}")/stats.bash"

# cmp_init DEFAULT_REPS WITH_ONLY ARGS...: parses the options and LIBAUTOGRAPH_SO OUTDIR;
# sets dry build reps only lib out bin NVCC NVCC_ARCH PYTHON here, fd 3 (the stderr)
cmp_init() {
    dry=0 build=1 reps=$1 only='' alt='' alt_env=()
    local with_only=$2
    shift 2
    while [ $# -gt 0 ]; do
        case "$1" in
        --dry-run) dry=1; shift ;;
        --no-build) build=0; shift ;;
        --reps) reps=$2; shift 2 ;;
        --alt) alt=$2; shift 2 ;;
        --only)
            if [ "$with_only" -eq 1 ]; then only=$2; shift 2
            else echo "$prog: unknown option $1" >&2; exit 1; fi ;;
        -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        --*) echo "$prog: unknown option $1" >&2; exit 1 ;;
        *) break ;;
        esac
    done
    if [ $# -ne 2 ]; then
        local opts="[--dry-run] [--no-build] [--reps N] [--alt 'VAR=VAL ...']"
        [ "$with_only" -eq 1 ] && opts="$opts [--only NAME,...]"
        echo "usage: $prog $opts LIBAUTOGRAPH_SO OUTDIR" >&2
        exit 1
    fi
    case "$reps" in '' | *[!0-9]* | 0) echo "$prog: bad --reps $reps" >&2; exit 1 ;; esac
    read -ra alt_env <<<"$alt"
    local w
    for w in ${alt_env[@]+"${alt_env[@]}"}; do
        [[ $w =~ ^[A-Z][A-Z0-9_]*= ]] || {
            echo "$prog: bad --alt word '$w' (want VAR=VALUE)" >&2
            exit 1
        }
    done
    if [ -n "$alt" ] && [ ${#alt_env[@]} -eq 0 ]; then
        echo "$prog: --alt needs at least one VAR=VALUE" >&2
        exit 1
    fi

    lib=$1 out=$2
    if [ ! -f "$lib" ] && [ $dry -eq 0 ]; then
        echo "$prog: no such library: $lib" >&2
        exit 1
    fi
    case "$lib" in /*) ;; *) lib=$PWD/$lib ;; esac
    mkdir -p "$out/bin" || exit 1
    out=$(cd "$out" && pwd)
    bin=$out/bin

    NVCC=${NVCC:-nvcc}
    NVCC_ARCH=${NVCC_ARCH:--gencode arch=compute_90,code=sm_90}
    PYTHON=${PYTHON:-python3}
    here=$(cd "$(dirname "$0")" && pwd)
    pin=()
    local cpus=${BENCH_CPUS:-}
    if [ -z "$cpus" ]; then
        cpus=none
        if command -v taskset >/dev/null 2>&1 && [ "$(nproc 2>/dev/null || echo 1)" -ge 8 ]; then
            cpus=2-5
        fi
    fi
    [ "$cpus" != none ] && pin=(taskset -c "$cpus")
    exec 3>&2
}

# find_src FILE: the first of SRC_DIR, this folder, ../gpu, ../bench that has FILE
find_src() {
    local d
    for d in ${SRC_DIR:+"$SRC_DIR"} "$here" "$here/../gpu" "$here/../bench"; do
        if [ -f "$d/$1" ]; then
            echo "$d/$1"
            return 0
        fi
    done
    echo "$prog: cannot find $1 (set SRC_DIR)" >&2
    return 1
}

say() { echo "$prog: $*" >&2; }

# run CMD...: runs it, or prints it under --dry-run (on the script's own stderr, fd 3)
run() {
    if [ "$dry" -eq 1 ]; then
        echo "+ $*" >&3
        return 0
    fi
    "$@"
}

# wanted NAME: true when --only is empty or lists NAME
wanted() {
    [ -z "$only" ] && return 0
    case ",$only," in *",$1,"*) return 0 ;; esac
    return 1
}

# wanted_any PREFIX: some wanted workload's name starts with PREFIX (all are, without --only)
wanted_any() {
    [ -z "$only" ] && return 0
    case ",$only" in *",$1"*) return 0 ;; esac
    return 1
}

# build_prog NAME [LINK ARGS...]: NAME.cu (find_src) into $bin/NAME with nvcc; exits on failure
build_prog() {
    local p=$1 src
    shift
    src=$(find_src "$p.cu") || exit 1
    say "building $p"
    # shellcheck disable=SC2086
    run "$NVCC" -O2 $NVCC_ARCH -o "$bin/$p" "$src" "$@" || {
        say "build of $p failed"
        exit 1
    }
}

# torch_cuda_ok: python can import torch with a GPU (assumed under --dry-run)
torch_cuda_ok() {
    [ "$dry" -eq 1 ] ||
        timeout "$TMO" "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
            >/dev/null 2>&1
}

# side off|on|alt, then the command words: runs one process under timeout, every side
# pinned alike (BENCH_CPUS: a taskset CPU list; default 2-5 where there are 8 or more CPUs
# and taskset exists: the program's thread, a framework's helper threads and the shim's
# launcher thread each get a core, away from CPU 0; "none": not pinned); alt is the shim
# with --alt's switches
side() {
    local s=$1 extra=()
    shift
    [ "$s" = alt ] && extra=("${alt_env[@]}")
    if [ "$s" != off ]; then
        run ${pin[@]+"${pin[@]}"} timeout "$TMO" env LD_PRELOAD="$lib" AUTOGRAPH_SUMMARY=1 \
            ${extra[@]+"${extra[@]}"} "$@"
    else
        run ${pin[@]+"${pin[@]}"} timeout "$TMO" "$@"
    fi
}

# the lines that must match between the two sides
keylines() { grep -E "^($keys) " "$1" 2>/dev/null; }

# p50 FILE: the per_iter_us p50 of one timing run
p50() { awk '$1 == "per_iter_us" && $2 == "p50" { v = $3 } END { if (v != "") print v }' "$1" 2>/dev/null; }

# sumstat KEY FILE: the word after KEY in the exit summary ("libautograph: graphed_share P%",
# "libautograph: templates N", "libautograph: patches N"); "?" when absent
sumstat() {
    awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { v = $(i + 1) } }
         END { print (v == "" ? "?" : v) }' "$2" 2>/dev/null
}

# guard_col NAME: the speed guard's own in-process A/B in NAME's timing runs with the
# shim (match_speed.c: blocks of the run with graphing on and paused): the median of
# their guard_speedup (eager time over graphed time) and how many of the runs that made
# a trial ended with graphing paused, e.g. "1.16 (0 of 3 paused)"; "-" when no run made
# a trial (a run shorter than AUTOGRAPH_GUARD_MS of replays, or one that never waits).
# Process medians on a machine whose processes spread widely say less than this.
guard_col() {
    local f v n=0 paused=0 vals=""
    for f in "$out/$1".time.on.*.summary; do
        [ -f "$f" ] || continue
        v=$(sumstat guard_speedup "$f")
        awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || continue
        vals+="$v"$'\n'
        n=$((n + 1))
        [ "$(sumstat guard "$f")" = paused ] && paused=$((paused + 1))
    done
    if [ "$n" -eq 0 ]; then
        echo "-"
    else
        echo "$(printf '%s' "$vals" | median) ($paused of $n paused)"
    fi
}

# check_same NAME CMD...: one run per side (NAME.{off,on,alt}.{out,err}, NAME.summary and
# with --alt NAME.alt.summary); sets same to SAME, DIFFER, FAIL (...) or "dry run"
check_same() {
    local name=$1 rc_off rc_on rc_alt=0
    shift
    say "$name: correctness (off, on${alt:+, alt})"
    side off "$@" >"$out/$name.off.out" 2>"$out/$name.off.err"
    rc_off=$?
    side on "$@" >"$out/$name.on.out" 2>"$out/$name.on.err"
    rc_on=$?
    grep '^libautograph:' "$out/$name.on.err" >"$out/$name.summary" 2>/dev/null
    if [ -n "$alt" ]; then
        side alt "$@" >"$out/$name.alt.out" 2>"$out/$name.alt.err"
        rc_alt=$?
        grep '^libautograph:' "$out/$name.alt.err" >"$out/$name.alt.summary" 2>/dev/null
    fi
    if [ "$dry" -eq 1 ]; then
        same='dry run'
    elif [ $rc_off -ne 0 ] || [ $rc_on -ne 0 ] || [ $rc_alt -ne 0 ]; then
        same="FAIL (rc off $rc_off, on $rc_on${alt:+, alt $rc_alt})"
    elif ! keylines "$out/$name.off.out" >/dev/null; then
        same="FAIL (no result line)"
    elif ! diff <(keylines "$out/$name.off.out") <(keylines "$out/$name.on.out") >"$out/$name.diff"; then
        same=DIFFER
    elif [ -n "$alt" ] &&
        ! diff <(keylines "$out/$name.off.out") <(keylines "$out/$name.alt.out") >"$out/$name.alt.diff"; then
        same="DIFFER (alt)"
    else
        same=SAME
    fi
    say "$name: $same"
}

# ratio_of A B: A / B to 3 decimals, or "?" when either is empty or B is 0
ratio_of() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a == "" || b == "" || b + 0 == 0) print "?"; else printf "%.3f\n", a / b }'
}

# time_sides NAME "TIMING WORDS" CMD...: $reps alternating processes per side of CMD
# TIMING WORDS --time (no shim, shim, and with --alt the alt side, in turn); sets m_off,
# m_on and m_alt (the medians of their p50s, empty when none), ratio (m_off / m_on or
# "?"), ratio_alt (m_off / m_alt) and pairs (pairs_col of each no shim, shim pair's
# ratio); with check_runs=1 may set same to "DIFFER (timing run ...)"
time_sides() {
    local name=$1 r s f v rc ref='' pair sides=(off on)
    [ -n "$alt" ] && sides+=(alt)
    # shellcheck disable=SC2206
    local tx=($2)
    shift 2
    say "$name: timing, $reps processes per side, alternating"
    : >"$out/$name.p50.off"
    : >"$out/$name.p50.on"
    : >"$out/$name.p50.alt"
    : >"$out/$name.pairs"
    for r in $(seq 1 "$reps"); do
        pair=
        for s in "${sides[@]}"; do
            f=$out/$name.time.$s.$r
            side "$s" "$@" ${tx[@]+"${tx[@]}"} --time >"$f.out" 2>"$f.err"
            rc=$?
            [ "$dry" -eq 1 ] && continue
            [ "$check_runs" -eq 1 ] || [ "$s" != off ] &&
                grep '^libautograph:' "$f.err" >"$f.summary" 2>/dev/null
            v=$(p50 "$f.out")
            [ "$s" = alt ] || pair="$pair${pair:+ }${v:-?}"
            if [ -n "$v" ]; then
                echo "$v" >>"$out/$name.p50.$s"
            elif [ "$check_runs" -eq 1 ]; then
                say "$name: timing run $s $r gave no p50 (rc $rc, see $f.err)"
            else
                say "$name: timing run $s $r gave no p50 (see $f.err)"
            fi
            [ "$check_runs" -eq 1 ] || continue
            # every timing run must print what the first one printed
            if [ -z "$ref" ]; then
                ref=$f.out
            elif [ "$same" = SAME ] && ! diff <(keylines "$ref") <(keylines "$f.out") >/dev/null; then
                same="DIFFER (timing run $s $r)"
                say "$name: $same: $f.out against $ref"
            fi
        done
        # shellcheck disable=SC2086
        pair_ratio $pair >>"$out/$name.pairs"
    done
    pairs=$(pairs_col "$out/$name.pairs")
    m_off=$(median <"$out/$name.p50.off")
    m_on=$(median <"$out/$name.p50.on")
    m_alt=$(median <"$out/$name.p50.alt")
    ratio=$(ratio_of "$m_off" "$m_on")
    ratio_alt=$(ratio_of "$m_off" "$m_alt")
}

# need_workloads: exits 1, saying so, when --only left no workload in names
need_workloads() {
    [ ${#names[@]} -gt 0 ] && return 0
    say "no workloads to run (--only $only)"
    exit 1
}

# measure_workload I "TIMING WORDS": workload I of names and cmds, checked for the same
# output on every side (check_same), then timed (time_sides, which sets its results)
measure_workload() {
    local cmd
    # shellcheck disable=SC2206
    cmd=(${cmds[$1]})
    check_same "${names[$1]}" "${cmd[@]}"
    time_sides "${names[$1]}" "$2" "${cmd[@]}"
}

# The table's two columns for the alt side (nothing without --alt): alt_head (the
# header's cells), alt_sep (their separator), alt_row (a workload's: m_alt, ratio_alt),
# each ending in "|" to follow a cell's "|"
alt_head() { [ -z "$alt" ] || printf ' shim with %s p50 | ratio no-shim/alt |' "$alt"; }
alt_sep() { [ -z "$alt" ] || printf -- '---|---|'; }
alt_row() { [ -z "$alt" ] || printf ' %s | %s |' "${m_alt:-?}" "$ratio_alt"; }
