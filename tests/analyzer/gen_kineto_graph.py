#!/usr/bin/env python3
"""gen_kineto_graph.py -- PyTorch 2.11-style profiler traces for the analyzer's tests:
no "graph id", "graph node id" or "channel" args.

    gen_kineto_graph.py OUTDIR SCENARIO

Scenarios (each writes OUTDIR/trace.json and, for graphs, OUTDIR/graphs/g.json in the
shape libautograph's AUTOGRAPH_GRAPH_DATA writes: null ids, mangled kernel names):

  branches   a graph of 4 branches of 2 kernels and a join, replayed twice; branches
             b and b+2 share a channel (FIFO in submission order), so the first kernel
             of branches 2 and 3 waits behind branch 0 and 1: per replay 2 false and
             5 true serializations (inferred), every record mapped exactly
  alike      the same with one kernel name for every branch: structurally alike
             nodes, still exact
  ambiguous  two roots of one name with different descendants: ambiguous records
  eager      eager kernels A (stream 14) then B (stream 15) on one channel, with Kineto
             cuda_sync events: without a wait B is a false dependency; with
             `--wait` a "Stream Wait Event" on 15 for A's event record makes it true
  names      PyTorch's real kernel names (from an H100 run): the graph data has them
             mangled (and cuBLAS's plain), the trace as Kineto prints them (demangled;
             `--mangled`: as written in the graph data, as a CUPTI-based trace may),
             two instantiations of one template, anonymous namespaces, and a copy node
             that the driver ran as its kernel memcpy32_post.  A root on stream 7, two
             alike branches add -> gemm -> clamp (streams 20, 21), a join and the copy
             on stream 7, replayed twice: per replay 7 records mapped exactly and 2 by
             stream (the second kernel of the first branch to start), no false
             dependency
"""
import json
import os
import sys

US = 10.0   # kernel duration


def mangle(name):
    return "_Z%d%sPf" % (len(name), name)


def graph_of(names, deps):
    nodes = []
    for i, n in enumerate(names):
        nodes.append({"index": i, "node_type": "kernel", "tools_id": None, "graph_id": None,
                      "node_id": None, "kernel_name": mangle(n), "dependencies": deps[i],
                      "dependents": [j for j in range(len(names)) if i in deps[j]]})
    return {"exec_graph_id": None, "nodes": nodes}


def simulate(deps, chan, t0):
    """Nodes in index order (submission order), each after its predecessors and its
    channel's previous node."""
    free, start, end = {}, [], []
    for i in range(len(deps)):
        s = max([end[d] for d in deps[i]] + [t0, free.get(chan[i], t0)])
        start.append(s)
        end.append(s + US)
        free[chan[i]] = s + US
    return start, end


# (mangled, as Kineto prints it) for PyTorch kernels; cuBLAS's names are not mangled
ONSELF = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIfEE"
          "St5arrayIPcLm2EEEEviT0_T1_",
          "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add"
          "<float>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, "
          "std::array<char*, 2ul>)")
ADD = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPc"
       "Lm3EEEEviT0_T1_",
       "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, "
       "3ul>)")
GEMM = ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4"
        "_alignc4_execute_kernel__5x_cublas",) * 2
CLAMP_LAMBDA = ("at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, "
                "c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::"
                "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}")
CLAMP = ("_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_49_GLOBAL__N__d2ba64fb_16_"
         "TensorCompare_cu_71e06f4e19launch_clamp_scalarERNS_18TensorIteratorBaseEN3c106Scalar"
         "ES6_NS0_6detail11ClampLimitsEENKUlvE_clEvENKUlvE5_clEvEUlfE_St5arrayIPcLm2EEEEviT0_"
         "T1_",
         "void at::native::vectorized_elementwise_kernel<4, " + CLAMP_LAMBDA
         + ", std::array<char*, 2ul> >(int, " + CLAMP_LAMBDA + ", std::array<char*, 2ul>)")
CAT = ("_ZN2at6native40_GLOBAL__N__0f1a8107_8_Shape_cu_49f7391c30CatArrayBatchedCopy_vectorized"
       "INS1_10OpaqueTypeILj4EEEjLi1ELi128ELi1ELi16ELi4EEEvPcNS1_25CatArrInputTensorMetadataIT_"
       "T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_",
       "void at::native::(anonymous namespace)::CatArrayBatchedCopy_vectorized<at::native::"
       "(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1, 16, 4>(char*, "
       "at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous "
       "namespace)::OpaqueType<4u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::"
       "TensorSizeStride<unsigned int, 4u>, int, unsigned int)")
COPY = (None, "memcpy32_post")      # a copy node: no name in the graph data


def kernel(name, ts, stream, corr):
    return {"ph": "X", "cat": "kernel", "name": name + "(float*)", "pid": 0, "tid": stream,
            "ts": round(ts, 3), "dur": US,
            "args": {"device": 0, "stream": stream, "correlation": corr,
                     "grid": [1, 1, 1], "block": [128, 1, 1]}}


def graph_scenario(kind):
    if kind == "ambiguous":
        names = ["k", "k", "x", "y"]
        deps = [[], [], [0], [1]]
        chan = [0, 1, 0, 1]
        stream = [20, 21, 20, 21]
    else:
        names, deps, chan, stream = [], [], [], []
        for b in range(4):
            for k in range(2):
                names.append("branch_k%d" % k if kind == "alike" else "branch%d_%d" % (b, k))
                deps.append([len(names) - 2] if k else [])
                chan.append(b % 2)
                stream.append(20 + b)
        names.append("join")
        deps.append([1, 3, 5, 7])
        chan.append(0)
        stream.append(20)
    events = replays(deps, chan, stream, lambda i: names[i] + "(float*)",
                     lambda start, i: start[i])
    return events, graph_of(names, deps)


def replays(deps, chan, stream, record_name, order):
    """Two launches of the graph (cudaGraphLaunch records) and their kernel records:
    record_name(i) names node i's record, order(start, i) sorts the records."""
    events = []
    for rep in range(2):
        t0 = 1000.0 + 200.0 * rep
        corr = 500 + rep
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1,
                       "tid": 1, "ts": t0 - 5, "dur": 4, "args": {"correlation": corr}})
        start, _ = simulate(deps, chan, t0)
        for i in sorted(range(len(deps)), key=lambda i: order(start, i)):
            k = kernel("", start[i], stream[i], corr)
            k["name"] = record_name(i)
            events.append(k)
    return events


def names_scenario(mangled_trace):
    names = [ONSELF, ADD, GEMM, CLAMP, ADD, GEMM, CLAMP, CAT, COPY]
    deps = [[], [0], [1], [2], [0], [4], [5], [0, 3, 6], [7]]
    stream = [7, 20, 20, 20, 21, 21, 21, 7, 7]
    events = replays(deps, list(range(len(names))), stream,
                     lambda i: names[i][0] if mangled_trace and names[i][0] else names[i][1],
                     lambda start, i: (start[i], stream[i]))
    nodes = []
    for i, n in enumerate(names):
        nodes.append({"index": i, "node_type": "kernel" if n[0] else "memcpy", "tools_id": None,
                      "graph_id": None, "node_id": None, "kernel_name": n[0],
                      "dependencies": deps[i],
                      "dependents": [j for j in range(len(names)) if i in deps[j]]})
    return events, {"exec_graph_id": None, "nodes": nodes}


def eager_scenario(wait):
    ev = [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 100, "dur": 2, "args": {"correlation": 1}},
        kernel("kernel_a", 110, 14, 1),
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1,
         "ts": 103, "dur": 1, "args": {"correlation": 2}},
    ]
    if wait:
        ev.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0,
                   "tid": 15, "ts": 105, "dur": 1,
                   "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 15,
                            "correlation": 3, "device": 0, "context": 1,
                            "wait_on_stream": 14, "wait_on_cuda_event_record_corr_id": 2,
                            "wait_on_cuda_event_id": 9}})
    ev += [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 106, "dur": 2, "args": {"correlation": 4}},
        kernel("kernel_b", 110 + US, 15, 4),      # ready at 108, held by the channel
        {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": 7,
         "ts": 140, "dur": 1, "args": {"cuda_sync_kind": "Context Sync", "stream": -1,
                                       "correlation": 5, "device": 0, "context": 1}},
    ]
    return ev


def main():
    out, kind = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}]}
    if kind == "eager":
        doc["traceEvents"] = eager_scenario("--wait" in sys.argv)
    else:
        if kind == "names":
            doc["traceEvents"], graph = names_scenario("--mangled" in sys.argv)
        else:
            doc["traceEvents"], graph = graph_scenario(kind)
        os.makedirs(os.path.join(out, "graphs"), exist_ok=True)
        with open(os.path.join(out, "graphs", "g.json"), "w") as f:
            json.dump(graph, f)
    with open(os.path.join(out, "trace.json"), "w") as f:
        json.dump(doc, f, indent=0)


if __name__ == "__main__":
    main()
