# bench_setup.bash -- the start every benchmark script shares.
#
# Sourced first thing (`. "$(dirname "$0")/bench_setup.bash"`): sets top (the
# repository, made the working folder), BUILD and MAKE (the caller's, or build and
# make) and cmdline (the script's command line, for its report).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
cmdline="$0${*:+ $*}"

# bench_setup CPU : CPU is the caller's pinning knob (empty: CPU 2 where there are 4 or
# more CPUs and taskset exists, else "none").  Sets cpu, pin (the taskset prefix, or
# empty), shim and bin (paths under $top/$BUILD), gpu (its name and driver) and rev
# (git describe); without a usable GPU prints "skipped: no GPU" and exits 0; otherwise
# builds the library and the bench programs.
bench_setup() {
    cpu=$1
    if [ -z "$cpu" ]; then
        cpu=none
        if command -v taskset >/dev/null 2>&1 && [ "$(nproc 2>/dev/null || echo 1)" -ge 4 ]; then
            cpu=2
        fi
    fi
    pin=()
    [ "$cpu" != none ] && pin=(taskset -c "$cpu")
    shim=$top/$BUILD/libautograph.so
    bin=$top/$BUILD/bench

    if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
        echo "skipped: no GPU"
        exit 0
    fi
    $MAKE -s all bench-progs >&2
    local probe
    if ! probe=$("$bin/probe" 2>&1); then
        echo "skipped: no GPU ($probe)"
        exit 0
    fi
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
    rev=$(git describe --always --dirty 2>/dev/null || true)
}
