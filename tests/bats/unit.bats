#!/usr/bin/env bats
# unit.bats -- runs each C unit-test binary built from tests/unit/ (make unit-tests).

setup() {
    cd "${AG_TEST_ROOT:-$BATS_TEST_DIRNAME/../..}"   # AG_TEST_ROOT: see tests/run.sh
}

@test "unit: config parsing (test_config)" {
    run build/tests/unit/test_config
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "unit: entry-point table and lookups (test_entry_points)" {
    run build/tests/unit/test_entry_points
    echo "$output"
    [ "$status" -eq 0 ]
}
