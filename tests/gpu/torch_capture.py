#!/usr/bin/env python3
"""torch_capture.py -- PyTorch's own CUDA graphs next to the engine (tests/gpu/safety.bats).

usage: torch_capture.py graph | compile

graph    an eager repeating loop (a sync per step: the engine graphs it), then for each
         capture_error_mode (global, thread_local, relaxed) a torch.cuda.graph capture of
         a small model and replays with fresh inputs copied in, interleaved with the same
         model run eagerly; a sync per step.
compile  the same model under torch.compile(mode="reduce-overhead") (Inductor's CUDA
         graph trees), interleaved with eager steps.

Fixed-seed inputs made on the CPU, deterministic algorithms, no TF32.  Prints one line per
part, "<part> sha256 <hex>" of the bytes of every output kept, so runs with and without
the shim compare byte for byte.
"""
import hashlib
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402

DIM, HID, BATCH = 256, 512, 64


def setup():
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    g = torch.Generator().manual_seed(2024)
    model = torch.nn.Sequential(
        torch.nn.Linear(DIM, HID), torch.nn.GELU(), torch.nn.Linear(HID, DIM),
        torch.nn.LayerNorm(DIM))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    inputs = [torch.randn(BATCH, DIM, generator=g) for _ in range(16)]
    return model.cuda().eval(), [x.cuda() for x in inputs]


class Digest:
    def __init__(self):
        self.h = hashlib.sha256()

    def add(self, t):
        self.h.update(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())

    def line(self, part):
        print(part, "sha256", self.h.hexdigest(), flush=True)


def eager_loop(model, inputs, steps, d):
    h = inputs[0]
    for i in range(steps):
        h = model(h) + 0.1 * inputs[i % len(inputs)]
        torch.cuda.synchronize()
    d.add(h)


@torch.no_grad()
def part_graph(model, inputs):
    d = Digest()
    eager_loop(model, inputs, 30, d)
    d.line("eager")
    for mode in ("global", "thread_local", "relaxed"):
        d = Digest()
        static_in = inputs[0].clone()
        side = torch.cuda.Stream()           # warm-up on a side stream, as documented
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(static_in)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, capture_error_mode=mode):
            static_out = model(static_in) * 2.0 + static_in
        for i in range(12):
            static_in.copy_(inputs[(i * 5) % len(inputs)])
            graph.replay()
            d.add(static_out)
            d.add(model(inputs[i % len(inputs)]))     # eager, between replays
            torch.cuda.synchronize()
        eager_loop(model, inputs, 10, d)
        d.line("graph_" + mode)


@torch.no_grad()
def part_compile(model, inputs):
    d = Digest()
    eager_loop(model, inputs, 20, d)
    compiled = torch.compile(model, mode="reduce-overhead")
    for i in range(12):
        torch.compiler.cudagraph_mark_step_begin()
        out = compiled(inputs[i % len(inputs)])
        d.add(out.clone())
        d.add(model(inputs[(i + 3) % len(inputs)]))   # eager, between graph replays
        torch.cuda.synchronize()
    d.line("compile")
    try:        # Inductor's count of graphs it ran without CUDA graphs (0: all captured)
        from torch._dynamo.utils import counters
        skips = counters["inductor"]["cudagraph_skips"]
    except Exception:
        skips = -1
    print("compile cudagraph_skips", skips, flush=True)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("graph", "compile"):
        sys.exit("usage: torch_capture.py graph|compile")
    model, inputs = setup()
    if sys.argv[1] == "graph":
        part_graph(model, inputs)
    else:
        part_compile(model, inputs)


if __name__ == "__main__":
    main()
