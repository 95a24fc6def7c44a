# unit.mk -- C unit tests of the shim's CUDA-free parts (included by the Makefile).
# Each tests/unit/test_*.c links the shim sources it tests; tests/bats/unit.bats
# runs every binary in build/tests/unit/.

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
UNIT_SHIM_OBJS := $(BUILD)/shim/config.o $(BUILD)/shim/log.o $(BUILD)/shim/entry_points.o

.PHONY: unit-tests
unit-tests: $(UNIT_BINS)
test: unit-tests

$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/check.h $(UNIT_SHIM_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim $(CFLAGS) -o $@ $< $(UNIT_SHIM_OBJS) -lpthread
