#!/usr/bin/env bash
# setup-deps.sh -- the one setup step: make sure the build and test dependencies exist.
#
# Needed: uthash.h (Debian uthash-dev) and bats (Debian bats), plus python3 and a C
# compiler.  A filled .carry/ folder (make carry) satisfies uthash and bats on machines
# without a package registry (the GPU machine).  Missing packages are installed with
# apt-get when we are root; otherwise we say exactly what to run and fail.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
carry="$top/.carry"

missing=()
[ -f /usr/include/uthash.h ] || [ -f "$carry/include/uthash.h" ] || missing+=(uthash-dev)
command -v bats >/dev/null 2>&1 || [ -x "$carry/bats/bin/bats" ] || missing+=(bats)
command -v python3 >/dev/null 2>&1 || missing+=(python3)

[ ${#missing[@]} -eq 0 ] && exit 0

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
echo "setup-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    echo "setup-deps: apt-get could not install ${missing[*]} (no package registry here?);" \
         "run 'make carry' on a machine that has them and bring .carry/ along" >&2
    exit 1
fi
