# tests/sim/sim.mk -- the CPU driver simulator (a stand-in libcuda.so.1 for CI
# machines without a GPU) and the test programs that run on it.
#
#   make sim    build/sim/libcuda.so.1 (+ libcuda.so link), build/sim/libcupti.so.13 (a
#               stand-in for CUPTI's graph id functions and activity API) and
#               build/sim/progs/*
#
# Included by the top Makefile; uses its BUILD, CC, CFLAGS, CPPFLAGS, PYTHON,
# CUDA_HOME and DEPS_OK.  tests/bats/sim.bats runs the programs.

SIM_DIR      := $(BUILD)/sim
SIM_GEN      := $(SIM_DIR)/gen
SIM_LIBCUDA  := $(SIM_DIR)/libcuda.so.1
SIM_CUPTI    := $(SIM_DIR)/libcupti.so.13
SIM_SRCS     := $(sort $(wildcard tests/sim/sim_*.c))
SIM_OBJS     := $(SIM_SRCS:tests/sim/%.c=$(SIM_DIR)/obj/%.o)
SIM_HDRS     := $(wildcard tests/sim/*.h) tests/sim/sim_exports.def
SIM_STAMP    := $(SIM_GEN)/.stamp
SIM_CPPFLAGS := $(CPPFLAGS) -I$(SIM_GEN) -Itests/sim
SIM_PROGS    := $(patsubst tests/sim/progs/%.c,$(SIM_DIR)/progs/%,$(sort $(wildcard tests/sim/progs/*.c)))

# Programs that must not be linked with libcuda (they dlopen it themselves).
SIM_DLOPEN_PROGS := door_dlsym door_procaddr

# The simulator follows the cuda.h it is built against and needs CUDA >= 13.0
# headers; with older ones it is not built and tests/bats/sim.bats skips.
SIM_CUDA_VERSION := $(shell sed -n 's/^\#define CUDA_VERSION \([0-9]*\).*/\1/p' \
                      $(CUDA_HOME)/include/cuda.h 2>/dev/null)

.PHONY: sim
ifeq ($(shell [ "$(SIM_CUDA_VERSION)" -ge 13000 ] 2>/dev/null && echo yes),yes)
sim: $(SIM_LIBCUDA) $(SIM_DIR)/libcuda.so $(SIM_CUPTI) $(SIM_PROGS)
else
sim:
	@echo "sim: not built: needs CUDA >= 13.0 headers in $(CUDA_HOME)/include (found '$(SIM_CUDA_VERSION)')"
endif
test: sim

# Generated tables: prototypes of every export, stubs, resolver table, errors.
$(SIM_STAMP): tests/sim/gen_sim.py tests/sim/sim_exports.def scripts/gen_signatures.py | $(DEPS_OK)
	@mkdir -p $(SIM_GEN)
	$(PYTHON) tests/sim/gen_sim.py $(CC) -E -I$(CUDA_HOME)/include -- tests/sim/sim_exports.def $(SIM_GEN)
	@touch $@

$(SIM_DIR)/obj/%.o: tests/sim/%.c $(SIM_HDRS) $(SIM_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CPPFLAGS) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(SIM_LIBCUDA): $(SIM_OBJS)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions -Wl,--no-undefined \
	    -o $@ $^ -lpthread

$(SIM_DIR)/libcuda.so: | $(SIM_LIBCUDA)
	ln -sf libcuda.so.1 $@

# The CUPTI stand-in: the id functions the shim's graph data asks for (sim_cupti.c) and
# the activity API its AUTOGRAPH_TRACE uses (sim_activity.c; needs cupti.h).
SIM_CUPTI_SRCS := tests/sim/cupti_stand_in.c tests/sim/cupti_activity_stand_in.c
$(SIM_CUPTI): $(SIM_CUPTI_SRCS) tests/sim/sim_activity.h $(SIM_LIBCUDA) | $(SIM_DIR)/libcuda.so
	$(CC) $(SIM_CPPFLAGS) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libcupti.so.13 \
	    -Wl,--no-undefined -o $@ $(SIM_CUPTI_SRCS) -L$(SIM_DIR) -lcuda -lpthread

SIM_PROG_LIBS = -L$(SIM_DIR) -lcuda -ldl -lpthread
$(addprefix $(SIM_DIR)/progs/,$(SIM_DLOPEN_PROGS)): SIM_PROG_LIBS = -ldl -lpthread

# The stand-in libcudart.so.13 (its launch calls only), in a folder of its own so that
# nothing else run with LD_LIBRARY_PATH=build/sim finds it; runtime_launch and held_cold
# link it.
SIM_CUDART := $(SIM_DIR)/cudart/libcudart.so.13
$(SIM_CUDART): tests/sim/cudart_stand_in.c tests/sim/cudart_stand_in.h \
               tests/sim/cudart_stand_in.map $(SIM_LIBCUDA) | $(SIM_DIR)/libcuda.so
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CPPFLAGS) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libcudart.so.13 \
	    -Wl,--version-script=tests/sim/cudart_stand_in.map -Wl,--no-undefined \
	    -o $@ tests/sim/cudart_stand_in.c -L$(SIM_DIR) -lcuda
$(SIM_DIR)/progs/runtime_launch $(SIM_DIR)/progs/held_cold: $(SIM_CUDART) tests/sim/cudart_stand_in.h
$(SIM_DIR)/progs/runtime_launch $(SIM_DIR)/progs/held_cold: SIM_PROG_LIBS = -L$(SIM_DIR) -lcuda \
    $(SIM_CUDART) -Wl,-rpath,'$$ORIGIN/../cudart' -ldl -lpthread

$(SIM_DIR)/progs/%: tests/sim/progs/%.c $(wildcard tests/sim/progs/*.h) tests/sim/sim.h \
                    $(SIM_LIBCUDA) | $(SIM_DIR)/libcuda.so
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(SIM_PROG_LIBS)
