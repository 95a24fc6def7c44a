#!/usr/bin/env python3
"""ddp_train.py -- data-parallel training on 2 GPUs with DistributedDataParallel.

usage: torchrun --standalone --nproc-per-node=2 ddp_train.py [--model tfm|mlp] [--steps S]
           [--item-every K] [--bucket-mb M] [--bench] [--warmup W] [--delay-rank R]
           [--delay-max SEC] [--out-dir DIR]

Every step, on every rank: its own batch (on the GPU from the start), zero_grad, forward,
cross-entropy, backward with DDP's bucketed all-reduce of the gradients (NCCL, buckets of
--bucket-mb MiB, so several all-reduces overlap the backward), Adam (foreach).  The model
is small, so a step is bound by its kernel launches:
  tfm  a transformer encoder: 4 blocks of d=256, 4 heads, sequence 64, batch 16 per rank;
       attention written out (matmul, causal mask, softmax, matmul), LayerNorm, GELU MLP;
       a token classifier of 32 classes (default)
  mlp  8 x Linear(512, 512) + ReLU, then Linear(512, 10); batch 64 per rank
Each step's loss goes into a GPU buffer; loss.item() every --item-every steps (default 1,
as a training loop logs; 0: never inside the loop, so nothing synchronizes it).

Deterministic: fixed seeds (weights from the same CPU seed on every rank, each rank's data
from its own CPU generator), torch.use_deterministic_algorithms(True),
CUBLAS_WORKSPACE_CONFIG=:4096:8, TF32 off.  With 2 ranks a reduced element is one
addition of two values, whatever algorithm NCCL picks, so the runs repeat bit for bit.
NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 are forced.

Output, per rank (DIR/rank<R>.out, or stdout prefixed "[rank R]"):
  rank R world W pid P
  step N loss <float.hex()>        every step
  sha256 <hex>                     all parameters' bytes at the end (model order): the same
                                   on every rank, DDP keeps the replicas equal
  per_iter_us p50 X p90 Y          --bench: each step timed between two synchronizes,
  median_step_us X samples N       after W warm-up steps (default 50; default steps 300)
  done
--delay-rank R: rank R sleeps a random 0..--delay-max s once, at a random step, before
its forward, backward or optimizer step (a line on stderr says where).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mgpu_common as mc  # noqa: E402

NB = 8  # distinct batches per rank, used in turn


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[2:]))
    ap.add_argument("--model", choices=("tfm", "mlp"), default="tfm")
    ap.add_argument("--steps", type=int, default=0,
                    help="training steps (default 100; 300 with --bench)")
    ap.add_argument("--item-every", type=int, default=1,
                    help="loss.item() every K steps (default 1; 0: never in the loop)")
    ap.add_argument("--bucket-mb", type=float, default=2.0,
                    help="DDP bucket_cap_mb (default 2: several buckets)")
    ap.add_argument("--lr", type=float, default=1e-3)
    mc.add_common_args(ap)
    args = ap.parse_args()
    if args.steps == 0:
        args.steps = 300 if args.bench else 100
    if args.warmup < 0:
        args.warmup = 50 if args.bench else 0
    if args.steps < 1 or args.item_every < 0 or args.bucket_mb <= 0:
        ap.error("--steps must be >= 1, --item-every >= 0, --bucket-mb > 0")
    if args.bench and args.steps < args.warmup + 5:
        args.steps = args.warmup + 5
    return args


def make_model(torch, kind, dev):
    nn = torch.nn
    F = torch.nn.functional

    if kind == "mlp":
        layers = []
        for _ in range(8):
            layers += [nn.Linear(512, 512), nn.ReLU()]
        layers.append(nn.Linear(512, 10))
        return nn.Sequential(*layers), (64, 512), 10

    d, heads, seq, feat, classes, nblocks, batch = 256, 4, 64, 64, 32, 4, 16
    # the causal mask is a plain attribute, not a buffer: DDP would broadcast a buffer
    # every step
    mask = torch.ones(seq, seq, dtype=torch.bool, device=dev).triu(1)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, heads, d // heads) \
                .permute(2, 0, 3, 1, 4).unbind(0)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // heads) ** 0.5)
            att = att.masked_fill(mask[:t, :t], float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(feat, d)
            self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(nblocks))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            h = self.inp(x) + self.pos
            for blk in self.blocks:
                h = blk(h)
            return self.head(self.ln(h))

    return Net(), (batch, seq, feat), classes


def main():
    args = parse()
    torch, dist, dev, rank, local, _, out = mc.start(
        args, "%s, %d steps" % (args.model, args.steps))
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)  # the same initial weights on every rank
    model, xshape, classes = make_model(torch, args.model, dev)
    model = model.to(dev)
    ddp = DDP(model, device_ids=[local], output_device=local, bucket_cap_mb=args.bucket_mb)

    gen = torch.Generator().manual_seed(1000 + rank)  # each rank its own data
    xs = [torch.randn(*xshape, generator=gen).to(dev) for _ in range(NB)]
    ys = [torch.randint(0, classes, xshape[:-1], generator=gen).to(dev) for _ in range(NB)]
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    losses = torch.zeros(args.steps, dtype=torch.float32, device=dev)
    delay = mc.Delay(args, rank, args.steps, ("forward", "backward", "optimizer"))
    torch.cuda.synchronize(dev)
    mc.log(rank, "training")

    timer = mc.StepTimer(torch, dev, args)
    for step in range(args.steps):
        timer.start()
        delay.at(step, "forward")
        x, y = xs[step % NB], ys[step % NB]
        opt.zero_grad(set_to_none=True)
        logits = ddp(x)
        loss = F.cross_entropy(logits.reshape(-1, classes), y.reshape(-1))
        delay.at(step, "backward")
        loss.backward()
        delay.at(step, "optimizer")
        opt.step()
        losses[step].copy_(loss.detach())
        if args.item_every and (step + 1) % args.item_every == 0:
            loss.item()
        timer.stop(step)

    torch.cuda.synchronize(dev)
    for step, value in enumerate(losses.cpu().tolist()):
        out.line("step %d loss %s" % (step, float(value).hex()))
    out.line("sha256 %s" % mc.tensors_sha256(torch, list(model.parameters())))
    mc.finish(args, dist, out, rank, timer)


if __name__ == "__main__":
    main()
