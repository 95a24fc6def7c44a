#!/usr/bin/env python3
"""gen_kineto.py -- write a synthetic PyTorch-profiler (Kineto) Chrome trace, for the
analyzer's benchmark and tests.

    gen_kineto.py OUT.json[.gz] --mb 200 [--seed 1] [--no-keys] [--graphs N]

The trace looks like what the PyTorch profiler writes for a training loop that replays
CUDA graphs: per step, python_function and cpu_op events (with their usual args),
cuda_runtime cudaGraphLaunch / cudaLaunchKernel events, ac2g flow events, and the GPU
side: kernels (long templated names, the usual kernel args) and memcpys.  Graph kernels
carry "graph id", "graph node id" (the 64-bit tools id), "channel" and "channel_type"
unless --no-keys; all kernels of one replay share the launch's correlation.  Each exec
graph's get_graph_data JSON is written to OUT.graphs/ (unless --no-keys).  Kernel
times come from a small simulation: a node starts when its predecessors have ended and
its channel (a graph's 2 to 6 branches mapped onto 2 or 3 channels) is free, so the
trace holds true and false serializations.  Output stops at the first step past --mb megabytes.
"""
import argparse
import gzip
import json
import os
import random

KERNELS = [
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
    "AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::"
    "{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >)",
    "ampere_sgemm_128x64_tn",
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>("
    "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl("
    "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
    "{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
    "MeanOps<float, float, float, float>, unsigned int, float, 4> >",
    "triton_poi_fused_add_mul_sigmoid_0",
]


def make_graph(gid, n, rnd):
    """A DAG of n kernel nodes in a few parallel branches that join."""
    branches = rnd.randint(2, 6)
    deps = {i: [] for i in range(n)}
    branch_of = {}
    last = {}
    for i in range(n):
        b = i % branches if i < n - 1 else -1
        if b < 0:
            deps[i] = sorted(last.values())
        else:
            if b in last:
                deps[i] = [last[b]]
            if rnd.random() < 0.1 and i > branches:
                other = rnd.randrange(i)
                if other not in deps[i]:
                    deps[i].append(other)
            last[b] = i
        branch_of[i] = b
    nodes = []
    for i in range(n):
        nodes.append({
            "index": i, "node_type": "kernel", "tools_id": (gid << 32) | (i + 1),
            "graph_id": gid, "node_id": i + 1, "kernel_name": KERNELS[i % len(KERNELS)],
            "dependencies": deps[i], "dependents": [j for j in range(n) if i in deps[j]],
        })
    dur = [rnd.uniform(2.0, 30.0) for _ in range(n)]
    lanes = rnd.randint(2, 3)          # fewer channels than branches: false dependencies
    chan = [(branch_of[i] % lanes + gid) % 8 if branch_of[i] >= 0 else gid % 8 for i in range(n)]
    return {"exec_graph_id": gid, "nodes": nodes}, deps, dur, chan


def simulate(deps, dur, chan, t0, rnd):
    """Start and end of every node: after its predecessors and its channel's last."""
    free = {}
    start, end = {}, {}
    for i in range(len(dur)):
        ready = max([end[d] + 1.0 for d in deps[i]] + [t0])
        s = max(ready, free.get(chan[i], t0) + 0.4)
        start[i] = s
        end[i] = s + dur[i] * rnd.uniform(0.95, 1.05)
        free[chan[i]] = end[i]
    return start, end


class Writer:
    def __init__(self, path):
        self.f = gzip.open(path, "wt") if path.endswith(".gz") else open(path, "w")
        self.size = 0
        self.first = True
        self.buf = []

    def event(self, text):
        self.buf.append(text if self.first else ",\n" + text)
        self.first = False
        if len(self.buf) > 2000:
            self.flush()

    def raw(self, text):
        self.flush()
        self.f.write(text)
        self.size += len(text)

    def flush(self):
        chunk = "".join(self.buf)
        self.buf = []
        self.f.write(chunk)
        self.size += len(chunk)


def cpu_events(w, ts, step, ext):
    w.event('{"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1532):'
            ' _call_impl", "pid": 1234, "tid": 1234, "ts": %.3f, "dur": 40.5, "args": '
            '{"Python parent id": %d, "Python id": %d, "Python thread": 0}}' % (ts, step, step + 1))
    w.event('{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1234, "tid": 1234, '
            '"ts": %.3f, "dur": 12.250, "args": {"External id": %d, "Record function id": 0, '
            '"Concrete Inputs": ["", "", ""], "Input type": ["float", "float", "float"], '
            '"Input Strides": [[4096, 1], [4096, 1], [1]], "Input Dims": [[64, 4096], '
            '[4096, 4096], [4096]], "Ev Idx": %d}}' % (ts + 1, ext, ext))


def launch(w, ts, corr, ext, name):
    w.event('{"ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": 1234, "tid": 1234, '
            '"ts": %.3f, "dur": 4.125, "args": {"External id": %d, "cbid": 311, '
            '"correlation": %d}}' % (name, ts, ext, corr))
    w.event('{"ph": "s", "id": %d, "pid": 1234, "tid": 1234, "ts": %.3f, "cat": "ac2g", '
            '"name": "ac2g"}' % (corr, ts))


def kernel(w, name, ts, dur, corr, ext, stream, graph=None, keys=True):
    extra = ""
    if graph is not None and keys:
        gid, node, chan = graph
        extra = (', "graph id": %d, "graph node id": %d, "channel": %d, "channel_type": "compute"'
                 % (gid, (gid << 32) | node, chan))
    w.event('{"ph": "X", "cat": "kernel", "name": %s, "pid": 0, "tid": %d, "ts": %.3f, "dur": '
            '%.3f, "args": {"External id": %d, "queued": 0, "device": 0, "context": 1, '
            '"stream": %d, "correlation": %d, "registers per thread": 32, "shared memory": 0, '
            '"blocks per SM": 0.5, "warps per SM": 2.0, "grid": [132, 1, 1], "block": [128, 1, '
            '1], "est. achieved occupancy %%": 3%s}}' % (json.dumps(name), stream, ts, dur, ext,
                                                         stream, corr, extra))


def write_trace(args):
    rnd = random.Random(args.seed)
    graphs = [make_graph(gid, rnd.randint(12, 48), rnd) for gid in range(1, args.graphs + 1)]
    w = Writer(args.out)
    w.raw('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", '
          '"totalGlobalMem": 85045477376, "computeMajor": 9, "computeMinor": 0}], '
          '"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}, '
          '"traceEvents": [\n')
    ts, corr, ext, step = 1000.0, 1, 1, 0
    limit = args.mb * 1_000_000
    while w.size + 100 < limit:
        step += 1
        cpu_events(w, ts, step, ext)
        launch(w, ts + 5, corr, ext, "cudaLaunchKernel")
        kernel(w, KERNELS[step % len(KERNELS)], ts + 20, 6.5, corr, ext, 7)
        corr, ext, ts = corr + 1, ext + 1, ts + 30
        g, deps, dur, chan = graphs[step % len(graphs)]
        launch(w, ts, corr, ext, "cudaGraphLaunch")
        start, end = simulate(deps, dur, chan, ts + 10, rnd)
        for i in range(len(dur)):
            kernel(w, KERNELS[i % len(KERNELS)], start[i], end[i] - start[i], corr, ext,
                   140 + chan[i], (g["exec_graph_id"], i + 1, chan[i]), not args.no_keys)
        ts = max(end.values()) + 20
        corr, ext = corr + 1, ext + 1
        w.flush()
    w.raw('\n], "traceName": "synthetic", "displayTimeUnit": "ms", '
          '"baseTimeNanoseconds": 1700000000000000000}\n')
    w.f.close()
    return graphs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--graphs", type=int, default=3)
    ap.add_argument("--no-keys", action="store_true")
    args = ap.parse_args()
    graphs = write_trace(args)
    if not args.no_keys:
        folder = args.out + ".graphs"
        os.makedirs(folder, exist_ok=True)
        for g, *_ in graphs:
            with open(os.path.join(folder, "exec%d.json" % g["exec_graph_id"]), "w") as f:
                json.dump(g, f)


if __name__ == "__main__":
    main()
