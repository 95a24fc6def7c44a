# shellcheck shell=bash
# stats.bash -- the figures that the side-by-side benches make of their timing runs:
# medians, and the ratio of each pair of processes run in turn (no shim, then shim).
# Sourced by tests/bench/compare_lib.bash (loose_bench.sh, dyn_bench.sh) and
# scripts/multi_gpu_check.sh.  One machine's processes can differ more than the sides
# do; each pair's own ratio shows it.

# median [FORMAT]: of the numbers on stdin (one a line), printf FORMAT (default %.2f);
# empty when none
median() {
    sort -g | awk -v fmt="${1:-%.2f}" '{ v[NR] = $1 } END {
        if (NR == 0) exit
        if (NR % 2) printf fmt "\n", v[(NR + 1) / 2]
        else printf fmt "\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# pair_ratio OFF ON: OFF / ON on a line, or nothing when either is missing ("?" or
# absent) or ON is 0
pair_ratio() {
    awk -v a="${1:-?}" -v b="${2:-?}" 'BEGIN {
        if (a != "?" && b != "?" && b + 0 > 0) printf "%.6f\n", a / b }'
}

# pairs_col FILE: the pairs' ratios, one a line in FILE, as "MEDIAN (R1, R2, ...)", or
# "?" when none
pairs_col() {
    local m
    m=$(median %.3f <"$1")
    [ -n "$m" ] || { echo "?"; return; }
    printf '%s (%s)\n' "$m" "$(awk '{ printf "%s%.3f", (NR > 1 ? ", " : ""), $1 }' "$1")"
}
