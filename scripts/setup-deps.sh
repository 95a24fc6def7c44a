#!/usr/bin/env bash
# setup-deps.sh -- the one setup step: make sure the build and test dependencies exist.
#
# Needed: uthash.h (Debian uthash-dev) and bats (Debian bats), plus python3 and a C
# compiler.  A filled .carry/ folder (make carry) satisfies uthash and bats on machines
# without a package registry (the GPU machine).  Missing packages are installed with
# apt-get when we are root; otherwise we say exactly what to run and fail.
# Optional: zlib.h (Debian zlib1g-dev) for the analyzer (build/autograph-analyze); it is
# installed the same way when it can be, and without it the analyzer build is skipped
# with a message (the GPU machine needs no analyzer).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
carry="$top/.carry"

missing=()
[ -f /usr/include/uthash.h ] || [ -f "$carry/include/uthash.h" ] || missing+=(uthash-dev)
command -v bats >/dev/null 2>&1 || [ -x "$carry/bats/bin/bats" ] || missing+=(bats)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
optional=()
[ -f /usr/include/zlib.h ] || optional+=(zlib1g-dev)

# install_optional: try the optional packages; their absence only skips the analyzer
install_optional() {
    [ ${#optional[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${optional[@]}" >/dev/null 2>&1; then
        echo "setup-deps: installed ${optional[*]}" >&2
    else
        echo "setup-deps: ${optional[*]} not installed (apt-get install ${optional[*]}):" \
             "the analyzer build is skipped" >&2
    fi
}

if [ ${#missing[@]} -eq 0 ]; then
    install_optional
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "setup-deps: missing Debian packages: ${missing[*]}" >&2
    echo "setup-deps: run as root, or: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-deps: missing ${missing[*]} and no apt-get here;" \
         "on a machine without a registry run 'make carry' where one exists and carry .carry/" >&2
    exit 1
fi
missing+=(${optional[@]+"${optional[@]}"})
echo "setup-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    echo "setup-deps: apt-get could not install ${missing[*]} (no package registry here?);" \
         "run 'make carry' on a machine that has them and bring .carry/ along" >&2
    exit 1
fi
