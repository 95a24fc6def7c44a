# unit.mk -- C unit tests of the shim's CUDA-free parts (included by the Makefile).
# Each tests/unit/test_*.c links the shim sources it tests; tests/bats/unit.bats
# runs every binary in build/tests/unit/.

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
UNIT_SHIM_OBJS := $(BUILD)/shim/config.o $(BUILD)/shim/log.o $(BUILD)/shim/entry_points.o

# The engine (sequence detection, matching, policy) is compiled here a second time,
# without the CUDA include path: it must need no CUDA header.  Its files are those
# that include engine_internal.h, whatever their stage prefix (record_, match_, ...).
UNIT_ENGINE_SRCS := $(sort $(shell grep -l '"engine_internal.h"' shim/*.c)) shim/flush_points.c
UNIT_ENGINE_OBJS := $(UNIT_ENGINE_SRCS:shim/%.c=$(BUILD)/tests/unit/engine/%.o)
UNIT_ENGINE_CPPFLAGS := -Iinclude -I$(BUILD)/gen $(CARRY_INC) -D_GNU_SOURCE

$(BUILD)/tests/unit/engine/%.o: shim/%.c $(wildcard shim/*.h) shim/entry_points.def
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_ENGINE_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/tests/unit/test_engine: $(UNIT_ENGINE_OBJS)
$(BUILD)/tests/unit/test_engine: UNIT_EXTRA_OBJS = $(UNIT_ENGINE_OBJS)
$(BUILD)/tests/unit/test_speed: $(UNIT_ENGINE_OBJS)
$(BUILD)/tests/unit/test_speed: UNIT_EXTRA_OBJS = $(UNIT_ENGINE_OBJS)

# The public API (api.c: no CUDA header either) over the same engine objects.
UNIT_API_OBJS := $(UNIT_ENGINE_OBJS) $(BUILD)/tests/unit/engine/api.o
$(BUILD)/tests/unit/test_introspect: $(UNIT_API_OBJS)
$(BUILD)/tests/unit/test_introspect: UNIT_EXTRA_OBJS = $(UNIT_API_OBJS)

$(BUILD)/tests/unit/test_alloc: $(BUILD)/shim/alloc_table.o
$(BUILD)/tests/unit/test_alloc: UNIT_EXTRA_OBJS = $(BUILD)/shim/alloc_table.o

$(BUILD)/tests/unit/test_speed_job: $(BUILD)/shim/match_speed_job.o
$(BUILD)/tests/unit/test_speed_job: UNIT_EXTRA_OBJS = $(BUILD)/shim/match_speed_job.o

.PHONY: unit-tests
unit-tests: $(UNIT_BINS)
test: unit-tests

$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/check.h $(UNIT_SHIM_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim $(CFLAGS) -o $@ $< $(UNIT_EXTRA_OBJS) $(UNIT_SHIM_OBJS) -lpthread
