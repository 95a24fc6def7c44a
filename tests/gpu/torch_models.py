#!/usr/bin/env python3
"""torch_models.py -- three unmodified-style PyTorch workloads, timed per step.

usage: torch_models.py MODEL MODE [--steps S] [--warmup W] [--json FILE]
                       [--infer] [--data pinned|device] [--batches K] [--ab BLOCK]

MODEL  mlp          16 x Linear(1024, 1024) with ReLU between, batch 64, MSE loss,
                    SGD (momentum 0.9)
       cnn          4 x (Conv2d 3x3 + BatchNorm2d + ReLU + MaxPool2d 2), then Linear
                    to 10 classes; batch 32 of 3x64x64; cross-entropy against one-hot
                    targets written out (log_softmax), SGD (momentum 0.9)
       transformer  nn.TransformerEncoder, 2 layers, d_model 256, 4 heads, feed-forward
                    1024, dropout 0, batch_first, enable_nested_tensor=False, final
                    LayerNorm, then Linear(256, 256); seq 64, batch 16; MSE loss, Adam
MODE   eager        plain PyTorch, one training step (zero_grad, forward, loss,
                    backward, optimizer.step) then torch.cuda.synchronize() per step:
                    what runs under the shim
       graph        the whole-network capture recipe of the PyTorch docs: 3 warm-up
                    steps on a side stream, then one whole training step (forward, loss,
                    backward, optimizer.step) captured with torch.cuda.graph on static
                    input/target tensors; per step: copy the batch into them, replay,
                    synchronize.  Adam gets capturable=True (SGD needs nothing).
       compile      torch.compile(mode="reduce-overhead") of the model and its loss
                    (Inductor; forward and backward run as CUDA graph trees), then
                    backward and the (eager) optimizer step; cudagraph_mark_step_begin()
                    per step.  If it cannot compile: "compile unavailable: <reason>" on
                    stdout and exit status 3.
--infer             forward only (model.eval(), torch.no_grad()), no loss or optimizer
--data pinned       (default) the K batches are made on the CPU, kept in pinned host
                    memory and copied to the GPU every step with non_blocking=True, as a
                    DataLoader with pin_memory=True does; "device": the K batches are
                    moved to the GPU once and used in turn
--batches K         distinct batches, used in turn (default 4)
--ab BLOCK          (eager mode only; BLOCK >= 2) in-process A/B under the shim, which
                    must be loaded with graphing on (LD_PRELOAD=libautograph.so; else exit
                    status 2): the warm-up runs graphed as usual, then the S steps
                    (rounded up to whole pairs) run as pairs of blocks of BLOCK steps, one
                    block "off" (autograph_disable() before it: the shim passes every call
                    through, its graphs are kept) and one "on" (autograph_enable()); in
                    pair p the "off" block goes first when p is even, second when p is
                    odd.  A block's first step absorbs the switch and is not timed; its
                    other BLOCK-1 steps are.  Graphing is on again after the last block.
                    The same steps run as without --ab: the same sha256 when S is a
                    whole number of pairs (a multiple of 2 x BLOCK)

Deterministic: fixed seeds (weights from the CPU generator, data from a CPU
torch.Generator), torch.use_deterministic_algorithms(True),
CUBLAS_WORKSPACE_CONFIG=:4096:8, TF32 off, cudnn.benchmark off, cudnn.deterministic
on, scaled_dot_product_attention restricted to its math backend, the MHA /
TransformerEncoder fast path off.

Output (stdout):
  sha256 <hex>      over the bytes of the final parameters and buffers (model order)
                    and the last step's loss (--infer: its output); eager mode gives the
                    same hash with and without the shim (graph and compile modes print
                    their own: they need not match eager bit for bit)
  step_us p50 <x> p90 <y> p99 <z> mean <m>
                    wall time per timed step (batch fetch + step + synchronize),
                    time.perf_counter_ns (CLOCK_MONOTONIC), microseconds (not with --ab)
  ab_step_us off p50 <x> p90 <y> p99 <z> mean <m> on p50 <x> p90 <y> p99 <z> mean <m>
                    (--ab only, instead of step_us) the same figures of the timed steps of
                    all "off" blocks pooled, then of all "on" blocks
  ab_pairs <N> ratio_p50 median <r> p25 <a> p75 <b> ratio_p90 median <r> p25 <a> p75 <b>
                    (--ab only) per pair, the off block's p50 of its timed steps over the
                    on block's (ratio_p50; ratio_p90 the same with p90): the median and
                    quartiles over the N pairs (4 decimals); > 1: faster with graphing
  ab_pair_ratios p50 <r1> .. <rN> p90 <r1> .. <rN>
                    (--ab only) those per-pair ratios, pair by pair
  steps <S>         the steps run after the warm-up (--ab: those of the blocks, timed or
                    not)
  compile_cudagraph_skips <N>   (compile mode only) Inductor's count of graphs it ran
                    without CUDA graphs (0: all captured; -1: unknown)
A line on stderr describes the run.  --json FILE also writes every figure and the
per-step samples as JSON; with --ab "step_us" is null and "ab" holds block, pairs,
step_us (off, on), ratio_p50 and ratio_p90 (median, p25, p75), pair_ratios (pair, first
side, p50, p90) and samples_side / samples_pair (the side and pair of each entry of
samples_us).  Exit status: 0 ok, 2 usage (--ab: also no shim, or a switch it refused:
"torch_models.py: --ab: autograph_disable() returned <code>" on stderr), 3 compile
unavailable.
"""
import argparse
import ctypes
import hashlib
import json
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

MODELS = ("mlp", "cnn", "transformer")
MODES = ("eager", "graph", "compile")
EXIT_USAGE = 2
EXIT_COMPILE_UNAVAILABLE = 3


def set_deterministic():
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    # The fused attention kernels' backward passes may use atomics: math only.
    for name, on in (("enable_flash_sdp", False), ("enable_mem_efficient_sdp", False),
                     ("enable_cudnn_sdp", False), ("enable_math_sdp", True)):
        fn = getattr(torch.backends.cuda, name, None)
        if fn is not None:
            fn(on)
    mha = getattr(torch.backends, "mha", None)
    if mha is not None and hasattr(mha, "set_fastpath_enabled"):
        mha.set_fastpath_enabled(False)


# --- the workloads -------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self, width=1024, layers=16):
        super().__init__()
        mods = []
        for i in range(layers):
            mods.append(nn.Linear(width, width))
            if i < layers - 1:
                mods.append(nn.ReLU())
        self.net = nn.Sequential(*mods)

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        mods = []
        cin = 3
        for cout in (32, 64, 128, 128):
            mods += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                     nn.ReLU(), nn.MaxPool2d(2)]
            cin = cout
        self.features = nn.Sequential(*mods)
        self.head = nn.Linear(128 * 4 * 4, classes)     # 64x64 halved 4 times: 4x4

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class Encoder(nn.Module):
    def __init__(self, d_model=256, nhead=4, layers=2, ff=1024):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ff, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.head(self.encoder(x))


def soft_cross_entropy(logits, onehot):
    # written out: nll_loss on CUDA has no deterministic implementation in some versions
    return -(onehot * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def make_workload(name, nbatches):
    """(model on the CPU, list of (x, y) CPU batches, loss function, optimizer factory)"""
    torch.manual_seed(1234)                        # weight init (CPU generator)
    g = torch.Generator().manual_seed(5678)        # data
    batches = []
    if name == "mlp":
        model = MLP()
        for _ in range(nbatches):
            batches.append((torch.randn(64, 1024, generator=g),
                            torch.randn(64, 1024, generator=g) * 0.1))
        loss_fn = F.mse_loss

        def make_opt(params, capturable):
            return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    elif name == "cnn":
        model = CNN()
        for _ in range(nbatches):
            x = torch.randn(32, 3, 64, 64, generator=g)
            labels = torch.randint(0, 10, (32,), generator=g)
            batches.append((x, F.one_hot(labels, 10).float()))
        loss_fn = soft_cross_entropy

        def make_opt(params, capturable):
            return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    else:
        model = Encoder()
        for _ in range(nbatches):
            batches.append((torch.randn(16, 64, 256, generator=g),
                            torch.randn(16, 64, 256, generator=g)))
        loss_fn = F.mse_loss

        def make_opt(params, capturable):
            if capturable:
                return torch.optim.Adam(params, lr=1e-4, capturable=True)
            return torch.optim.Adam(params, lr=1e-4)
    return model, batches, loss_fn, make_opt


class ModelLoss(nn.Module):
    """model + loss as one module (what torch.compile gets in compile mode)"""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, x, y):
        return self.loss_fn(self.model(x), y)


# --- the three ways to run a step ------------------------------------------------------
# Each builder returns step(i) -> the tensor the hash takes (loss, or output with
# --infer) of that step; the caller synchronizes.

def fetcher(batches, data, dev):
    if data == "device":
        on_dev = [(x.to(dev), y.to(dev)) for x, y in batches]
        return lambda i: on_dev[i % len(on_dev)]
    pinned = [(x.pin_memory(), y.pin_memory()) for x, y in batches]

    def fetch(i):
        x, y = pinned[i % len(pinned)]
        return x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    return fetch


def build_eager(model, loss_fn, make_opt, fetch, infer):
    if infer:
        def step(i):
            x, _ = fetch(i)
            with torch.no_grad():
                return model(x)
        return step
    opt = make_opt(model.parameters(), False)

    def step(i):
        x, y = fetch(i)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def build_graph(model, loss_fn, make_opt, batches, data, dev, infer):
    x0, y0 = batches[0]
    static_x = x0.to(dev)
    static_y = y0.to(dev)
    if data == "device":
        srcs = [(x.to(dev), y.to(dev)) for x, y in batches]
    else:
        srcs = [(x.pin_memory(), y.pin_memory()) for x, y in batches]
    opt = None if infer else make_opt(model.parameters(), True)

    def body():
        if infer:
            with torch.no_grad():
                return model(static_x)
        loss = loss_fn(model(static_x), static_y)
        loss.backward()
        opt.step()
        return loss

    # warm-up on a side stream (lazy initialisation stays out of the graph)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            if opt is not None:
                opt.zero_grad(set_to_none=True)
            body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    if opt is not None:
        # grads to None: backward allocates .grad from the graph's private pool
        opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_out = body()
    torch.cuda.synchronize()

    def step(i):
        x, y = srcs[i % len(srcs)]
        static_x.copy_(x, non_blocking=True)
        if not infer:
            static_y.copy_(y, non_blocking=True)
        graph.replay()
        return static_out
    return step


def build_compile(model, loss_fn, make_opt, fetch, infer):
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    if infer:
        compiled = torch.compile(model, mode="reduce-overhead")

        def step(i):
            if mark is not None:
                mark()
            x, _ = fetch(i)
            with torch.no_grad():
                return compiled(x)
        return step
    opt = make_opt(model.parameters(), False)
    compiled = torch.compile(ModelLoss(model, loss_fn), mode="reduce-overhead")

    def step(i):
        opt.zero_grad(set_to_none=True)
        if mark is not None:
            mark()
        x, y = fetch(i)
        loss = compiled(x, y)
        loss.backward()
        opt.step()
        return loss
    return step


# --- figures -----------------------------------------------------------------------------

def quantile(sorted_v, p):
    """nearest rank; the median of an even count is the mean of the middle two"""
    n = len(sorted_v)
    if n == 0:
        return float("nan")
    if p == 0.5 and n % 2 == 0:
        return (sorted_v[n // 2 - 1] + sorted_v[n // 2]) / 2.0
    return sorted_v[int(p * (n - 1) + 0.5)]


def figures(samples):
    """p50, p90, p99 and mean of step times"""
    s = sorted(samples)
    return {"p50": quantile(s, 0.5), "p90": quantile(s, 0.9), "p99": quantile(s, 0.99),
            "mean": sum(s) / len(s) if s else float("nan")}


def spread(values):
    """median and quartiles"""
    s = sorted(values)
    return {"median": quantile(s, 0.5), "p25": quantile(s, 0.25), "p75": quantile(s, 0.75)}


def tensor_bytes(t):
    t = t.detach().reshape(-1).cpu().contiguous()    # reshape: 0-d tensors cannot view
    return t.view(torch.uint8).numpy().tobytes()


def digest(model, last):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(tensor_bytes(p))
    for b in model.buffers():
        h.update(tensor_bytes(b))
    h.update(tensor_bytes(last))
    return h.hexdigest()


def compile_skips():
    try:        # Inductor's count of graphs it ran without CUDA graphs (0: all captured)
        from torch._dynamo.utils import counters
        return int(counters["inductor"]["cudagraph_skips"])
    except Exception:
        return -1


# --- in-process A/B (--ab) -------------------------------------------------------------

def ab_first(pair):
    """the side whose block goes first in a pair: "off" in even pairs, "on" in odd ones"""
    return "off" if pair % 2 == 0 else "on"


def ab_blocks(steps, block):
    """[(pair, side)] of the blocks after the warm-up: `steps` rounded up to whole pairs
    of blocks of `block` steps, the side going first alternating"""
    blocks = []
    for pair in range(-(-steps // (2 * block))):
        first = ab_first(pair)
        blocks += [(pair, first), (pair, "on" if first == "off" else "off")]
    return blocks


def ratio(a, b):
    return a / b if b > 0 else float("nan")


def ab_figures(timed):
    """timed: [(pair, side, us)] of the timed steps -> the --ab figures: each side's pooled
    figures, and per pair the off block's p50 and p90 over the on block's"""
    per = {}
    for pair, side, us in timed:
        per.setdefault(pair, {"off": [], "on": []})[side].append(us)
    pairs = []
    for pair in sorted(per):
        off, on = sorted(per[pair]["off"]), sorted(per[pair]["on"])
        pairs.append({"pair": pair, "first": ab_first(pair),
                      "p50": ratio(quantile(off, 0.5), quantile(on, 0.5)),
                      "p90": ratio(quantile(off, 0.9), quantile(on, 0.9))})
    return {"step_us": {side: figures([us for _, s, us in timed if s == side])
                        for side in ("off", "on")},
            "pairs": len(pairs), "pair_ratios": pairs,
            "ratio_p50": spread([r["p50"] for r in pairs]),
            "ratio_p90": spread([r["p90"] for r in pairs])}


def ab_lines(ab):
    """the stdout lines of --ab (without sha256 and steps)"""
    def fig(side):
        f = ab["step_us"][side]
        return "%s p50 %.1f p90 %.1f p99 %.1f mean %.1f" % (side, f["p50"], f["p90"],
                                                            f["p99"], f["mean"])

    def spr(q):
        f = ab["ratio_" + q]
        return "ratio_%s median %.4f p25 %.4f p75 %.4f" % (q, f["median"], f["p25"],
                                                            f["p75"])

    def per_pair(q):
        return q + "".join(" %.4f" % r[q] for r in ab["pair_ratios"])
    return ["ab_step_us %s %s" % (fig("off"), fig("on")),
            "ab_pairs %d %s %s" % (ab["pairs"], spr("p50"), spr("p90")),
            "ab_pair_ratios %s %s" % (per_pair("p50"), per_pair("p90"))]


def usage_exit(msg):
    print("torch_models.py: " + msg, file=sys.stderr)
    sys.exit(EXIT_USAGE)


class Shim:
    """autograph_disable / autograph_enable of the preloaded shim, through ctypes"""

    NAMES = {"off": "autograph_disable", "on": "autograph_enable"}

    def __init__(self):
        lib = ctypes.CDLL(None)                      # RTLD_DEFAULT: LD_PRELOAD included
        self.fns = {}
        for side, name in self.NAMES.items():
            fn = getattr(lib, name, None)
            if fn is None:
                usage_exit("--ab needs the shim loaded (LD_PRELOAD=libautograph.so)")
            fn.argtypes = []
            fn.restype = ctypes.c_int
            self.fns[side] = fn

    def switch(self, side):
        """graphing off ("off") or on ("on"); exit status 2 if the shim refuses"""
        rc = self.fns[side]()
        if rc != 0:
            why = " (AUTOGRAPH=off)" if rc == -2 else ""
            usage_exit("--ab: %s() returned %d%s" % (self.NAMES[side], rc, why))


# --- the timed loop ----------------------------------------------------------------------

def timed_step(step, i):
    """(the step's tensor, its wall time with the synchronize in us)"""
    t0 = time.perf_counter_ns()
    out = step(i)
    torch.cuda.synchronize()
    return out, (time.perf_counter_ns() - t0) / 1000.0


def run_plain(step, first, warmup, steps):
    """the warm-up then `steps` timed steps: (last tensor, [us])"""
    out, samples = None, []
    for k in range(warmup + steps):
        out, us = timed_step(step, first + k)
        if k >= warmup:
            samples.append(us)
    return out, samples


def run_ab(step, first, warmup, blocks, block, shim):
    """the warm-up (graphing on), then the blocks: (last tensor, [(pair, side, us)])"""
    out, timed = None, []
    for k in range(warmup):
        out, _ = timed_step(step, first + k)
    k = warmup
    for pair, side in blocks:
        shim.switch(side)
        for j in range(block):
            out, us = timed_step(step, first + k)
            k += 1
            if j > 0:                   # the block's first step absorbs the switch
                timed.append((pair, side, us))
    shim.switch("on")
    return out, timed


def one_line(e):
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0] if text else "")


def main():
    ap = argparse.ArgumentParser(description="PyTorch workloads, timed per step")
    ap.add_argument("model", choices=MODELS)
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("--steps", type=int, default=200,
                    help="timed steps (default 200; --ab: the steps of the blocks, "
                         "rounded up to whole pairs)")
    ap.add_argument("--warmup", type=int, default=30,
                    help="untimed steps first (default 30)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--infer", action="store_true", help="forward only, no training")
    ap.add_argument("--data", choices=("pinned", "device"), default="pinned")
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--ab", type=int, metavar="BLOCK",
                    help="in-process A/B under the shim: blocks of BLOCK steps with "
                         "graphing off and on (eager mode only)")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.batches < 1:
        ap.error("--steps >= 1, --warmup >= 0, --batches >= 1")
    if args.ab is not None and (args.ab < 2 or args.mode != "eager"):
        ap.error("--ab BLOCK: BLOCK >= 2, and only with mode eager")
    if not torch.cuda.is_available():
        sys.exit("torch_models.py: no CUDA device")
    shim = None
    if args.ab is not None:
        shim = Shim()
        shim.switch("on")               # graphing must be on (AUTOGRAPH=off refuses)

    set_deterministic()
    dev = torch.device("cuda")
    model, batches, loss_fn, make_opt = make_workload(args.model, args.batches)
    model = model.to(dev)
    if args.infer:
        model.eval()
    else:
        model.train()
    torch.cuda.synchronize()

    skips = None
    pre = 0                           # compile mode: steps run before the warm-up ones
    if args.mode == "eager":
        step = build_eager(model, loss_fn, make_opt, fetcher(batches, args.data, dev),
                           args.infer)
    elif args.mode == "graph":
        step = build_graph(model, loss_fn, make_opt, batches, args.data, dev, args.infer)
    else:
        try:
            if not hasattr(torch, "compile"):
                raise RuntimeError("this PyTorch has no torch.compile")
            step = build_compile(model, loss_fn, make_opt,
                                 fetcher(batches, args.data, dev), args.infer)
            # compilation happens at the first calls (compile, CUDA graph warm-up,
            # record): they are the test of availability, and come on top of --warmup
            for j in range(3):
                step(j)
                torch.cuda.synchronize()
            pre = 3
        except Exception as e:     # noqa: BLE001 -- any failure to compile is reported
            print("compile unavailable:", one_line(e), flush=True)
            print("torch_models.py: compile unavailable:", repr(e), file=sys.stderr)
            sys.exit(EXIT_COMPILE_UNAVAILABLE)

    fig = ab = None
    if shim is None:
        out, samples = run_plain(step, pre, args.warmup, args.steps)
        ran = len(samples)
        fig = figures(samples)
    else:
        blocks = ab_blocks(args.steps, args.ab)
        out, timed = run_ab(step, pre, args.warmup, blocks, args.ab, shim)
        ran = len(blocks) * args.ab
        samples = [us for _, _, us in timed]
        ab = ab_figures(timed)
        ab.update({"block": args.ab, "samples_side": [side for _, side, _ in timed],
                   "samples_pair": [pair for pair, _, _ in timed]})
    if args.mode == "compile":
        skips = compile_skips()

    sha = digest(model, out)
    print("sha256", sha)
    if ab is None:
        print("step_us p50 %.1f p90 %.1f p99 %.1f mean %.1f"
              % (fig["p50"], fig["p90"], fig["p99"], fig["mean"]))
    else:
        print("\n".join(ab_lines(ab)))
    print("steps", ran)
    if skips is not None:
        print("compile_cudagraph_skips", skips)
    sys.stdout.flush()
    how = "%d timed steps" % ran
    if ab is not None:
        how = "%d steps in %d pairs of blocks of %d, graphing off and on (%d timed)" % (
            ran, ab["pairs"], args.ab, len(samples))
    print("torch_models.py: %s %s%s, data %s x%d, torch %s (CUDA %s), %s, %d warm-up + %s"
          % (args.model, args.mode, " (inference)" if args.infer else "", args.data,
             args.batches, torch.__version__, torch.version.cuda,
             torch.cuda.get_device_name(0), args.warmup, how), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "mode": args.mode, "infer": args.infer,
                       "data": args.data, "batches": args.batches, "warmup": args.warmup,
                       "steps": ran, "sha256": sha, "step_us": fig,
                       "samples_us": samples, "ab": ab, "compile_cudagraph_skips": skips,
                       "torch": torch.__version__, "cuda": torch.version.cuda,
                       "device": torch.cuda.get_device_name(0)}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
