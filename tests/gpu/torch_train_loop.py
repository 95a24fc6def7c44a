#!/usr/bin/env python3
"""torch_train_loop.py -- a PyTorch training loop written the way people write it
(issue 31: "a PyTorch training loop with per-step x.to("cuda") and loss.item()").

usage: torch_train_loop.py [--model mlp|cnn] [--steps S] [--warmup W] [--time]
                           [--batch B] [--infer-batches]

Training (default): the batches live in CPU tensors (not pinned); every step
    x = xb.to("cuda"); y = yb.to("cuda")          (non_blocking=False)
    opt.zero_grad(); out = model(x); loss = F.cross_entropy(out, y)
    loss.backward(); opt.step()                   (Adam, foreach by default)
    loss.item()                                   (for logging: a sync every step)
  mlp  8 x Linear(512, 512) + ReLU, then Linear(512, 10); batch 64 (default)
  cnn  3 x (Conv2d 3x3 + BatchNorm2d + ReLU + MaxPool2d 2) on 3x32x32, then Linear to 10;
       batch 32
--infer-batches  an inference loop (model.eval(), torch.no_grad()) whose batch size cycles
       1, 2, ..., 8: per iteration x[:bs].to("cuda"), forward, out.cpu() (hashed)
--steps S  steps / inference iterations (default 50); --batch B the training batch
--time     per-step host time (time.perf_counter_ns around each step, the .item() /
           .cpu() already synchronizes: no torch.cuda.synchronize is added) over the steps
           after W warm-up steps (default 5): "per_iter_us p50 <x> p90 <y>"

Deterministic: fixed seeds (weights made on the CPU, data from a CPU torch.Generator),
torch.use_deterministic_algorithms(True), CUBLAS_WORKSPACE_CONFIG=:4096:8 set before the
import, TF32 off, cudnn.benchmark off, cudnn.deterministic on.

stdout: training: "step N loss <float.hex()>" per step, then "sha256 <hex>" over the bytes of
every parameter and buffer at the end (model order); --infer-batches: "sha256 <hex>" over
every output's bytes.  With --time, the timing line last.
"""
import argparse
import hashlib
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

NB = 16  # distinct batches, used in turn


def make_model(kind):
    if kind == "mlp":
        layers = []
        for _ in range(8):
            layers += [nn.Linear(512, 512), nn.ReLU()]
        layers.append(nn.Linear(512, 10))
        return nn.Sequential(*layers)
    blocks = []
    cin = 3
    for cout in (32, 64, 128):
        blocks += [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                   nn.MaxPool2d(2)]
        cin = cout
    return nn.Sequential(*blocks, nn.Flatten(), nn.Linear(128 * 4 * 4, 10))


def make_data(kind, batch, gen):
    shape = (batch, 512) if kind == "mlp" else (batch, 3, 32, 32)
    xs = [torch.randn(*shape, generator=gen) for _ in range(NB)]
    ys = [torch.randint(0, 10, (batch,), generator=gen) for _ in range(NB)]
    return xs, ys


def deterministic_setup():
    """Deterministic kernels, no TF32, cuDNN without autotuning, the global seed 0."""
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.manual_seed(0)


def percentiles(times_ns):
    if not times_ns:
        return "per_iter_us p50 nan p90 nan"
    v = sorted(t / 1000.0 for t in times_ns)
    n = len(v)
    return "per_iter_us p50 %.2f p90 %.2f" % (v[(n - 1) // 2], v[int((n - 1) * 0.9)])


def train(args, model, xs, ys):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    times = []
    lines = []
    for step in range(args.steps):
        t0 = time.perf_counter_ns()
        xb, yb = xs[step % NB], ys[step % NB]
        x = xb.to("cuda")
        y = yb.to("cuda")
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        lv = loss.item()
        t1 = time.perf_counter_ns()
        lines.append("step %d loss %s" % (step, float(lv).hex()))
        if step >= args.warmup:
            times.append(t1 - t0)
    torch.cuda.synchronize()
    for line in lines:
        print(line)
    digest = hashlib.sha256()
    for t in list(model.parameters()) + list(model.buffers()):
        digest.update(t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    print("sha256", digest.hexdigest())
    return times


def infer(args, model, xs):
    model.eval()
    digest = hashlib.sha256()
    times = []
    with torch.no_grad():
        for it in range(args.steps):
            t0 = time.perf_counter_ns()
            bs = 1 + it % 8
            x = xs[it % NB][:bs].to("cuda")
            out = model(x)
            host = out.cpu()
            t1 = time.perf_counter_ns()
            digest.update(host.contiguous().view(-1).view(torch.uint8).numpy().tobytes())
            if it >= args.warmup:
                times.append(t1 - t0)
    torch.cuda.synchronize()
    print("sha256", digest.hexdigest())
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--infer-batches", action="store_true")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup < 0:
        ap.error("--steps must be >= 1, --warmup >= 0")
    if args.time and args.steps < args.warmup + 5:
        args.steps = args.warmup + 5
    batch = args.batch or (64 if args.model == "mlp" else 32)
    if args.infer_batches:
        batch = max(batch, 8)

    deterministic_setup()
    gen = torch.Generator().manual_seed(1234)

    model = make_model(args.model).to("cuda")
    xs, ys = make_data(args.model, batch, gen)
    if args.infer_batches:
        times = infer(args, model, xs)
    else:
        times = train(args, model, xs, ys)
    if args.time:
        print(percentiles(times))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
