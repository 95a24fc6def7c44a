#!/usr/bin/env bats
# docs.bats -- the documentation and the man pages stay in step with the programs.
#
#   - every switch of shim/switches.def has a row in docs/switches.md and an entry in
#     libautograph(7); every row there is a switch of switches.def
#   - every option `build/autograph help CMD` prints is in autograph(1), and every option
#     `build/autograph-analyze --help` prints is in autograph-analyze(1) (options may be
#     added to the programs: the check is that each one is documented, not the reverse)
#   - each page renders without warnings (man -l; groff -man or mandoc where man is
#     missing; skipped, visibly, when none of them is installed)
#   - make install PREFIX=... puts the pages under PREFIX/share/man/man1 and man7;
#     make uninstall removes them
#   - README.md: at most 300 lines, `make` and `make test` in its first 40, its links
#     into docs/ resolve
# Needs: make, python3 (scripts/gen_man.py); man-db or groff or mandoc for rendering.

setup_file() {
    export TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
    make -C "$TOP" --no-print-directory man >/dev/null
}

setup() {
    cd "$TOP"
}

# render PAGE: the page as plain text on stdout (no overstrike, ASCII hyphens)
render() {
    if command -v groff >/dev/null 2>&1; then
        groff -man -Tascii -P-c -P-b -P-u "$1" 2>/dev/null
    elif command -v mandoc >/dev/null 2>&1; then
        mandoc -Tascii "$1" | col -b
    else
        MANWIDTH=200 MAN_KEEP_FORMATTING= man -l "$1" 2>/dev/null | col -b
    fi
}

have_renderer() {
    command -v groff >/dev/null 2>&1 || command -v mandoc >/dev/null 2>&1 ||
        command -v man >/dev/null 2>&1
}

switches() {
    sed -n 's/^AG_SWITCH(\(.*\))$/\1/p' shim/switches.def
}

# options FILE: the option words (-x, --long) of the OPTIONS lines of a help text
options() {
    grep -E '^  -' "$1" | sed -E 's/^  //; s/  .*//' | tr ', ' '\n\n' | grep -E '^-' | sed 's/=.*//'
}

@test "docs: every switch of shim/switches.def is in docs/switches.md and libautograph(7), and no other" {
    have_renderer || skip "no man, groff or mandoc: libautograph(7) not rendered"
    render build/man/libautograph.7 >"$BATS_TEST_TMPDIR/page"
    local n=0 name
    for name in $(switches); do
        n=$((n + 1))
        grep -q "^| \`$name\` |" docs/switches.md || { echo "docs/switches.md lacks $name"; return 1; }
        grep -qw -- "$name" "$BATS_TEST_TMPDIR/page" || { echo "libautograph.7 lacks $name"; return 1; }
    done
    [ "$n" -ge 30 ]
    for name in $(sed -n 's/^| `\(AUTOGRAPH[A-Z_]*\)` |.*/\1/p' docs/switches.md); do
        switches | grep -qx "$name" || { echo "docs/switches.md documents unknown $name"; return 1; }
    done
}

@test "docs: every option of autograph help CMD is in autograph(1)" {
    have_renderer || skip "no man, groff or mandoc: autograph(1) not rendered"
    [ -x build/autograph ]
    render build/man/autograph.1 >"$BATS_TEST_TMPDIR/page"
    local cmd opt n=0
    for cmd in run compare report help; do
        build/autograph help "$cmd" >"$BATS_TEST_TMPDIR/help.$cmd"
        grep -qF -- "autograph $cmd" "$BATS_TEST_TMPDIR/page" || { echo "no command $cmd"; return 1; }
        for opt in $(options "$BATS_TEST_TMPDIR/help.$cmd"); do
            n=$((n + 1))
            grep -qF -- "$opt" "$BATS_TEST_TMPDIR/page" || { echo "autograph.1 lacks $cmd $opt"; return 1; }
        done
    done
    echo "options checked: $n"
    [ "$n" -ge 15 ]
}

@test "docs: autograph(1) is the help text of the build (make man regenerates it)" {
    local tmp="$BATS_TEST_TMPDIR/autograph.1"
    python3 scripts/gen_man.py cli build/autograph "$tmp"
    diff -u build/man/autograph.1 "$tmp"
    python3 scripts/gen_man.py switches docs/switches.md man/libautograph.7.in "$tmp.7"
    diff -u build/man/libautograph.7 "$tmp.7"
}

@test "docs: every option of autograph-analyze --help is in autograph-analyze(1)" {
    [ -x build/autograph-analyze ] || skip "analyzer not built (zlib.h missing)"
    have_renderer || skip "no man, groff or mandoc: autograph-analyze(1) not rendered"
    render build/man/autograph-analyze.1 >"$BATS_TEST_TMPDIR/page"
    build/autograph-analyze --help >"$BATS_TEST_TMPDIR/help" 2>&1 || true
    local opt n=0
    for opt in $(options "$BATS_TEST_TMPDIR/help"); do
        n=$((n + 1))
        grep -qF -- "$opt" "$BATS_TEST_TMPDIR/page" || { echo "autograph-analyze.1 lacks $opt"; return 1; }
    done
    echo "options checked: $n"
    [ "$n" -ge 10 ]
    # the exit statuses of the output contract
    grep -qE '^ +0 +Decided' "$BATS_TEST_TMPDIR/page"
    grep -qE '^ +3 +Undecided' "$BATS_TEST_TMPDIR/page"
}

@test "docs: each man page renders without warnings" {
    local page out
    for page in build/man/autograph.1 build/man/autograph-analyze.1 build/man/libautograph.7; do
        if command -v man >/dev/null 2>&1; then
            out=$(MANWIDTH=80 man -l "$page" 2>&1 >/dev/null)
            [ -z "$out" ] || { echo "$page: $out"; return 1; }
            MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q '^NAME'
        elif command -v groff >/dev/null 2>&1; then
            out=$(groff -ww -man -Tutf8 -z "$page" 2>&1)
            [ -z "$out" ] || { echo "$page: $out"; return 1; }
        elif command -v mandoc >/dev/null 2>&1; then
            mandoc -T lint -W warning "$page"
        else
            skip "no man, groff or mandoc (Debian man-db, groff-base or mandoc)"
        fi
    done
    if command -v groff >/dev/null 2>&1; then
        for page in build/man/autograph.1 build/man/autograph-analyze.1 build/man/libautograph.7; do
            out=$(groff -ww -man -Tutf8 -z "$page" 2>&1)
            [ -z "$out" ] || { echo "groff: $page: $out"; return 1; }
        done
    fi
}

@test "docs: make install puts the man pages under PREFIX/share/man; uninstall removes them" {
    local p="$BATS_TEST_TMPDIR/prefix"
    run make -C "$TOP" --no-print-directory install PREFIX="$p"
    echo "$output"
    [ "$status" -eq 0 ]
    cmp build/man/autograph.1 "$p/share/man/man1/autograph.1"
    cmp build/man/autograph-analyze.1 "$p/share/man/man1/autograph-analyze.1"
    cmp build/man/libautograph.7 "$p/share/man/man7/libautograph.7"
    if command -v man >/dev/null 2>&1; then
        MANPATH="$p/share/man" MANWIDTH=80 man 7 libautograph 2>/dev/null | grep -q AUTOGRAPH_WARMUP
    fi
    run make -C "$TOP" --no-print-directory uninstall PREFIX="$p"
    [ "$status" -eq 0 ]
    [ ! -e "$p/share/man/man1/autograph.1" ]
    [ ! -e "$p/share/man/man1/autograph-analyze.1" ]
    [ ! -e "$p/share/man/man7/libautograph.7" ]
}

@test "docs: README.md is a front page: <= 300 lines, make and make test in the first 40" {
    local lines
    lines=$(grep -c '' README.md)
    echo "README.md: $lines lines"
    [ "$lines" -le 300 ]
    head -n 40 README.md | grep -qE '^make( |$)'
    head -n 40 README.md | grep -qE '^make test( |$)'
}

@test "docs: relative links of README.md and docs/*.md resolve" {
    local f link target bad=0
    for f in README.md docs/*.md; do
        while IFS= read -r link; do
            target=${link%%#*}
            [ -n "$target" ] || continue
            case "$target" in http*|mailto:*) continue ;; esac
            [ -e "$(dirname "$f")/$target" ] || { echo "$f: broken link $link"; bad=1; }
        done < <(grep -oE '\]\([^)]+\)' "$f" | sed -E 's/^\]\(//; s/\)$//')
    done
    [ "$bad" -eq 0 ]
}

@test "docs: every field the exit summary prints is in docs/summary.md" {
    local f name n=0
    for f in shim/*.c; do
        # printed with a format ("%sname ...")
        for name in $(grep -ohE '"%s[a-z_]+ ' "$f" | sed -E 's/^"%s//; s/ $//'); do
            n=$((n + 1))
            grep -qE "(^|[^a-z_])$name([^a-z_]|\$)" docs/summary.md || { echo "docs/summary.md lacks $name ($f)"; return 1; }
        done
    done
    # ... or from summary_lines.def: AG_COUNT(name, field) and the like
    for name in $(grep -oE '^AG_[A-Z]+\([a-z_]+' shim/summary_lines.def | sed -E 's/^AG_[A-Z]+\(//'); do
        n=$((n + 1))
        grep -qE "(^|[^a-z_])$name([^a-z_]|\$)" docs/summary.md ||
            { echo "docs/summary.md lacks $name (shim/summary_lines.def)"; return 1; }
    done
    echo "fields checked: $n"
    [ "$n" -ge 40 ]
}

@test "docs: the README's results table is the newest rows of docs/benchmarks.md" {
    local row n=0
    while IFS= read -r row; do
        n=$((n + 1))
        grep -qxF -- "$row" docs/benchmarks.md || { echo "not in docs/benchmarks.md: $row"; return 1; }
    done < <(sed -n '/^## Results/,/^## /p' README.md | grep '^| ' | grep -v '^|---')
    echo "rows checked: $n"
    [ "$n" -ge 4 ]
}

@test "docs: README.md is written for users: no commit hashes, no session logs" {
    if grep -nE '\b[0-9a-f]{7,40}\b' README.md | grep -vE '0x[0-9a-f]+'; then
        echo "README.md names what looks like a commit hash"; return 1
    fi
    if grep -niE 'this session|throw-away' README.md; then return 1; fi
}
