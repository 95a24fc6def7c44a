#!/usr/bin/env python3
"""torch_profile.py -- the PyTorch profiler (Kineto, CUPTI) with CUDA activity.

Profiles a few steps of a small model and exports a Chrome trace to TRACE, then reads
it back and prints "trace_kernels N" (events with "cat": "kernel"), "trace_kernel_names
<sha256 of the sorted kernel names>" and "sha256 <output hash>".
usage: torch_profile.py TRACE.json
"""
import hashlib
import json
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402


def main():
    path = sys.argv[1]
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator().manual_seed(99)
    dev = torch.device("cuda")
    x = torch.randn(128, 256, generator=g).to(dev)
    w = [(torch.randn(256, 256, generator=g) / 16).to(dev) for _ in range(4)]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            h = x
            for wi in w:
                h = torch.relu(h @ wi) + 0.01
            x = torch.tanh(h)
        torch.cuda.synchronize()
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
