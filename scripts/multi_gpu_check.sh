#!/usr/bin/env bash
# multi_gpu_check.sh -- the multi-GPU checks of libautograph in one command: torchrun jobs of
# 2 ranks (DDP training, an all-reduce loop) with and without the shim, bit for bit; the
# no-hang test; tests/gpu/multi_device.bats when it exists; optionally a side-by-side bench.
# Every log goes into one tarball, so a device tool that brings back a few files brings back
# all of it.
#
# usage: scripts/multi_gpu_check.sh [--bench] [--repeats N] [--bench-reps N] [--jobs J]
#                                   [--only LIST] [--budget S] [--no-build] [--dry-run]
#                                   [--keep] OUTDIR
#
#   1. build: make -j16 -s all gpu-progs (--no-build: skipped when build/libautograph.so
#      is there)
#   2. check: each workload once without the shim (no LD_PRELOAD) and once with
#      LD_PRELOAD=build/libautograph.so AUTOGRAPH_SUMMARY_FILE=<run>/sum.%p (one exit
#      summary per rank process) and AUTOGRAPH_EXPLAIN=1 (why windows were not graphed,
#      in the job's logs); every rank's "step" / "sha256" / "result" lines must be the
#      same with and without (SAME / DIFFER), and the ranks must end alike (DDP's
#      parameters, the all-reduced tensors); each rank's graphed_share from its summary.
#      Workloads (--only takes these names, comma-separated):
#        ddp               tests/multi/ddp_train.py (100 steps, loss.item() every step)
#        ddp_nosync        the same with --item-every 0 (no synchronization in the loop)
#        allreduce         tests/multi/allreduce_loop.py (1000 iterations, a sync each)
#        allreduce_nosync  the same with --sync-every 0
#   3. tests/gpu/multi_device.bats through bats, when the file exists
#   4. no-hang: N (--repeats, default 20) runs with the shim of ddp (20 steps) and of
#      allreduce (200 iterations), each under timeout (TMO_REP, default 120 s), J at a
#      time (--jobs, default 4: the small jobs share the 2 GPUs); in the middle run rank 1
#      and in the last run rank 0 sleeps a random 0-2 s at a random step (--delay-rank).
#      Each must end (no timeout), exit 0 and print what one run without the shim prints.
#      After MAX_HANGS (default 3) timeouts of a workload its remaining runs are skipped.
#   5. --bench: ddp_train.py --bench, the same with --item-every 0 --time-every 25 (no sync
#      but every 25 steps, timed together) and allreduce_loop.py --bench (each step timed
#      between two synchronizes, medians after warm-up), --bench-reps (default 3) processes per
#      side, alternating without / with the shim, one job at a time on idle GPUs: the
#      median over processes of the slower rank's p50, and the median of each pair's own
#      ratio (the pair run in turn); a table (table.md): workload | no shim | shim | ratio
#      | pairs | same | graphed share per rank.  Each bench rank is pinned to its own share
#      of BENCH_CPUS (the programs' --cpus), so that where the scheduler puts a rank does not
#      decide a pair's ratio
# NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 are
# exported to every process (multicast must never be used; the Python programs force them
# too).  With fewer than 2 GPUs (nvidia-smi -L) it prints "skipped: fewer than 2 GPUs" and
# exits 0.  Without PyTorch (with CUDA and NCCL) the torchrun parts are skipped.
#
#   --budget S   stop starting jobs S s after the start (default 500), so that the whole
#                script stays within a 10-minute device call; what was not run is "cut"
#   --dry-run    print the plan and the commands, run nothing (no GPU needed)
#   --keep       keep OUTDIR/multi_gpu/ beside OUTDIR/multi_gpu.tgz
# Environment: PYTHON (python3), TORCHRUN (default "$PYTHON -m torch.distributed.run",
# the module torchrun runs), NPROC (2), TMO (120: a check or bench job), TMO_REP (120),
# TMO_MD (200: multi_device.bats), MD_BATS (tests/gpu/multi_device.bats; empty: not run),
# MAX_HANGS (3), REP_STEPS (20), REP_ITERS (200), DDP_ARGS, AR_ARGS (added to every
# ddp_train.py / allreduce_loop.py command), LAUNCH_S (12: seconds one torchrun job is
# assumed to take, for the printed estimate), NVIDIA_SMI (nvidia-smi), BENCH_CPUS (the
# CPUs the bench ranks share out, a list such as 2-9; default 4 CPUs a rank from CPU 2,
# 2-9 for 2 ranks, where the machine has 2 CPUs more; "none": not pinned).
# Writes OUTDIR/multi_gpu.tgz (OUTDIR/multi_gpu/: results.txt, table.md, machine.txt,
# build.log, multi_device.tap, and a folder per job: cmd, torchrun.log, rank<R>.out,
# rank<R>.pid, sum.<pid>, status).  Exit status 0 when nothing failed (cut jobs are not
# failures), 1 otherwise, 2 for a usage error.  Waits on its own background jobs only.
set -uo pipefail

prog=multi_gpu_check.sh
usage() {
    echo "usage: $prog [--bench] [--repeats N] [--bench-reps N] [--jobs J] [--only LIST]" \
         "[--budget S] [--no-build] [--dry-run] [--keep] OUTDIR" >&2
    exit 2
}
bench=0 repeats=20 bench_reps=3 jobs=4 only="" budget=500 build=1 dry=0 keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --bench) bench=1; shift ;;
    --repeats | --bench-reps | --jobs | --only | --budget)
        [ $# -ge 2 ] || usage
        case $1 in
        --repeats) repeats=$2 ;;
        --bench-reps) bench_reps=$2 ;;
        --jobs) jobs=$2 ;;
        --only) only=$2 ;;
        --budget) budget=$2 ;;
        esac
        shift 2 ;;
    --no-build) build=0; shift ;;
    --dry-run) dry=1; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "$prog: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || usage
for v in repeats:"$repeats" bench_reps:"$bench_reps" jobs:"$jobs" budget:"$budget"; do
    case ${v#*:} in
    '' | *[!0-9]*) echo "$prog: bad --${v%%:*} ${v#*:}" >&2; usage ;;
    esac
done
if [ "$bench_reps" -lt 1 ] || [ "$jobs" -lt 1 ]; then
    echo "$prog: --bench-reps and --jobs must be >= 1" >&2
    usage
fi
all_wl="ddp ddp_nosync allreduce allreduce_nosync"
for w in ${only//,/ }; do
    case " $all_wl " in *" $w "*) ;; *) echo "$prog: unknown workload $w (one of: $all_wl)" >&2; usage ;; esac
done

# Multicast must never be used: in every process this script starts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export PATH=$PATH:/usr/local/cuda/bin

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
# shellcheck source=tests/bench/stats.bash
. tests/bench/stats.bash                # median, pair_ratio, pairs_col
mkdir -p "$1" || exit 2
outdir=$(cd "$1" && pwd)
out=$outdir/multi_gpu
rm -rf "$out" "$out.tgz"
mkdir -p "$out" || exit 2
t0=$(date +%s)
deadline=$((t0 + budget))
PYTHON=${PYTHON:-python3}
NPROC=${NPROC:-2} TMO=${TMO:-120} TMO_REP=${TMO_REP:-120} TMO_MD=${TMO_MD:-200}
MAX_HANGS=${MAX_HANGS:-3} REP_STEPS=${REP_STEPS:-20} REP_ITERS=${REP_ITERS:-200}
DDP_ARGS=${DDP_ARGS:-} AR_ARGS=${AR_ARGS:-} LAUNCH_S=${LAUNCH_S:-12}
NVIDIA_SMI=${NVIDIA_SMI:-nvidia-smi}
MIN_LEFT=30
# nproc obeys OMP_NUM_THREADS, exported above
ncpu=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)
BENCH_CPUS=${BENCH_CPUS:-}
if [ -z "$BENCH_CPUS" ]; then
    BENCH_CPUS=none
    [ "$ncpu" -ge $((4 * NPROC + 2)) ] && BENCH_CPUS=2-$((4 * NPROC + 1))
fi
lib=$top/build/libautograph.so
# shellcheck disable=SC2206
torchrun=(${TORCHRUN:-$PYTHON -m torch.distributed.run})
failures=0

say() { echo "$prog: $*" | tee -a "$out/results.txt"; }
note() { echo "$*" >>"$out/results.txt"; }
left() { echo $((deadline - $(date +%s))); }

# finish STATUS: the tarball, then exit
finish() {
    say "total $(($(date +%s) - t0)) s"
    tar czf "$out.tgz" -C "$outdir" multi_gpu
    [ "$keep" = 1 ] || rm -rf "$out"
    echo "$prog: $out.tgz"
    exit "$1"
}

# a device call that ends this script early still gets the tarball of what ran
trap 'say "interrupted"; finish 1' INT TERM

# --- GPUs -------------------------------------------------------------------------------------
ngpu=0 why=
if ! command -v "$NVIDIA_SMI" >/dev/null 2>&1; then
    why="nvidia-smi not found"
elif ! gpus=$("$NVIDIA_SMI" -L 2>/dev/null); then
    why="nvidia-smi -L failed"
else
    ngpu=$(grep -c '^GPU ' <<<"$gpus")
    why="$ngpu listed by nvidia-smi -L"
fi
{
    echo "GPUs: $why"
    [ "$ngpu" -gt 0 ] && "$NVIDIA_SMI" -L 2>&1 && "$NVIDIA_SMI" topo -m 2>&1
    [ "$ngpu" -gt 0 ] && "$NVIDIA_SMI" --query-gpu=name,driver_version --format=csv,noheader 2>&1
    git log -1 --format='%h %s' 2>/dev/null
    date -u
    echo "CPUs: $ncpu"
    df -h /dev/shm 2>&1 | tail -1
    env | grep -E '^(NCCL|TORCH|NVSHMEM|CUDA)_' | sort
} >"$out/machine.txt" 2>&1
if [ "$ngpu" -lt 2 ]; then
    if [ "$dry" = 0 ]; then
        say "skipped: fewer than 2 GPUs ($why)"
        finish 0
    fi
    say "dry run: fewer than 2 GPUs here ($why); printing the commands anyway"
fi

# --- plan -------------------------------------------------------------------------------------
wanted() { [ -z "$only" ] || case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
check_wl=() rep_wl=() bench_wl=()
for w in $all_wl; do
    wanted "$w" || continue
    check_wl+=("$w")
    case $w in ddp | allreduce) rep_wl+=("$w") ;; esac
    case $w in ddp | ddp_nosync | allreduce) [ "$bench" = 1 ] && bench_wl+=("$w") ;; esac
done
declare -A prog_of=([ddp]=ddp_train.py [ddp_nosync]=ddp_train.py
                    [allreduce]=allreduce_loop.py [allreduce_nosync]=allreduce_loop.py)
declare -A args_of=([ddp]="$DDP_ARGS" [ddp_nosync]="--item-every 0 $DDP_ARGS"
                    [allreduce]="$AR_ARGS" [allreduce_nosync]="--sync-every 0 $AR_ARGS")
declare -A bench_args_of=([ddp]="--bench" [ddp_nosync]="--bench --time-every 25"
                          [allreduce]="--bench")
declare -A rep_args_of=([ddp]="--steps $REP_STEPS $DDP_ARGS" [allreduce]="--iters $REP_ITERS $AR_ARGS")
n_check=$((2 * ${#check_wl[@]}))
n_rep=$(((repeats > 0 ? repeats + 1 : 0) * ${#rep_wl[@]}))
n_bench=$((2 * bench_reps * ${#bench_wl[@]}))
# jobs run in waves of $jobs: whole waves
# shellcheck disable=SC2017
est=$(((n_check + jobs - 1) / jobs * LAUNCH_S + (n_rep + jobs - 1) / jobs * LAUNCH_S + n_bench * LAUNCH_S))
say "plan: $n_check check jobs and $n_rep no-hang jobs ($jobs at a time), $n_bench bench jobs;" \
    "about $est s at ~$LAUNCH_S s a torchrun job, plus the build and multi_device.bats;" \
    "budget $budget s"

# --- build ------------------------------------------------------------------------------------
if [ "$build" = 1 ] || [ ! -f "$lib" ]; then
    if [ "$dry" = 1 ]; then
        echo "+ make -j16 -s all gpu-progs"
    elif ! timeout "$(left)" make -j16 -s all gpu-progs >"$out/build.log" 2>&1; then
        tail -30 "$out/build.log"
        say "build failed (build.log)"
        finish 1
    fi
else
    echo "build skipped (--no-build, $lib there)" >"$out/build.log"
fi

# --- PyTorch ----------------------------------------------------------------------------------
torch_ok=1
if [ "$dry" = 0 ]; then
    if ! timeout 120 "$PYTHON" -c '
import sys, torch, torch.distributed as dist
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count(),
      "nccl", ".".join(map(str, torch.cuda.nccl.version())) if dist.is_nccl_available() else "none")
sys.exit(0 if torch.cuda.device_count() >= 2 and dist.is_nccl_available() else 1)' \
            >>"$out/machine.txt" 2>&1; then
        torch_ok=0
        say "skipped: the torchrun jobs ($PYTHON has no PyTorch with 2 CUDA devices and NCCL)"
    fi
fi

# --- one torchrun job -------------------------------------------------------------------------
envclean=(env -u LD_PRELOAD -u CUDA_INJECTION64_PATH)
for v in $(compgen -e); do
    case $v in AUTOGRAPH*) envclean+=(-u "$v") ;; esac
done

# reap DIR: kills what is left of a job's ranks.  torchrun starts each rank in a session of
# its own, so a timeout that ends torchrun can leave them running (and spinning in NCCL):
# by their pid files, and only processes that still run one of tests/multi's programs.
reap() {
    local f pid
    for f in "$1"/rank*.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null)
        case $pid in '' | *[!0-9]*) continue ;; esac
        kill -0 "$pid" 2>/dev/null || continue
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'tests/multi/' || continue
        echo "$prog: killing rank process $pid, left running" >>"$1/torchrun.log"
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
    done
}

# launch DIR SIDE TMO PROGRAM ARGS...: one torchrun job of $NPROC ranks under timeout, SIDE
# off (no LD_PRELOAD), on (the shim, a summary per process in DIR/sum.<pid>) or explain
# (on, with AUTOGRAPH_EXPLAIN=1: why windows were not graphed, in torchrun.log); writes
# DIR/cmd, DIR/torchrun.log, DIR/rank<R>.{out,pid}, DIR/rc and DIR/status: ok, fail, hang
# (timed out, or a collective timed out by the NCCL watchdog: the programs' --pg-timeout is
# below TMO), cut (the budget: not started, or stopped by it), dry
launch() {
    local dir=$1 side=$2 tmo=$3 p=$4 rc st cut=0 r lt
    shift 4
    mkdir -p "$dir"
    lt=$(left)
    if [ "$lt" -lt "$MIN_LEFT" ] && [ "$dry" = 0 ]; then
        echo "not started: the time budget is spent" >"$dir/torchrun.log"
        echo cut >"$dir/status"
        return 0
    fi
    if [ "$tmo" -gt $((lt - 10)) ] && [ "$dry" = 0 ]; then
        tmo=$((lt - 10))
        cut=1
    fi
    local cmd=("${envclean[@]}")
    case $side in
    on) cmd+=(LD_PRELOAD="$lib" AUTOGRAPH_SUMMARY_FILE="$dir/sum.%p") ;;
    explain) cmd+=(LD_PRELOAD="$lib" AUTOGRAPH_SUMMARY_FILE="$dir/sum.%p" AUTOGRAPH_EXPLAIN=1) ;;
    esac
    cmd+=("${torchrun[@]}" --standalone --nnodes=1 --nproc-per-node="$NPROC"
          "$top/tests/multi/$p" --out-dir "$dir" "$@")
    printf '%q ' timeout -k 15 "$tmo" "${cmd[@]}" >"$dir/cmd"
    echo >>"$dir/cmd"
    if [ "$dry" = 1 ]; then
        echo "+ $(cat "$dir/cmd")"
        echo dry >"$dir/status"
        return 0
    fi
    timeout -k 15 "$tmo" "${cmd[@]}" >"$dir/torchrun.log" 2>&1 </dev/null
    rc=$?
    reap "$dir"
    echo "$rc" >"$dir/rc"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        st=hang
        [ "$cut" = 1 ] && st="cut"
    elif [ "$rc" -ne 0 ]; then
        st=fail
        # a collective stuck past the process group's timeout: the NCCL watchdog ended it
        grep -qiE 'watchdog caught collective operation timeout|collective operation timeout' \
            "$dir/torchrun.log" && st=hang
    else
        st=ok
        for r in $(seq 0 $((NPROC - 1))); do
            grep -qx 'done' "$dir/rank$r.out" 2>/dev/null || st=fail
        done
    fi
    echo "$st" >"$dir/status"
}

# pool_submit ARGS...: launch ARGS in the background, at most $jobs at a time (dry: at once)
pool_submit() {
    if [ "$dry" = 1 ]; then
        launch "$@"
        return
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n 2>/dev/null || true
    done
    launch "$@" &
}

status_of() { cat "$1/status" 2>/dev/null || echo missing; }
keyl() { grep -E '^(step|sha256|result) ' "$1" 2>/dev/null; }
endl() { grep -E '^(sha256|result) ' "$1" 2>/dev/null; }

# same_as A B: 0 when every rank's key lines of run B are those of run A (a diff per rank
# in B/diff.rank<R> otherwise: 1), 2 when A printed none
same_as() {
    local r rc=0
    for r in $(seq 0 $((NPROC - 1))); do
        keyl "$1/rank$r.out" >/dev/null || return 2
        diff <(keyl "$1/rank$r.out") <(keyl "$2/rank$r.out") >"$2/diff.rank$r" || rc=1
        [ -s "$2/diff.rank$r" ] || rm -f "$2/diff.rank$r"
    done
    return $rc
}

# ranks_agree DIR: every rank ends with rank 0's sha256 / result line
ranks_agree() {
    local r
    endl "$1/rank0.out" >/dev/null || return 1
    for r in $(seq 1 $((NPROC - 1))); do
        [ "$(endl "$1/rank0.out")" = "$(endl "$1/rank$r.out")" ] || return 1
    done
}

# sumfile DIR R: the exit summary of rank R's process
sumfile() { echo "$1/sum.$(cat "$1/rank$2.pid" 2>/dev/null)"; }
# sumval KEY FILE: the value of the summary's "KEY value" line; "?" when absent
sumval() {
    awk -v k="$1" '{ sub(/^libautograph: /, "") } index($0, k " ") == 1 { v = $NF }
                   END { print (v == "" ? "?" : v) }' "$2" 2>/dev/null || echo "?"
}
# shares DIR: each rank's graphed_share, "r0 / r1"
shares() {
    local r s=
    for r in $(seq 0 $((NPROC - 1))); do
        s="$s${s:+ / }$(sumval graphed_share "$(sumfile "$1" "$r")")"
    done
    echo "$s"
}
# digest DIR R: the counters of rank R's summary worth a look, one line
digest() {
    local f
    f=$(sumfile "$1" "$2")
    [ -f "$f" ] || { echo "no summary"; return; }
    awk '{ sub(/^libautograph: /, "") }
         $1 ~ /^(graphed_share|windows|templates|replays|mismatches|build_failures|late_issue_failures)$/ {
             c = c sprintf("%s %s, ", $1, $2) }
         ($1 == "flush" || $1 == "skip") && NF == 3 { x[$1] = x[$1] sprintf(" %s %s", $2, $3) }
         END { printf "%sflush:%s; skip:%s\n", c, x["flush"], x["skip"] }' "$f"
}

# p50_of DIR: the slower rank's per_iter_us p50 of a bench job (empty when missing)
p50_of() {
    local r v m=
    for r in $(seq 0 $((NPROC - 1))); do
        v=$(awk '$1 == "per_iter_us" && $2 == "p50" { print $3 }' "$1/rank$r.out" 2>/dev/null)
        [ -n "$v" ] || return 0
        m=$(awk -v a="$m" -v b="$v" 'BEGIN { print (a == "" || b + 0 > a + 0) ? b : a }')
    done
    echo "$m"
}
# --- 2. check: with and without the shim -------------------------------------------------------
if [ "$torch_ok" = 1 ] && [ ${#check_wl[@]} -gt 0 ]; then
    echo "$prog: check: ${check_wl[*]}, without and with the shim"
    for w in "${check_wl[@]}"; do
        # shellcheck disable=SC2206
        a=(${args_of[$w]})
        pool_submit "$out/check/$w.off" off "$TMO" "${prog_of[$w]}" ${a[@]+"${a[@]}"}
        pool_submit "$out/check/$w.on" explain "$TMO" "${prog_of[$w]}" ${a[@]+"${a[@]}"}
    done
    wait
    if [ "$dry" = 0 ]; then
        for w in "${check_wl[@]}"; do
            off=$out/check/$w.off on=$out/check/$w.on
            so=$(status_of "$off") sn=$(status_of "$on")
            if [ "$so" != ok ] || [ "$sn" != ok ]; then
                verdict="FAIL (without the shim: $so, with: $sn)"
            else
                same_as "$off" "$on"
                case $? in 0) verdict=SAME ;; 1) verdict=DIFFER ;; *) verdict="FAIL (no result line)" ;; esac
            fi
            agree="ranks agree"
            if [ "$so" = ok ] && ! ranks_agree "$off"; then agree="RANKS DIFFER without the shim"; fi
            if [ "$sn" = ok ] && ! ranks_agree "$on"; then agree="RANKS DIFFER with the shim"; fi
            [ "$verdict" = SAME ] && [ "$agree" = "ranks agree" ] || failures=$((failures + 1))
            say "check $w: $verdict; $agree; graphed_share per rank $(shares "$on")"
            for r in $(seq 0 $((NPROC - 1))); do
                note "  $w rank $r: $(digest "$on" "$r")"
            done
        done
    fi
fi

# --- 3. tests/gpu/multi_device.bats -----------------------------------------------------------
md=${MD_BATS-tests/gpu/multi_device.bats}
if [ -z "$md" ]; then
    say "multi_device.bats: not run (MD_BATS empty)"
elif [ -f "$md" ]; then
    bats=$(command -v bats || echo "$top/.carry/bats/bin/bats")
    if [ "$dry" = 1 ]; then
        echo "+ timeout $TMO_MD $bats --tap $md"
    elif [ ! -x "$bats" ]; then
        say "multi_device.bats: FAIL (no bats: not on PATH, no .carry/bats; make carry)"
        failures=$((failures + 1))
    elif [ "$(left)" -lt "$MIN_LEFT" ]; then
        say "multi_device.bats: cut (the time budget is spent)"
    else
        t=$TMO_MD
        [ "$t" -gt $(($(left) - 10)) ] && t=$(($(left) - 10))
        timeout -k 10 "$t" "$bats" --tap "$md" >"$out/multi_device.tap" 2>&1
        rc=$?
        echo "# exit $rc" >>"$out/multi_device.tap"
        nok=$(grep -c '^ok' "$out/multi_device.tap")
        nfail=$(grep -c '^not ok' "$out/multi_device.tap")
        nskip=$(grep -c '# skip' "$out/multi_device.tap")
        say "multi_device.bats: $nok ok, $nfail failed, $nskip skipped (exit $rc)"
        if [ "$nfail" -gt 0 ] || [ "$rc" -ne 0 ]; then
            failures=$((failures + 1))
            grep -A10 '^not ok' "$out/multi_device.tap" | head -40
        fi
    fi
else
    say "multi_device.bats: not there, not run"
fi

# --- 4. no-hang: repeated runs with the shim, a delayed rank among them ---------------------------
if [ "$torch_ok" = 1 ] && [ "$repeats" -gt 0 ] && [ ${#rep_wl[@]} -gt 0 ]; then
    mid=$(((repeats + 1) / 2))
    delays="rank 1 delayed in run $mid"
    [ "$repeats" -gt "$mid" ] && delays="$delays, rank 0 in run $repeats"
    echo "$prog: no-hang: ${rep_wl[*]}, $repeats runs each with the shim, $jobs at a time ($delays)"
    for w in "${rep_wl[@]}"; do
        # shellcheck disable=SC2206
        a=(${rep_args_of[$w]})
        pool_submit "$out/reps/$w.ref" off "$TMO_REP" "${prog_of[$w]}" "${a[@]}"
    done
    for i in $(seq 1 "$repeats"); do
        for w in "${rep_wl[@]}"; do
            d=$out/reps/$w.$i
            hangs=$(cat "$out"/reps/"$w".*/status 2>/dev/null | grep -c '^hang$')
            if [ "$hangs" -ge "$MAX_HANGS" ] && [ "$dry" = 0 ]; then
                mkdir -p "$d"
                echo skipped >"$d/status"
                continue
            fi
            # shellcheck disable=SC2206
            a=(${rep_args_of[$w]})
            if [ "$i" -eq "$mid" ] && [ "$NPROC" -ge 2 ]; then
                a+=(--delay-rank 1)
            elif [ "$i" -eq "$repeats" ]; then
                a+=(--delay-rank 0)
            fi
            pool_submit "$d" on "$TMO_REP" "${prog_of[$w]}" "${a[@]}"
        done
    done
    wait
    if [ "$dry" = 0 ]; then
        for w in "${rep_wl[@]}"; do
            ref=$out/reps/$w.ref
            nok=0 ndiff=0 nhang=0 nfail=0 ncut=0 nskip=0 bad=
            refok=1
            [ "$(status_of "$ref")" = ok ] || refok=0
            for i in $(seq 1 "$repeats"); do
                d=$out/reps/$w.$i
                st=$(status_of "$d")
                if [ "$st" = ok ] && [ "$refok" = 1 ]; then
                    if same_as "$ref" "$d" && ranks_agree "$d"; then st=ok; else st=differ; fi
                fi
                case $st in
                ok) nok=$((nok + 1)) ;;
                differ) ndiff=$((ndiff + 1)); bad="$bad $i:differ" ;;
                hang) nhang=$((nhang + 1)); bad="$bad $i:hang" ;;
                cut) ncut=$((ncut + 1)) ;;
                skipped) nskip=$((nskip + 1)) ;;
                *) nfail=$((nfail + 1)); bad="$bad $i:$st" ;;
                esac
            done
            delayed=$(grep -h 'delay: sleeping' "$out/reps/$w.$mid/torchrun.log" \
                "$out/reps/$w.$repeats/torchrun.log" 2>/dev/null | sed 's/^\[[^]]*\]:* *//' | paste -sd ';' -)
            line="no-hang $w: $repeats runs with the shim: $nok ok, $nhang timed out, $ndiff differ, $nfail failed"
            [ "$ncut" -gt 0 ] && line="$line, $ncut cut (budget)"
            [ "$nskip" -gt 0 ] && line="$line, $nskip skipped (after $MAX_HANGS timeouts)"
            [ "$refok" = 1 ] || line="$line; the run without the shim: $(status_of "$ref"), nothing compared"
            say "$line${bad:+ (runs$bad)}"
            note "  $w delayed: ${delayed:-none seen}"
            [ $((nhang + ndiff + nfail)) -eq 0 ] && [ "$refok" = 1 ] || failures=$((failures + 1))
        done
    fi
fi

# --- 5. bench: alternating processes, one at a time ---------------------------------------------
if [ "$torch_ok" = 1 ] && [ ${#bench_wl[@]} -gt 0 ]; then
    echo "$prog: bench: ${bench_wl[*]}, $bench_reps processes per side, alternating;" \
         "ranks pinned to shares of CPUs $BENCH_CPUS"
    rows=()
    for w in "${bench_wl[@]}"; do
        # shellcheck disable=SC2206
        a=(${bench_args_of[$w]} ${args_of[$w]})
        [ "$BENCH_CPUS" = none ] || a+=(--cpus "$BENCH_CPUS")
        for r in $(seq 1 "$bench_reps"); do
            for s in off on; do
                launch "$out/bench/$w.$s.$r" "$s" "$TMO" "${prog_of[$w]}" "${a[@]}"
            done
        done
        [ "$dry" = 1 ] && continue
        same=SAME first=
        : >"$out/bench/$w.p50.off"
        : >"$out/bench/$w.p50.on"
        : >"$out/bench/$w.pairs"
        for r in $(seq 1 "$bench_reps"); do
            pair=
            for s in off on; do
                d=$out/bench/$w.$s.$r
                st=$(status_of "$d")
                if [ "$st" != ok ]; then
                    [ "$st" = cut ] || same="FAIL ($s $r: $st)"
                    continue
                fi
                v=$(p50_of "$d")
                [ -n "$v" ] && echo "$v" >>"$out/bench/$w.p50.$s"
                pair="$pair${pair:+ }${v:-?}"
                if [ -z "$first" ]; then
                    first=$d
                elif [ "$same" = SAME ] && ! same_as "$first" "$d"; then
                    same="DIFFER ($s $r)"
                fi
            done
            # the pair run in turn: its own ratio, as processes differ more than sides
            # shellcheck disable=SC2086
            pair_ratio $pair >>"$out/bench/$w.pairs"
        done
        [ -n "$first" ] || same="no run"
        case $same in SAME | "no run") ;; *) failures=$((failures + 1)) ;; esac
        m_off=$(median <"$out/bench/$w.p50.off")
        m_on=$(median <"$out/bench/$w.p50.on")
        ratio=$(awk -v a="$m_off" -v b="$m_on" 'BEGIN {
            if (a == "" || b == "" || b + 0 == 0) print "?"; else printf "%.3f\n", a / b }')
        pairs=$(pairs_col "$out/bench/$w.pairs")
        sh=
        for rk in $(seq 0 $((NPROC - 1))); do
            v=$(for r in $(seq 1 "$bench_reps"); do
                    sumval graphed_share "$(sumfile "$out/bench/$w.on.$r" "$rk")"
                done | grep -v '?' | tr -d '%' | median)
            sh="$sh${sh:+ / }${v:-?}%"
        done
        rows+=("| ${prog_of[$w]} ${bench_args_of[$w]}${args_of[$w]:+ ${args_of[$w]}} | ${m_off:-?} | ${m_on:-?} | $ratio | $pairs | $same | $sh |")
    done
    if [ "$dry" = 0 ]; then
        {
            echo
            echo "libautograph: $lib; $(date -u '+%Y-%m-%d %H:%M UTC'); $NPROC ranks;" \
                 "$("$NVIDIA_SMI" --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | sed 's/^ *//' | paste -sd ',' -)"
            echo "p50: median over $bench_reps processes per side of the slower rank's per-step p50 in us" \
                 "(each step between two torch.cuda.synchronize() calls, after warm-up);"
            echo "pairs: each pair of processes run in turn (no shim, then shim) gives its own ratio;" \
                 "their median, then each pair's (processes of one job differ, with or without the shim)"
            echo "graphed share: median over the shim's processes, per rank (rank 0 / rank 1);" \
                 "ranks pinned to shares of CPUs $BENCH_CPUS"
            echo
            echo "| workload | no shim p50 us | shim p50 us | ratio no-shim/shim | pairs in turn: median (each) | same | graphed share per rank |"
            echo "|---|---|---|---|---|---|---|"
            printf '%s\n' "${rows[@]}"
        } | tee "$out/table.md" | tee -a "$out/results.txt"
    fi
fi

if [ "$dry" = 1 ]; then
    finish 0
fi
if [ "$failures" -gt 0 ]; then
    say "FAILED: $failures check(s) failed (results.txt)"
    finish 1
fi
say "all passed"
finish 0
