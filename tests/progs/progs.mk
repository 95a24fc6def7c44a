# progs.mk -- driver-level test programs that run against the CPU simulator and the
# real driver alike (plain C, dlopen("libcuda.so.1")); included by the Makefile.

PROGS_SRCS := $(sort $(wildcard tests/progs/*.c))
PROGS_BINS := $(PROGS_SRCS:tests/progs/%.c=$(BUILD)/progs/%)

.PHONY: progs
progs: $(PROGS_BINS)
test: progs

$(BUILD)/progs/%: tests/progs/%.c shim/entry_points.def
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O2 -o $@ $< -ldl
