# Makefile -- libautograph: build, test, bench, install.
#
#   make              build build/libautograph.so and build/autograph, the command
#                     (installs missing Debian packages first)
#   make test         the one test command: unit, simulator and bats suites; GPU suite on a GPU
#   make bench        benchmarks on a GPU machine (tables on stdout); make bench-cold
#                     needs none: the shim's cache misses per held launch (simulator)
#   make asan / tsan / memcheck   the unit and simulator suites under sanitizers
#   make carry        fill .carry/ with what the GPU machine lacks (uthash.h, bats)
#   make fuzz / bench-analyzer   the analyzer's fuzz targets and benchmark (analyzer/analyzer.mk)
#   make man          build/man/: autograph.1 and libautograph.7 generated (scripts/gen_man.py)
#                     from the command's help text and docs/switches.md; autograph-analyze.1
#   make install PREFIX=/usr/local   (man pages under PREFIX/share/man/man1 and man7)
#
# Sub-makefiles under tests/ add their own targets; they see the variables below.

PREFIX    ?= /usr/local
BUILD     := build
CARRY     := .carry
NVCC      ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CC        ?= cc
PYTHON    ?= python3

CARRY_INC := $(if $(wildcard $(CARRY)/include/uthash.h),-I$(CARRY)/include)
# cupti.h (AUTOGRAPH_TRACE): in include/ since CUDA 12, in extras/CUPTI/include before
CUPTI_INC := $(if $(wildcard $(CUDA_HOME)/extras/CUPTI/include/cupti.h),-I$(CUDA_HOME)/extras/CUPTI/include)
CPPFLAGS  += -Iinclude -I$(BUILD)/gen -I$(CUDA_HOME)/include $(CUPTI_INC) $(CARRY_INC) -D_GNU_SOURCE
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -Wall -Wextra -fPIC
LDLIBS_SHIM := -ldl -lpthread

SHIM_LIB  := $(BUILD)/libautograph.so
SHIM_SRCS := $(sort $(wildcard shim/*.c))
SHIM_ASMS := $(sort $(wildcard shim/*.S))
SHIM_OBJS := $(SHIM_SRCS:%.c=$(BUILD)/%.o) $(SHIM_ASMS:%.S=$(BUILD)/%.o)
GEN_SIGS  := $(BUILD)/gen/entry_signatures.h
# the autograph command (run, compare, report): C11, scripts/autograph/
CLI       := $(BUILD)/autograph
CLI_SRCS  := $(sort $(wildcard scripts/autograph/*.c))
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
DEPS_OK   := $(BUILD)/.deps-ok

# man pages: generated where one source exists (see scripts/gen_man.py), else copied
MAN_DIR   := $(BUILD)/man
MAN_PAGES := $(MAN_DIR)/autograph.1 $(MAN_DIR)/autograph-analyze.1 $(MAN_DIR)/libautograph.7
MANDIR    ?= $(PREFIX)/share/man

.PHONY: all deps test bench carry install uninstall clean man
# (sanitizer builds, SAN_KIND set, skip the pages: the command runs uninstrumented there)
all: $(SHIM_LIB) $(CLI) $(if $(SAN_KIND),,man)

# One setup step: installs missing Debian packages (uthash-dev, bats) or says how.
deps: $(DEPS_OK)
$(DEPS_OK): scripts/setup-deps.sh
	@mkdir -p $(BUILD)
	@scripts/setup-deps.sh
	@touch $@

$(GEN_SIGS): shim/entry_points.def scripts/gen_signatures.py | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/gen_signatures.py $(CC) -E -I$(CUDA_HOME)/include -- $< $@

$(BUILD)/shim/%.o: shim/%.c $(GEN_SIGS) $(wildcard shim/*.h) $(wildcard shim/*.def)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/shim/%.o: shim/%.S
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -fPIC -c $< -o $@

$(SHIM_LIB): $(SHIM_OBJS)
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libautograph.so -o $@ $^ $(LDLIBS_SHIM)

# The command includes the shim's list of switch names (shim/switches.def), nothing else.
$(BUILD)/scripts/autograph/%.o: scripts/autograph/%.c $(wildcard scripts/autograph/*.h) \
                                shim/switches.def
	@mkdir -p $(dir $@)
	$(CC) -Ishim -D_GNU_SOURCE $(CFLAGS) -c $< -o $@

$(CLI): $(CLI_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ -lm

man: $(MAN_PAGES)

$(MAN_DIR)/autograph.1: $(CLI) scripts/gen_man.py
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/gen_man.py cli $(CLI) $@

$(MAN_DIR)/libautograph.7: man/libautograph.7.in docs/switches.md scripts/gen_man.py
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/gen_man.py switches docs/switches.md $< $@

$(MAN_DIR)/autograph-analyze.1: man/autograph-analyze.1
	@mkdir -p $(dir $@)
	cp $< $@

# Test orchestration: tests/run.sh runs every suite and prints one closing line.
test: all
	@tests/run.sh

carry:
	@scripts/make-carry.sh $(CARRY)

# PREFIX/bin/autograph finds PREFIX/lib/libautograph.so and PREFIX/bin/autograph-analyze.
install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(SHIM_LIB) $(DESTDIR)$(PREFIX)/lib/libautograph.so
	install -m 0644 include/autograph.h $(DESTDIR)$(PREFIX)/include/autograph.h
	install -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/bin/autograph
	if [ -x $(BUILD)/autograph-analyze ]; then \
	    install -m 0755 $(BUILD)/autograph-analyze $(DESTDIR)$(PREFIX)/bin/autograph-analyze; fi
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	install -m 0644 $(MAN_DIR)/autograph.1 $(MAN_DIR)/autograph-analyze.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(MAN_DIR)/libautograph.7 $(DESTDIR)$(MANDIR)/man7/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libautograph.so $(DESTDIR)$(PREFIX)/include/autograph.h \
	      $(DESTDIR)$(PREFIX)/bin/autograph $(DESTDIR)$(PREFIX)/bin/autograph-analyze \
	      $(DESTDIR)$(MANDIR)/man1/autograph.1 $(DESTDIR)$(MANDIR)/man1/autograph-analyze.1 \
	      $(DESTDIR)$(MANDIR)/man7/libautograph.7

clean:
	rm -rf $(BUILD)

# Suites and benchmarks bring their own rules.
-include tests/unit/unit.mk
-include tests/progs/progs.mk
-include tests/sim/sim.mk
-include tests/gpu/gpu.mk
-include tests/bench/bench.mk
-include tests/plugin/plugin.mk
-include tests/sanitize/sanitize.mk
-include analyzer/analyzer.mk
