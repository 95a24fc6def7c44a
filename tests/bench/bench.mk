# tests/bench/bench.mk -- benchmarks (included by the top Makefile).
#
#   make bench         passthrough cost per launch, with vs without the shim, in one run
#                      (tests/bench/bench.sh; prints a markdown table; "skipped: no GPU"
#                      and exit 0 on a machine without a GPU)
#                      then the engine benchmark (tests/bench/engine_bench.sh): tiny-kernel
#                      loops eager / with the shim / hand-written graph, N = 10, 100, 1000,
#                      static and shared cudart, and a non-repeating loop (~2.5 min on an H100)
#                      then what AUTOGRAPH_TRACE costs (tests/bench/trace_bench.sh): three
#                      workloads with the shim, without and with the trace
#   make bench-engine  the engine benchmark alone
#   make bench-trace   the trace benchmark alone
#   make bench-torch   PyTorch training steps (tests/bench/torch_bench.sh): an MLP, a CNN and
#                      a transformer encoder, eager / with the shim / the shim's launch-time
#                      run (AUTOGRAPH=off AUTOGRAPH_TIMING) / the in-process A/B (blocks
#                      of steps with graphing off and on in one process) / torch.cuda.graph
#                      / torch.compile reduce-overhead; needs python3 with PyTorch
#                      ("skipped" and exit 0 without it or without a GPU; ~5 min per round
#                      on an H100: AG_TORCH_BENCH_MODELS and _ROUNDS split it); not part
#                      of make bench
#   make bench-cold    the cache lines the shim misses per held launch with the caches
#                      cold between launches (tests/bench/cold_bench.sh: the simulator
#                      under cachegrind; no GPU needed, "skipped" without valgrind)
#   make bench-loose   realistic loops (tests/bench/loose_bench.sh): a solver reading a
#                      scalar back, alloc and free per iteration, a C trainer, loops
#                      shaped like the CUDA samples, PyTorch and JAX training loops;
#                      without and with the shim, alternating processes
#   make bench-dyn     dynamic shapes (tests/bench/dyn_bench.sh): a C decode loop whose
#                      grids grow, PyTorch GPT-2 decoding and generate(), batches 1..8
#   make bench-progs   build the benchmark programs into $(BUILD)/bench/

BENCH_DIR     := $(BUILD)/bench
BENCH_GENCODE ?= -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90
BENCH_NVFLAGS ?= -O2 $(BENCH_GENCODE)
BENCH_PROGS   := $(BENCH_DIR)/probe $(BENCH_DIR)/launch_bench_static \
                 $(BENCH_DIR)/launch_bench_shared $(BENCH_DIR)/launch_bench_drv \
                 $(BENCH_DIR)/engine_bench_static $(BENCH_DIR)/engine_bench_shared

.PHONY: bench bench-engine bench-trace bench-torch bench-cold bench-progs bench-loose bench-dyn
bench-progs: $(BENCH_PROGS)

# The scripts look for a GPU first and only then build (make all bench-progs) and run.
bench:
	@BUILD=$(BUILD) MAKE="$(MAKE)" tests/bench/bench.sh
	@BUILD=$(BUILD) MAKE="$(MAKE)" tests/bench/engine_bench.sh
	@BUILD=$(BUILD) MAKE="$(MAKE)" tests/bench/trace_bench.sh

bench-engine:
	@BUILD=$(BUILD) MAKE="$(MAKE)" tests/bench/engine_bench.sh

bench-cold:
	@BUILD=$(BUILD) MAKE="$(MAKE)" tests/bench/cold_bench.sh

bench-trace:
	@BUILD=$(BUILD) MAKE="$(MAKE)" tests/bench/trace_bench.sh

bench-loose: all
	@tests/bench/loose_bench.sh $(SHIM_LIB) $(BUILD)/bench/loose

bench-dyn: all
	@tests/bench/dyn_bench.sh $(SHIM_LIB) $(BUILD)/bench/dyn

bench-torch:
	@BUILD=$(BUILD) MAKE="$(MAKE)" tests/bench/torch_bench.sh

$(BENCH_DIR)/probe: tests/gpu/probe.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $< -ldl

$(BENCH_DIR)/launch_bench_static: tests/bench/launch_bench.cu tests/bench/nr_kernels.cuh
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVFLAGS) -cudart=static -o $@ $<

$(BENCH_DIR)/launch_bench_shared: tests/bench/launch_bench.cu tests/bench/nr_kernels.cuh
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVFLAGS) -cudart=shared -Xlinker -rpath=$(CUDA_HOME)/lib64 -o $@ $<

$(BENCH_DIR)/launch_bench_drv: tests/bench/launch_bench.cu tests/bench/nr_kernels.cuh
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVFLAGS) -DAG_BENCH_DRV -cudart=static -o $@ $< \
	    -L$(CUDA_HOME)/lib64/stubs -lcuda

$(BENCH_DIR)/engine_bench_static: tests/bench/engine_bench.cu tests/gpu/cuda_check.cuh tests/bench/nr_kernels.cuh
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVFLAGS) -cudart=static -o $@ $<

$(BENCH_DIR)/engine_bench_shared: tests/bench/engine_bench.cu tests/gpu/cuda_check.cuh tests/bench/nr_kernels.cuh
	@mkdir -p $(@D)
	$(NVCC) $(BENCH_NVFLAGS) -cudart=shared -Xlinker -rpath=$(CUDA_HOME)/lib64 -o $@ $<
