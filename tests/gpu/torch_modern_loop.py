#!/usr/bin/env python3
"""torch_modern_loop.py -- a PyTorch training loop written the way current training scripts
are written (mixed precision, dropout, AdamW with an LR schedule, a DataLoader-like pinned
input path, metrics kept on the GPU and read back only every N steps).

usage: torch_modern_loop.py [--steps S] [--warmup W] [--time] [--amp fp16|bf16|off]
                            [--device cuda|cpu] [--log-every N] [--batch B] [--fused]

The model: Linear(128, 256), then 4 pre-norm residual blocks
    x + Dropout(Linear(512, 256)(Dropout(GELU(Linear(256, 512)(LayerNorm(x))))))
(Dropout p=0.1, active in training), then LayerNorm and Linear(256, 10).
The data: 8192 training and 2048 evaluation samples in CPU tensors (128 features, 10 classes
from a fixed random linear teacher).  Like a DataLoader with shuffle=True, drop_last=True and
pin_memory=True, each epoch a CPU torch.randperm(generator=...) shuffles the indices; each
batch (128 by default, 64 steps an epoch) is gathered on the CPU, copied into pinned memory
(.pin_memory()) and uploaded with .to(device, non_blocking=True).
Every step:
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype): logits = model(x); loss = cross_entropy(logits, y,
                                                                label_smoothing=0.1)
    fp16:  scaler.scale(loss).backward(); scaler.unscale_(opt)
           clip_grad_norm_(model.parameters(), 1.0); scaler.step(opt); scaler.update()
           (torch.amp.GradScaler("cuda"): scaler.step reads found_inf back with .item(),
           a synchronization every step, unless --fused)
    bf16, off: loss.backward(); clip_grad_norm_(...); opt.step()   (no scaler, no sync)
    sched.step()        (OneCycleLR over the S steps: the learning rate and Adam's beta1
                         change every step)
    loss_sum += loss.detach(); correct += (logits.argmax(-1) == y).sum()   (on the device)
and every N steps (--log-every, default 10) and at the last step the running sums are read
back with .item() (a synchronization) and reset.  At the end of every epoch (and after the
last step) an evaluation pass over the evaluation set (model.eval(), torch.no_grad(), the
same autocast, the same pinned upload path) counts the correct answers on the device and
reads the count back once.
--amp     fp16 (default on cuda): autocast float16 with a GradScaler; bf16 (default on cpu):
          autocast bfloat16, no scaler; off: float32 throughout (fp16 needs cuda)
--fused   AdamW(fused=True) (the scaler then hands its found_inf to the optimizer: no
          per-step .item() with fp16); default: AdamW's default (foreach on cuda)
--steps S training steps (default 1000: 15 epochs and part of a 16th); --batch B (default 128)
--time    per-step host time (time.perf_counter_ns around each training step: the batch
          gather, pinning and upload, forward, backward, optimizer, scheduler and metrics;
          the evaluation passes are not timed) over the steps after W warm-up steps
          (default 5): "per_iter_us p50 <x> p90 <y>".  Since only every N-th step reads
          anything back (and with bf16 or off nothing else synchronizes), --time adds a
          torch.cuda.synchronize() at the end of every training step, inside the timed
          region; without --time there is none.
--device cpu  runs it all on the CPU (no pinning, autocast on the CPU), for a smoke test.

Deterministic: fixed seeds (weights made on the CPU then moved; torch.manual_seed(0) also
seeds the CUDA generator that dropout draws from; the data and the shuffles from CPU
torch.Generators), torch.use_deterministic_algorithms(True), CUBLAS_WORKSPACE_CONFIG=:4096:8
set before the import, TF32 off, cudnn.benchmark off, cudnn.deterministic on.

stdout: "step N loss <float.hex()> correct <count>" for each logged step (N the 0-based index
of the last step in the window, the loss the mean over the window, the count of correct
training answers in it), "step eval-E acc <count>" after each evaluation pass (E = 0, 1, ...;
the count of correct answers of the 2048), then "sha256 <hex>" over the bytes of every
parameter and buffer (model order), every optimizer state tensor (parameters in model order,
state keys sorted), the scaler's scale and growth tracker and the last learning rate.  With
--time, the timing line last.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_train_loop import deterministic_setup, percentiles  # noqa: E402

IN, WIDTH, HIDDEN, DEPTH, CLASSES = 128, 256, 512, 4, 10
N_TRAIN, N_EVAL, EVAL_BATCH = 8192, 2048, 512
P_DROP = 0.1


class Block(nn.Module):
    """A pre-norm residual MLP block (a transformer's feed-forward half)."""

    def __init__(self, width, hidden, p):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, hidden)
        self.act = nn.GELU()
        self.drop1 = nn.Dropout(p)
        self.fc2 = nn.Linear(hidden, width)
        self.drop2 = nn.Dropout(p)

    def forward(self, x):
        return x + self.drop2(self.fc2(self.drop1(self.act(self.fc1(self.norm(x))))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(IN, WIDTH)
        self.blocks = nn.ModuleList(Block(WIDTH, HIDDEN, P_DROP) for _ in range(DEPTH))
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, CLASSES)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def make_data(gen):
    """Training and evaluation sets in CPU tensors, labelled by a random linear teacher."""
    teacher = torch.randn(IN, CLASSES, generator=gen)
    xs = torch.randn(N_TRAIN + N_EVAL, IN, generator=gen)
    ys = (xs @ teacher + 0.5 * torch.randn(N_TRAIN + N_EVAL, CLASSES, generator=gen)).argmax(1)
    return (xs[:N_TRAIN].contiguous(), ys[:N_TRAIN].contiguous(),
            xs[N_TRAIN:].contiguous(), ys[N_TRAIN:].contiguous())


class Loader:
    """What torch.utils.data.DataLoader(..., shuffle, drop_last, pin_memory=True) does in the
    main process: per epoch a CPU randperm (shuffle) or 0..n-1, per batch a CPU gather, a
    copy into pinned memory and a non-blocking upload."""

    def __init__(self, xs, ys, batch, device, shuffle, drop_last, gen=None):
        self.xs, self.ys, self.batch, self.device = xs, ys, batch, device
        self.shuffle, self.drop_last, self.gen = shuffle, drop_last, gen
        self.pin = device.type == "cuda"

    def __len__(self):
        n = self.xs.shape[0]
        return n // self.batch if self.drop_last else (n + self.batch - 1) // self.batch

    def __iter__(self):
        n = self.xs.shape[0]
        order = torch.randperm(n, generator=self.gen) if self.shuffle else torch.arange(n)
        for i in range(len(self)):
            idx = order[i * self.batch:(i + 1) * self.batch]
            xb, yb = self.xs[idx], self.ys[idx]
            if self.pin:
                xb, yb = xb.pin_memory(), yb.pin_memory()
            yield (xb.to(self.device, non_blocking=True),
                   yb.to(self.device, non_blocking=True))


def tensor_bytes(t):
    return t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes()


def evaluate(model, loader, autocast, device):
    """One pass over the evaluation set; the correct count read back once."""
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    with torch.no_grad():
        for x, y in loader:
            with autocast():
                logits = model(x)
            correct += (logits.argmax(-1) == y).sum()
    n = correct.item()
    model.train()
    return n


def digest_state(model, opt, scaler, sched):
    digest = hashlib.sha256()
    for t in list(model.parameters()) + list(model.buffers()):
        digest.update(tensor_bytes(t))
    for p in model.parameters():
        state = opt.state.get(p, {})
        for key in sorted(state):
            v = state[key]
            digest.update(key.encode())
            digest.update(tensor_bytes(v) if torch.is_tensor(v) else repr(v).encode())
    if scaler is not None:
        sd = scaler.state_dict()
        digest.update(float(sd["scale"]).hex().encode())
        digest.update(repr(sd["_growth_tracker"]).encode())
    digest.update(float(sched.get_last_lr()[0]).hex().encode())
    return digest.hexdigest()


def train(args, device):
    gen = torch.Generator().manual_seed(1234)
    shuffle_gen = torch.Generator().manual_seed(4321)
    model = Net().to(device)  # made on the CPU (torch.manual_seed(0) before), then moved
    xtr, ytr, xev, yev = make_data(gen)
    train_loader = Loader(xtr, ytr, args.batch, device, True, True, shuffle_gen)
    eval_loader = Loader(xev, yev, EVAL_BATCH, device, False, False)

    opt_kw = {"lr": 1e-3, "betas": (0.9, 0.95), "weight_decay": 0.05}
    if args.fused:
        opt_kw["fused"] = True
    opt = torch.optim.AdamW(model.parameters(), **opt_kw)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=args.steps,
                                                pct_start=0.1)
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "off": None}[args.amp]
    scaler = torch.amp.GradScaler("cuda") if args.amp == "fp16" else None

    def autocast():
        return torch.autocast(device.type, dtype=amp_dtype or torch.bfloat16,
                              enabled=amp_dtype is not None)

    spe = len(train_loader)
    loss_sum = torch.zeros((), device=device)
    correct = torch.zeros((), dtype=torch.int64, device=device)
    in_window = 0
    epoch = 0
    batches = None
    times = []
    model.train()
    for step in range(args.steps):
        t0 = time.perf_counter_ns()
        if step % spe == 0:
            batches = iter(train_loader)
        x, y = next(batches)
        opt.zero_grad(set_to_none=True)
        with autocast():
            logits = model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        sched.step()
        loss_sum += loss.detach().float()
        correct += (logits.detach().argmax(-1) == y).sum()
        in_window += 1
        line = None
        if (step + 1) % args.log_every == 0 or step == args.steps - 1:
            mean = (loss_sum / in_window).item()
            line = "step %d loss %s correct %d" % (step, float(mean).hex(), correct.item())
            loss_sum.zero_()
            correct.zero_()
            in_window = 0
        if args.time and device.type == "cuda":
            torch.cuda.synchronize()
        t1 = time.perf_counter_ns()
        if step >= args.warmup:
            times.append(t1 - t0)
        if line is not None:
            print(line)
        if (step + 1) % spe == 0 or step == args.steps - 1:
            print("step eval-%d acc %d" % (epoch, evaluate(model, eval_loader, autocast, device)))
            epoch += 1
    if device.type == "cuda":
        torch.cuda.synchronize()
    print("sha256", digest_state(model, opt, scaler, sched))
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--amp", choices=("fp16", "bf16", "off"), default=None)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--fused", action="store_true")
    ap.add_argument("--time", action="store_true")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.log_every < 1:
        ap.error("--steps and --log-every must be >= 1, --warmup >= 0")
    if not 1 <= args.batch <= N_TRAIN:
        ap.error("--batch must be in 1..%d" % N_TRAIN)
    if args.amp is None:
        args.amp = "fp16" if args.device == "cuda" else "bf16"
    if args.amp == "fp16" and args.device != "cuda":
        ap.error("--amp fp16 (with a GradScaler) needs --device cuda")
    if args.time and args.steps < args.warmup + 5:
        args.steps = args.warmup + 5
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_modern_loop.py: torch.cuda.is_available() is False (--device cpu?)")

    deterministic_setup()

    times = train(args, device)
    if args.time:
        print(percentiles(times))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
