#!/usr/bin/env bash
# make-carry.sh -- fill the git-ignored carry folder for the GPU machine.
#
# The GPU machine has nvcc, CUPTI and python3 but no package registry, no uthash.h and
# no bats.  This copies them from this machine (installing them first if needed) into
# DIR (default .carry): DIR/include/uthash*.h and a relocatable bats-core in DIR/bats.
# The Makefile adds DIR/include to the include path when present, and tests/run.sh uses
# DIR/bats/bin/bats when bats is not on PATH.  Name DIR in the device tool's carry list.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-.carry}
case "$dir" in /*) ;; *) dir="$top/$dir" ;; esac

"$top/scripts/setup-deps.sh"
mkdir -p "$dir/include" "$dir/bats/bin" "$dir/bats/lib" "$dir/bats/libexec"
# only the uthash-dev headers (a glob would also catch glibc's utmp.h, utime.h)
for h in $(dpkg -L uthash-dev | grep "^/usr/include/.*\.h$"); do cp "$h" "$dir/include/"; done
cp -r /usr/lib/bats-core "$dir/bats/lib/"
cp -r /usr/libexec/bats-core "$dir/bats/libexec/"
# Debian's bats finds its helpers relative to its own location: keep that layout.
cp /usr/bin/bats "$dir/bats/bin/bats"
echo "make-carry: filled $dir ($(du -sh "$dir" | cut -f1))"
