#!/usr/bin/env python3
"""torch_profile.py -- the PyTorch profiler (Kineto, CUPTI) with CUDA activity.

Profiles a few steps of a small model and exports a Chrome trace to TRACE, then reads
it back and prints "trace_kernels N" (events with "cat": "kernel"), "trace_kernel_names
<sha256 of the sorted kernel names>" and "sha256 <output hash>".
With "loop STEPS": profiles STEPS identical steps of elementwise kernels instead, each
ended by torch.cuda.synchronize() (a repeating loop: the engine graphs it).
usage: torch_profile.py TRACE.json [loop STEPS]
"""
import hashlib
import json
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402


def model_steps(x, w):
    for _ in range(5):
        h = x
        for wi in w:
            h = torch.relu(h @ wi) + 0.01
        x = torch.tanh(h)
    torch.cuda.synchronize()
    return x


def loop_steps(x, w, steps):
    for _ in range(steps):
        h = x
        for wi in w:
            h = torch.relu(h * wi[:128] + 0.01)
        x = torch.tanh(h) * 0.5 + x * 0.5
        torch.cuda.synchronize()
    return x


def main():
    path = sys.argv[1]
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator().manual_seed(99)
    dev = torch.device("cuda")
    x = torch.randn(128, 256, generator=g).to(dev)
    w = [(torch.randn(256, 256, generator=g) / 16).to(dev) for _ in range(4)]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        if len(sys.argv) > 3 and sys.argv[2] == "loop":
            x = loop_steps(x, w, int(sys.argv[3]))
        else:
            x = model_steps(x, w)
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels = [e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"]
    names = hashlib.sha256("\n".join(sorted(e.get("name", "") for e in kernels)).encode())
    print("trace_kernels", len(kernels))
    print("trace_kernel_names", names.hexdigest())
    print("sha256", hashlib.sha256(x.cpu().numpy().tobytes()).hexdigest())


if __name__ == "__main__":
    main()
