# sim_run.bash -- the setup and one run of a simulator test program, for the simulator
# suites (engine_sim.bats, introspect_sim.bats).
#
# sim_setup PROGRAM PREFIX : a suite's setup(): cd to the root (AG_TEST_ROOT: see
# tests/run.sh), skip unless the simulator, build/sim/progs/PROGRAM and the shim are
# built, unset the caller's AUTOGRAPH*, SIM_* and PREFIX* variables (the runs set exactly
# what they need), set tmp (the test's folder) and shim (the library's path).  The speed
# guard and chunk plan tuning are off (AUTOGRAPH_GUARD_MS=0, AUTOGRAPH_CHUNK_TUNE=0):
# their choices follow the machine's clock, and the simulator's graphs are neither
# faster nor slower than its eager work by design; their own tests set them.
sim_setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}" || return 1
    [ -f build/sim/libcuda.so.1 ] || skip "simulator not built (make sim)"
    [ -x "build/sim/progs/$1" ] || skip "$1 not built (make sim)"
    [ -f build/libautograph.so ] || skip "shim not built"
    local v
    for v in $(compgen -e); do
        case "$v" in AUTOGRAPH*|SIM_*|"$2"*) unset "$v" ;; esac
    done
    export AUTOGRAPH_GUARD_MS=0 AUTOGRAPH_CHUNK_TUNE=0
    tmp="$BATS_TEST_TMPDIR"
    shim="$PWD/build/libautograph.so"
}
#
# sim_run TAG PROGRAM [VAR=VALUE...] -- [ARG...] : build/sim/progs/PROGRAM ARG... on the
# simulator with those variables, its SIM_LOG without event lines (SIM_LOG_SKIP=event:
# the shim adds its own join events) and with stream labels hidden (SIM_LOG_STREAMS=hide:
# captured nodes carry the label of the shim's capture stream).  Leaves
# $tmp/TAG.{log,out,err}, the exit status in rc_TAG and the command in cmd_TAG.
# (No subshell: the suites make hundreds of runs.)
sim_run() {
    local tag=$1 prog=$2 rc=0 vars=()
    shift 2
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    rm -f "$tmp/$tag".*
    local cmd=(LD_LIBRARY_PATH=build/sim SIM_LOG="$tmp/$tag.log" SIM_LOG_SKIP=event
               SIM_LOG_STREAMS=hide "${vars[@]}" "build/sim/progs/$prog" "$@")
    printf -v "cmd_$tag" '%s' "${cmd[*]}"
    env "${cmd[@]}" >"$tmp/$tag.out" 2>"$tmp/$tag.err" || rc=$?
    printf -v "rc_$tag" '%s' "$rc"
}
