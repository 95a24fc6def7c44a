#!/usr/bin/env bash
# tests/sanitize/sanitize.sh -- runs the unit and simulator test suites against a
# sanitizer build and fails on any sanitizer report.  Called by tests/sanitize/sanitize.mk
# (make asan / tsan / memcheck) once it built what runs:
#
#   sanitize.sh asan ROOT            ROOT/build is the ASan+UBSan build
#   sanitize.sh tsan ROOT            ROOT/build is the ThreadSanitizer build
#   sanitize.sh memcheck ROOT BUILD  ROOT/build is made here as a copy of the plain BUILD
#                                    in which every program is a script that runs the
#                                    real one under valgrind memcheck, and every other
#                                    file (libraries included) a link to the real one
#
# ROOT becomes a test root (AG_TEST_ROOT of tests/run.sh): everything else in it links to
# the repository's top folder (tests, shim, include, ...), so the suites run unchanged
# against ROOT/build.  The suites are the files in AG_TEST_FILES (set by sanitize.mk),
# run by tests/run.sh.
#
# Every sanitizer stops the program at its first report with exit status 66
# (halt_on_error, -fno-sanitize-recover, --error-exitcode), which fails the test that
# ran it.  ASan, LSan, TSan and valgrind also write their reports into ROOT/reports/
# (log_path, --log-file); after the suites every report found there is printed and
# counted as one failure, so those fail the run even where a test does not look at the
# exit status.  (UBSan next to ASan ignores log_path in gcc's runtimes: its reports go
# to the program's stderr, and every simulator test checks the exit status.)  The last
# line is `KIND: N passed, N failed, N skipped`; exit 1 if N failed > 0.
#
# Only our programs are sanitized: the *SAN_OPTIONS variables are read by instrumented
# programs alone (bats, bash and the tools the tests call are not instrumented), and
# valgrind wraps only the programs under ROOT/build.  ASan: the suites preload the shim
# alone (LD_PRELOAD=.../libautograph.so), so it comes before the ASan runtime the program
# links; hence verify_asan_link_order=0 (the shim exports nothing ASan intercepts).
set -u

kind=${1:-} root=${2:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
case "$kind" in asan|tsan|memcheck) ;; *) kind="" ;; esac
if [ -z "$kind" ] || [ -z "$root" ] || { [ "$kind" = memcheck ] && [ -z "${3:-}" ]; }; then
    echo "usage: $0 asan|tsan ROOT  |  $0 memcheck ROOT BUILD" >&2
    exit 2
fi
mkdir -p "$root" || exit 2
root=$(cd "$root" && pwd)
reports="$root/reports"
rm -rf "$reports"
mkdir -p "$reports" || exit 2
for f in "$top"/*; do
    [ "$f" = "$top/build" ] || ln -sfn "$f" "$root/${f##*/}" || exit 2
done

# memcheck_root BUILD: ROOT/build = BUILD with its programs wrapped (the sanitizer roots
# BUILD/asan, tsan and memcheck left out)
memcheck_root() {
    local src f rel
    src=$(cd "$1" && pwd) || return 1
    command -v valgrind >/dev/null 2>&1 ||
        { echo "memcheck: valgrind not found (Debian: apt-get install valgrind)" >&2; return 1; }
    rm -rf "$root/build"
    mkdir -p "$root/build"
    while IFS= read -r -d '' f; do
        rel=${f#"$src"/}
        mkdir -p "$root/build/$(dirname "$rel")"
        if [ ! -L "$f" ] && [ -x "$f" ] && [[ "$f" != *.so && "$f" != *.so.* ]]; then
            printf '#!/bin/sh\n# made by tests/sanitize/sanitize.sh: %s under valgrind memcheck\n%s\n' \
                "$rel" "exec valgrind -q --error-exitcode=66 --leak-check=full \
--show-leak-kinds=definite --errors-for-leak-kinds=definite \
--log-file='$reports/memcheck.%p' '$f' \"\$@\"" >"$root/build/$rel"
            chmod +x "$root/build/$rel"
        else
            ln -s "$f" "$root/build/$rel"
        fi
    done < <(find "$src" \( -path "$src/asan" -o -path "$src/tsan" -o -path "$src/memcheck" \) \
                 -prune -o \( -type f -o -type l \) -print0)
}

case "$kind" in
    asan)
        export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:verify_asan_link_order=0:exitcode=66:log_path=$reports/asan"
        export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=66" ;;
    tsan)
        export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=66:log_path=$reports/tsan" ;;
    memcheck)
        memcheck_root "$3" || exit 2 ;;
esac

start=$(date +%s)
out="$root/run.out"
AG_TEST_ROOT="$root" "$top/tests/run.sh" | tee "$out"
last=$(tail -n 1 "$out")
if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    passed=${BASH_REMATCH[1]} failed=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[3]}
else
    passed=0 failed=1 skipped=0
fi

# Reports: a file with something in it (valgrind -q leaves an empty one for a clean run).
found=0
shopt -s nullglob
for r in "$reports"/*; do
    [ -s "$r" ] || { rm -f "$r"; continue; }
    found=$((found + 1))
    echo "# $kind report $found: $r"
    head -n 200 "$r" | sed 's/^/#   /'
done
echo "# $kind: $found sanitizer report(s) in $reports; suites took $(( $(date +%s) - start )) s"
failed=$((failed + found))
echo "$kind: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
