#!/usr/bin/env python3
"""torch_graph_replay.py -- issue 33, part 2 on the GPU: a torch.cuda.graph with wide
independent branches, replayed under the PyTorch profiler (Kineto owns CUPTI), so that
the analyzer maps the replays' kernel records to the graph's nodes from the graph data
the shim dumps without CUPTI (AUTOGRAPH_GRAPH_DATA=DIR, run with AUTOGRAPH=off).

usage: torch_graph_replay.py TRACE.json [--branches B] [--replays R]

The graph: one head kernel on the capture stream, B branches forked onto B side streams
(each: 3 chained matmul + relu on its own tensor), joined back, one tail kernel.  It is
replayed R times (default 20) inside torch.profiler.profile(activities=[CUDA, CPU]),
each replay followed by torch.cuda.synchronize(); the trace is exported to TRACE.json.
stdout: "replays R", "branches B", "trace_kernels N" and "sha256 <hex>" over the output.
"""
import argparse
import hashlib
import json

import torch
from torch.profiler import ProfilerActivity, profile


def build(branches):
    torch.manual_seed(0)
    xs = [torch.randn(256, 256, device="cuda") for _ in range(branches)]
    ws = [torch.randn(256, 256, device="cuda") / 16 for _ in range(branches)]
    head = torch.zeros(256, 256, device="cuda")
    out = torch.zeros(256, 256, device="cuda")
    streams = [torch.cuda.Stream() for _ in range(branches)]
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    for x, w, s in zip(xs, ws, streams):    # warm-up: cuBLAS makes its handle and
        s.wait_stream(torch.cuda.current_stream())  # workspaces outside the capture
        with torch.cuda.stream(s):
            torch.relu((x + head) @ w)
    torch.cuda.synchronize()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        with torch.cuda.graph(g, stream=side):
            head.add_(1.0)
            ys = []
            for x, w, s in zip(xs, ws, streams):
                s.wait_stream(side)
                with torch.cuda.stream(s):
                    y = x + head
                    for _ in range(3):
                        y = torch.relu(y @ w)
                    ys.append(y)
            for s in streams:
                side.wait_stream(s)
            out.copy_(torch.stack(ys).sum(0))
    torch.cuda.synchronize()
    return g, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--branches", type=int, default=12)
    ap.add_argument("--replays", type=int, default=20)
    a = ap.parse_args()
    g, out = build(a.branches)
    g.replay()                                  # one replay outside the profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(a.replays):
            g.replay()
            torch.cuda.synchronize()
    prof.export_chrome_trace(a.trace)
    with open(a.trace) as f:
        t = json.load(f)
    kernels = sum(1 for e in t.get("traceEvents", []) if e.get("cat") == "kernel")
    print("replays", a.replays)
    print("branches", a.branches)
    print("trace_kernels", kernels)
    print("sha256", hashlib.sha256(out.cpu().numpy().tobytes()).hexdigest())


if __name__ == "__main__":
    main()
