# analyzer.mk -- autograph-analyze, the offline dependency analyzer (included by the
# Makefile; see README, "Dependency analyzer").
#
#   make                      also builds build/autograph-analyze (needs zlib.h: Debian
#                             zlib1g-dev, and libstdc++ for its demangler, which g++
#                             brings; without them the analyzer is skipped with a message)
#   make test                 tests/bats/analyzer.bats runs with the other bats files
#   make fuzz FUZZ_SECONDS=N  each libFuzzer target (clang -fsanitize=fuzzer) N seconds,
#                             from the seed corpus in tests/analyzer/corpus/
#   make bench-analyzer       throughput and peak RSS on a generated 200 MB Kineto trace
#                             (BENCH_MB=N for another size)

ANALYZER       := $(BUILD)/autograph-analyze
ANALYZER_SRCS  := $(sort $(wildcard analyzer/*.c))
ANALYZER_OBJS  := $(ANALYZER_SRCS:%.c=$(BUILD)/%.o)
ANALYZER_FLAGS := -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE
# checked when the analyzer is built (after scripts/setup-deps.sh may have installed it)
ANALYZER_ZLIB  := printf '\043include <zlib.h>\n' | $(CC) -E -x c - >/dev/null 2>&1
# libstdc++'s __cxa_demangle (analyzer/demangle.c), linked from C
ANALYZER_LIBS  := -lz -lm -lstdc++
ANALYZER_CXXABI := { printf 'int main(void) { return 0; }\n' | \
                   $(CC) -x c - -lstdc++ -o $(BUILD)/.stdcxx-check >/dev/null 2>&1 && \
                   rm -f $(BUILD)/.stdcxx-check; }
FUZZ_CC        ?= clang
FUZZ_SECONDS   ?= 60
FUZZ_TARGETS   := $(patsubst analyzer/fuzz/%.c,%,$(sort $(wildcard analyzer/fuzz/fuzz_*.c)))
BENCH_MB       ?= 200

.PHONY: analyzer fuzz fuzz-build bench-analyzer
all: analyzer

SUBMAKE        := $(MAKE) --no-print-directory

analyzer: | $(DEPS_OK)
	+@if ! $(ANALYZER_ZLIB); then \
	    echo "analyzer: skipped (zlib.h not found: install Debian zlib1g-dev, which" \
	         "scripts/setup-deps.sh does where it can)"; \
	elif ! $(ANALYZER_CXXABI); then \
	    echo "analyzer: skipped (libstdc++ not found: install Debian g++)"; \
	else $(SUBMAKE) -q $(ANALYZER) || $(SUBMAKE) $(ANALYZER); fi

$(BUILD)/analyzer/%.o: analyzer/%.c $(wildcard analyzer/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ANALYZER_FLAGS) -c $< -o $@

$(ANALYZER): $(ANALYZER_OBJS)
	$(CC) $(ANALYZER_FLAGS) -o $@ $^ $(ANALYZER_LIBS)

# Fuzz targets: the analyzer's sources again, with libFuzzer, ASan and UBSan.
FUZZ_FLAGS := -std=c11 -g -O1 -D_GNU_SOURCE -Ianalyzer -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined
fuzz-build: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%)

FUZZ_SRCS  := $(filter-out analyzer/main.c,$(ANALYZER_SRCS))

$(BUILD)/fuzz/%: analyzer/fuzz/%.c analyzer/fuzz/fuzz_common.h $(FUZZ_SRCS) $(wildcard analyzer/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_SRCS) $(ANALYZER_LIBS)

fuzz: fuzz-build
	@tests/analyzer/fuzz.sh $(BUILD)/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

bench-analyzer: analyzer
	@tests/analyzer/bench.sh $(ANALYZER) $(BUILD)/bench-analyzer $(BENCH_MB)
