# tests/sanitize/sanitize.mk -- the unit and simulator suites under sanitizers
# (included by the top Makefile; uses its BUILD, CC and MAKE).
#
#   make asan      ASan + UBSan build of the shim, the simulator, its programs and the
#                  unit tests into $(BUILD)/asan/build, then the suites below against it
#   make tsan      the same with ThreadSanitizer ($(BUILD)/tsan/build)
#   make memcheck  the suites with every program of the plain build under valgrind
#                  memcheck (leak check: definite leaks are errors); needs valgrind
#
# Any sanitizer report fails the target: the programs stop at the first one and
# tests/sanitize/sanitize.sh counts every report it finds as a failure.  The builds need
# gcc (CC=cc on Debian): its -fsanitize links the runtimes dynamically, as a preloaded
# shared library needs.
#
# The suites: every tests/bats/*.bats whose setup honours AG_TEST_ROOT (tests/run.sh),
# itself or through a tests/bats/*.bash helper it names, i.e. runs what it tests from the
# build under test; the unit executables run too.  What they need built is SAN_TARGETS:
# a sub-makefile (included before this one) whose suite needs more adds its target
# there (SAN_TARGETS += ...).

SAN_HELPERS  = $(notdir $(shell grep -l AG_TEST_ROOT tests/bats/*.bash 2>/dev/null))
SAN_SUITES   = $(shell grep -l -F $(foreach w,AG_TEST_ROOT $(SAN_HELPERS),-e $(w)) tests/bats/*.bats)
SAN_TARGETS += all sim unit-tests progs
ASAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TSAN_FLAGS  := -fsanitize=thread -fno-omit-frame-pointer
SAN_RUN      = AG_TEST_FILES="$(SAN_SUITES)" tests/sanitize/sanitize.sh

# san_rules KIND FLAGS-VARIABLE: the instrumented build KIND-build, and KIND, which runs
# the suites against it
define san_rules
.PHONY: $(1) $(1)-build
$(1)-build:
	+@$$(MAKE) --no-print-directory BUILD=$$(BUILD)/$(1)/build CC="$$(CC) $$($(2))" SAN_KIND=$(1) \
	    $$(SAN_TARGETS)
$(1): $(1)-build
	@$$(SAN_RUN) $(1) $$(BUILD)/$(1)
endef
$(eval $(call san_rules,asan,ASAN_FLAGS))
$(eval $(call san_rules,tsan,TSAN_FLAGS))

# In the TSan build (the nested make above), the dlsym door is not instrumented: the
# TSan runtime looks its interceptors up with dlsym(RTLD_NEXT) while it starts, which
# finds the preloaded shim's dlsym first, and instrumented code cannot run before TSan
# has started.
ifeq ($(SAN_KIND),tsan)
$(BUILD)/shim/intercept_dlsym.o: CFLAGS += -fno-sanitize=thread
endif

.PHONY: memcheck
memcheck: $(SAN_TARGETS)
	@$(SAN_RUN) memcheck $(BUILD)/memcheck $(BUILD)
