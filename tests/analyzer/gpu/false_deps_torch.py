#!/usr/bin/env python3
"""false_deps_torch.py -- gpu_validate.sh's PyTorch workload: STREAMS torch.cuda.Stream
branches forked from and joined into the current stream, each KERNELS long one-block
kernels (torch.cuda._sleep: a spin of CYCLES clock cycles, one thread; at the default
400000 a few hundred microseconds, as the C workloads' kernels) followed by a small add
on its own tensor.  The branches are independent, submitted stream by stream: with
CUDA_DEVICE_MAX_CONNECTIONS=1 they share one hardware queue and serialize (false
dependencies that cost time), and the GPU sets the pace.  With 32 they overlap, each
stream starting when the host has submitted its work, one stream after the other
(each call costs Python microseconds): the span without false dependencies is
when the last stream's work was submitted plus its chain.  The analyzer estimates the
first part from the host times in the trace (stream waits, synchronizations), taken
under the tracer, and the host's speed varies from run to run; the long kernels keep
the chain, which the GPU sets, the larger part.

    false_deps_torch.py [ITERS [STREAMS [KERNELS [CYCLES]]]]

stderr: "span_us X" (median GPU span of an iteration, from CUDA events on the current
stream around the fork and the join), "wall_us X" (median host time of an iteration),
"iters N"; stdout: a checksum.  Works with torch 2.x (2.11 included).
"""
import sys
import time

import torch


def long_kernel(cycles, x):
    """One long, few-block kernel: torch.cuda._sleep where torch has it, else a
    small matrix product repeated on one tensor."""
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(cycles)
    else:
        for _ in range(max(1, cycles // 10000)):
            x.copy_(x @ x * 0.5)


def main():
    args = [int(a) for a in sys.argv[1:5]]
    iters, streams, kernels, cycles = (args + [20, 8, 4, 400000][len(args):])[:4]
    if not torch.cuda.is_available():
        sys.exit("false_deps_torch.py: no CUDA device")
    dev = torch.device("cuda")
    main_stream = torch.cuda.current_stream()
    side = [torch.cuda.Stream() for _ in range(streams)]
    bufs = [torch.full((256,), float(b), device=dev) for b in range(streams)]
    mats = [torch.eye(16, device=dev) for _ in range(streams)]
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    spans, walls = [], []
    for i in range(iters + 2):
        w0 = time.perf_counter()
        t0.record(main_stream)
        for b, s in enumerate(side):
            s.wait_stream(main_stream)
            with torch.cuda.stream(s):
                for _ in range(kernels):
                    long_kernel(cycles, mats[b])
                    bufs[b].add_(1.0)
        for s in side:
            main_stream.wait_stream(s)
        t1.record(main_stream)
        t1.synchronize()
        if i >= 2:
            spans.append(t0.elapsed_time(t1) * 1000.0)
            walls.append((time.perf_counter() - w0) * 1e6)
    print("checksum %.1f" % float(sum(float(b.sum()) for b in bufs)))
    spans.sort()
    walls.sort()
    sys.stderr.write("span_us %.3f\nwall_us %.3f\niters %d\n"
                     % (spans[len(spans) // 2], walls[len(walls) // 2], len(spans)))


if __name__ == "__main__":
    main()
