#!/usr/bin/env bash
# tests/run.sh -- run every test suite of libautograph and print one closing line.
#
# Called by `make test` (after `make all`); can also be run by hand from any directory.
#
# Suites, in this order, one after the other (no parallelism):
#   1. unit   tests/unit/unit.mk builds build/tests/unit/test_* (`make test` depends on
#             them); tests/bats/unit.bats runs each as one bats test.  A unit executable
#             that unit.bats does not name is run here directly as one test, so a new
#             one is never left out and none is counted twice: exit 0 = pass,
#             77 = skipped (automake convention), anything else = fail (its output is
#             shown as TAP comments).
#   2. bats   every tests/bats/*.bats file (build, nolibcuda, simulator, ...).
#   3. gpu    every tests/gpu/*.bats file.  Without a usable GPU (`nvidia-smi -L` absent
#             or failing) they still run and skip themselves with reason "no GPU"; this
#             script says so in a visible line.
# bats is `bats` from PATH, else .carry/bats/bin/bats (see `make carry`).  Each bats file
# runs as `bats --tap FILE`; its TAP output is shown as it runs and counted: `ok` = passed,
# `ok ... # skip` = skipped, `not ok` = failed.  A file that plans more tests than it runs
# (crash, failing setup_file) counts the missing ones as failed; a file whose bats exits
# non-zero without a `not ok` line counts one failure.
#
# AUTOGRAPH_* variables of the caller's environment are cleared first (the shim reports
# unknown ones on stderr, and the tests set exactly what they need).
#
# Knobs (not AUTOGRAPH_*, for that reason):
#   AG_TEST_TIMEOUT  seconds one bats file or unit executable may run (default 1800)
#   AG_TEST_ROOT     run in this folder instead of the repository: its build/ is the build
#                    under test (a sanitizer build, see tests/sanitize/sanitize.sh); the
#                    simulator suites' setup() honours it too
#   AG_TEST_FILES    the bats files to run, space-separated, relative to the root (default:
#                    every tests/bats/*.bats, then every tests/gpu/*.bats)
#
# The last line of output is exactly `N passed, N failed, N skipped`; the exit status is
# non-zero when anything failed (or when no test ran at all).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "${AG_TEST_ROOT:-$top}" || exit 2

for v in $(compgen -e); do
    case "$v" in AUTOGRAPH*) unset "$v" ;; esac
done

timeout_s=${AG_TEST_TIMEOUT:-1800}
passed=0 failed=0 skipped=0
log=$(mktemp "${TMPDIR:-/tmp}/autograph-tests.XXXXXX") || exit 2
trap 'rm -f "$log"' EXIT

# run_limited CMD... : CMD under `timeout` when available (a hung test must not hang CI)
run_limited() {
    if command -v timeout >/dev/null 2>&1; then
        timeout -k 10 "$timeout_s" "$@"
    else
        "$@"
    fi
}

if [ ! -f build/libautograph.so ]; then
    echo "tests/run.sh: build/libautograph.so missing; building it with make" >&2
    ${MAKE:-make} --no-print-directory all || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
fi

bats_cmd=""
if command -v bats >/dev/null 2>&1; then
    bats_cmd=bats
elif [ -x "$top/.carry/bats/bin/bats" ]; then
    bats_cmd="$top/.carry/bats/bin/bats"
fi

# --- 1. unit executables ------------------------------------------------------------
unit_n=0
if [ -d build/tests/unit ]; then
    for exe in build/tests/unit/*; do
        [ -f "$exe" ] && [ -x "$exe" ] || continue
        name=${exe#build/tests/unit/}
        if [ -f tests/bats/unit.bats ] &&
                grep -qE "build/tests/unit/$name([^A-Za-z0-9_.-]|\$)" tests/bats/unit.bats; then
            continue    # unit.bats runs this one
        fi
        if [ "$unit_n" -eq 0 ]; then echo "# unit: build/tests/unit/ executables not run by tests/bats/unit.bats"; fi
        unit_n=$((unit_n + 1))
        run_limited "$exe" </dev/null >"$log" 2>&1
        rc=$?
        case $rc in
            0)  echo "ok $unit_n unit/$name"; passed=$((passed + 1)) ;;
            77) echo "ok $unit_n unit/$name # skip (exit 77)"; skipped=$((skipped + 1)) ;;
            *)  echo "not ok $unit_n unit/$name (exit $rc)"
                sed 's/^/# /' "$log"
                failed=$((failed + 1)) ;;
        esac
    done
fi

# --- 2 and 3. bats files -------------------------------------------------------------
# run_bats FILE: run one bats file, show its TAP output, add to the counters
run_bats() {
    local f=$1 rc plan ok notok skip ran
    echo "# bats: $f"
    if [ -z "$bats_cmd" ]; then
        echo "not ok 1 $f: bats not found (install Debian bats, or make carry)"
        failed=$((failed + 1))
        return
    fi
    run_limited "$bats_cmd" --tap "$f" </dev/null 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | head -n 1)
    skip=$(grep -cE '^ok [0-9]+ .*# skip( |$)' "$log")
    ok=$(grep -cE '^ok [0-9]+' "$log")
    notok=$(grep -cE '^not ok [0-9]+' "$log")
    ran=$((ok + notok))
    passed=$((passed + ok - skip))
    skipped=$((skipped + skip))
    failed=$((failed + notok))
    if [ -n "$plan" ] && [ "$plan" -gt "$ran" ]; then
        echo "# run.sh: $f planned $plan tests but ran $ran; counting $((plan - ran)) as failed"
        failed=$((failed + plan - ran))
    elif [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
        echo "# run.sh: bats exited with status $rc for $f; counting one failure"
        failed=$((failed + 1))
    fi
}

shopt -s nullglob
bats_files=(tests/bats/*.bats)
gpu_files=(tests/gpu/*.bats)
shopt -u nullglob
if [ -n "${AG_TEST_FILES:-}" ]; then
    read -r -a bats_files <<<"$AG_TEST_FILES"
    gpu_files=()
fi

# The CPU suites run with the speed guard and chunk plan tuning off: their choices follow
# the machine's clock, which on the simulator (and under a sanitizer) says nothing of
# graphs; their own tests turn them on.  The GPU suites run with them as users get them.
for f in ${bats_files[@]+"${bats_files[@]}"}; do
    AUTOGRAPH_GUARD_MS=0 AUTOGRAPH_CHUNK_TUNE=0 run_bats "$f"
done

if [ -n "${AG_TEST_FILES:-}" ]; then
    :   # only the files named there
elif command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null) \
        && [ -n "$gpus" ]; then
    echo "# GPU suite on: $(echo "$gpus" | head -n 1)"
else
    echo "skipped: no GPU (GPU suite tests/gpu not run for real)"
fi
for f in ${gpu_files[@]+"${gpu_files[@]}"}; do
    run_bats "$f"
done

if [ $((passed + failed + skipped)) -eq 0 ]; then
    echo "# run.sh: no test ran at all; counting that as a failure"
    failed=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
