# tests/gpu/gpu.mk -- the GPU suite's programs (included by the top Makefile).
#
#   make gpu-progs     build every program of tests/gpu/gpu.bats into $(BUILD)/gpu/
#
# Building needs nvcc and the CUDA headers (no GPU): CI builds them, a GPU machine runs
# them (tests/gpu/gpu.bats skips with "no GPU" elsewhere).
#   probe              is there a usable GPU (dlopens libcuda; no CUDA link)
#   rt_static          (a) tests/gpu/rt_prog.cu, nvcc default: static cudart, <<<>>>, door 4
#   rt_shared          (b) the same with -cudart=shared
#   drv_prog           (c) driver API, embedded fatbin, params/extra/ptsz/Ex/cooperative
#   libcupti_count.so  the independent CUPTI kernel counter (CUDA_INJECTION64_PATH)
#   engine_static      tests/gpu/engine_prog.cu (tests/gpu/engine.bats): the engine's
#                      workloads (tiny, jacobi, scalar, forkjoin, legacy, norepeat,
#                      hostwork, rare), static cudart
#   engine_shared      the same with -cudart=shared
#   capture_static     tests/gpu/capture_prog.cu (tests/gpu/safety.bats): the program's
#   capture_shared     own stream captures and graph launches next to the engine
#   threads_static     tests/gpu/threads_prog.cu (safety.bats): 8 threads, own streams with
#   threads_shared     cross-thread event waits, one shared stream, default stream
#   threads_ptds       the same, --default-stream per-thread (stream 0 is per thread)
#   errors_static      tests/gpu/errors_prog.cu (safety.bats): the program's own errors
#   errors_shared      (launch configuration, handles, out of memory, faulting kernel)
#   liveness_static    tests/gpu/liveness_prog.cu (liveness.bats): memory freed under
#   liveness_shared    graphs, dead pointers (AUTOGRAPH_CHECK_LIVENESS)
#   introspect_trace   tests/gpu/introspect_trace.cu (introspect.bats): a CUPTI-traced
#                      replay for the tools_id proof; links CUPTI and the stub libcuda
#   branches_static    tests/gpu/branches_prog.cu (tests/gpu/trace.bats, trace_bench.sh): a
#                      fork-join graph with more branches than hardware channels
#   fanout_static      tests/gpu/fanout_prog.cu (trace.bats): the program's own explicit
#                      graph, one head, B independent chains, one tail (B up to 1024)
#   rules_static       tests/gpu/rules_prog.cu (engine.bats): what cudaGraphExec*SetParams
#                      accepts (grids, functions, memset and memcpy sizes and pointers)
#   solver_static      tests/gpu/solver_prog.cu (realistic.bats, make bench-loose): a solver
#                      reading a scalar back into a stack variable every iteration
#   alloc_loop_static  tests/gpu/alloc_loop_prog.cu: cudaMalloc, 16 launches, cudaFree
#   trainer_static     tests/gpu/trainer_prog.cu: a C trainer, cuBLASLt and its own kernels,
#                      synchronous copies and memsets on the legacy stream mid-step
#   decode_static      tests/gpu/decode_prog.cu (realistic.bats, make bench-dyn): a decode
#                      loop whose launch sizes grow every token
#   staged_static      tests/gpu/staged_prog.cu (realistic.bats): pageable and synchronous
#                      copies while the GPU runs behind the host (the staging ring)
#   samples_static     tests/gpu/samples_prog.cu (realistic.bats, make bench-loose): loops
#                      shaped like the CUDA samples (Thrust, __constant__ updates, pitched
#                      2D copies, event timing and polling, streams, host callbacks, cuRAND)
#   numlib_static      tests/gpu/numlib_prog.cu (realistic.bats, make bench-loose): loops
#                      on cuSPARSE, cuBLAS and cuFFT (conjugate gradient with host or device
#                      scalars, a spectral step) and on managed memory
#   churn_static       tests/gpu/churn_prog.cu (realistic.bats, make bench-loose): events,
#                      streams, texture objects and pinned buffers made and destroyed every
#                      iteration, a kernel launching kernels (-rdc=true, cudadevrt)
#   two_devices_static tests/gpu/two_devices_prog.cu (multi_device.bats): two GPUs, one
#   two_devices_shared thread switching devices, peer copies and cross-device event
#                      waits, a thread per device (needs 2 GPUs to run)
# (d) and (e) are Python scripts run in place (tests/gpu/*.py).
#
# tests/gpu/<name>_prog.cu builds into <name>_static and <name>_shared by the two pattern
# rules below; every such program depends on the headers of GPU_PROG_HDRS.

GPU_DIR      := $(BUILD)/gpu
GPU_SRC      := tests/gpu
# SASS for Hopper plus PTX that any newer GPU can JIT.
GPU_GENCODE  ?= -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90
GPU_NVFLAGS  ?= -O2 $(GPU_GENCODE) -Xcompiler -Wall -Xcompiler -Wextra
CUPTI_LIBDIR ?= $(patsubst %/,%,$(dir $(firstword $(wildcard \
                  $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so \
                  $(CUDA_HOME)/lib64/libcupti.so \
                  $(CUDA_HOME)/targets/x86_64-linux/lib/libcupti.so \
                  $(CUDA_HOME)/targets/sbsa-linux/lib/libcupti.so) \
                  $(CUDA_HOME)/lib64/libcupti.so)))
GPU_CUDA_INC := -I$(CUDA_HOME)/include $(if $(wildcard $(CUDA_HOME)/extras/CUPTI/include),-I$(CUDA_HOME)/extras/CUPTI/include)
GPU_CFLAGS   := -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE

GPU_PROGS := $(GPU_DIR)/probe $(GPU_DIR)/rt_static $(GPU_DIR)/rt_shared \
             $(GPU_DIR)/drv_prog $(GPU_DIR)/libcupti_count.so \
             $(GPU_DIR)/engine_static $(GPU_DIR)/engine_shared \
             $(GPU_DIR)/capture_static $(GPU_DIR)/capture_shared \
             $(GPU_DIR)/threads_static $(GPU_DIR)/threads_shared $(GPU_DIR)/threads_ptds \
             $(GPU_DIR)/errors_static $(GPU_DIR)/errors_shared \
             $(GPU_DIR)/liveness_static $(GPU_DIR)/liveness_shared \
             $(GPU_DIR)/introspect_trace $(GPU_DIR)/branches_static \
             $(GPU_DIR)/fanout_static $(GPU_DIR)/rules_static \
             $(GPU_DIR)/solver_static $(GPU_DIR)/alloc_loop_static $(GPU_DIR)/trainer_static \
             $(GPU_DIR)/decode_static $(GPU_DIR)/staged_static $(GPU_DIR)/samples_static \
             $(GPU_DIR)/numlib_static $(GPU_DIR)/churn_static \
             $(GPU_DIR)/two_devices_static $(GPU_DIR)/two_devices_shared
GPU_PROG_HDRS := $(GPU_SRC)/fill_hash.cuh $(GPU_SRC)/cuda_check.cuh $(GPU_SRC)/prog_common.cuh \
                 $(GPU_SRC)/loop_timing.cuh $(GPU_SRC)/mode_loop.cuh

.PHONY: gpu-progs
gpu-progs: $(GPU_PROGS)

# The one test command builds the GPU programs wherever nvcc exists (running them
# needs a GPU; gpu.bats skips without one).
ifneq ($(wildcard $(NVCC)),)
test: gpu-progs
endif

$(GPU_DIR)/probe: $(GPU_SRC)/probe.c
	@mkdir -p $(@D)
	$(CC) $(GPU_CFLAGS) -o $@ $< -ldl

$(GPU_DIR)/%_static: $(GPU_SRC)/%_prog.cu $(GPU_PROG_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) -cudart=static -o $@ $<

$(GPU_DIR)/%_shared: $(GPU_SRC)/%_prog.cu $(GPU_PROG_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) -cudart=shared -Xlinker -rpath=$(CUDA_HOME)/lib64 -o $@ $<

# Per-thread default stream: stream 0 (and <<<g, b>>> without a stream) is the calling
# thread's own stream (the _ptsz/_ptds driver entry points).
$(GPU_DIR)/threads_ptds: $(GPU_SRC)/threads_prog.cu $(GPU_PROG_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) --default-stream per-thread -cudart=static -o $@ $<

$(GPU_DIR)/drv_kernels.fatbin: $(GPU_SRC)/drv_kernels.cu $(GPU_SRC)/fill_hash.cuh
	@mkdir -p $(@D)
	$(NVCC) -O2 $(GPU_GENCODE) -fatbin -o $@ $<

$(GPU_DIR)/drv_blob.o: $(GPU_SRC)/drv_blob.S $(GPU_DIR)/drv_kernels.fatbin
	$(CC) -c -Wa,-I$(GPU_DIR) -o $@ $<

$(GPU_DIR)/drv_prog.o: $(GPU_SRC)/drv_prog.c $(GPU_SRC)/drv_common.h
	@mkdir -p $(@D)
	$(CC) $(GPU_CFLAGS) $(GPU_CUDA_INC) -c -o $@ $<

$(GPU_DIR)/drv_ptsz.o: $(GPU_SRC)/drv_ptsz.c $(GPU_SRC)/drv_common.h
	@mkdir -p $(@D)
	$(CC) $(GPU_CFLAGS) $(GPU_CUDA_INC) -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 -c -o $@ $<

# Linked against the toolkit's stub libcuda (NEEDED libcuda.so.1; the driver's at run time).
$(GPU_DIR)/drv_prog: $(GPU_DIR)/drv_prog.o $(GPU_DIR)/drv_ptsz.o $(GPU_DIR)/drv_blob.o
	$(CC) -o $@ $^ -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl -lpthread

# Independent of the shim: links CUPTI only.
$(GPU_DIR)/libcupti_count.so: $(GPU_SRC)/cupti_count.c
	@mkdir -p $(@D)
	$(CC) $(GPU_CFLAGS) -fPIC -shared $(GPU_CUDA_INC) -o $@ $< \
	    -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR) -lcupti -lpthread

# tests/gpu/introspect.bats: a CUPTI-traced replay for the tools_id proof (links CUPTI and
# the stub libcuda; include/autograph.h with AUTOGRAPH_OPTIONAL).
$(GPU_DIR)/introspect_trace: $(GPU_SRC)/introspect_trace.cu $(GPU_PROG_HDRS) include/autograph.h
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) -cudart=static -Iinclude $(GPU_CUDA_INC) -o $@ $< \
	    -L$(CUPTI_LIBDIR) -Xlinker -rpath=$(CUPTI_LIBDIR) -lcupti \
	    -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl

# cuBLASLt (the toolkit's) for the C trainer.
$(GPU_DIR)/trainer_static: $(GPU_SRC)/trainer_prog.cu $(GPU_PROG_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) -cudart=static -o $@ $< -L$(CUDA_HOME)/lib64 \
	    -Xlinker -rpath=$(CUDA_HOME)/lib64 -lcublasLt

# cuRAND (the toolkit's) and Thrust (headers) for the samples-shaped loops.
$(GPU_DIR)/samples_static: $(GPU_SRC)/samples_prog.cu $(GPU_PROG_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) -cudart=static -o $@ $< -L$(CUDA_HOME)/lib64 \
	    -Xlinker -rpath=$(CUDA_HOME)/lib64 -lcurand

# cuSPARSE, cuBLAS and cuFFT (the toolkit's) for the numerical-library loops.
$(GPU_DIR)/numlib_static: $(GPU_SRC)/numlib_prog.cu $(GPU_PROG_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) -cudart=static -o $@ $< -L$(CUDA_HOME)/lib64 \
	    -Xlinker -rpath=$(CUDA_HOME)/lib64 -lcusparse -lcublas -lcufft

# Relocatable device code and the device runtime: churn_prog's kernel launches kernels.
$(GPU_DIR)/churn_static: $(GPU_SRC)/churn_prog.cu $(GPU_PROG_HDRS)
	@mkdir -p $(@D)
	$(NVCC) $(GPU_NVFLAGS) -rdc=true -cudart=static -o $@ $< -lcudadevrt
