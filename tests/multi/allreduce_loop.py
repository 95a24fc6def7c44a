#!/usr/bin/env python3
"""allreduce_loop.py -- a launch-bound loop of small kernels and a 4 KiB all-reduce, on 2 GPUs.

usage: torchrun --standalone --nproc-per-node=2 allreduce_loop.py [--iters N] [--numel E]
           [--sync-every K] [--bench] [--warmup W] [--delay-rank R] [--delay-max SEC]
           [--out-dir DIR]

Every iteration i, on every rank (x, bias, acc: --numel float32 on the rank's GPU, default
1024 = 4 KiB; bias differs between ranks):
  y = torch.add(bias, x, alpha=s_i)   s_i cycles through 4 values (a scalar argument that
                                      changes from one iteration to the next)
  y = torch.tanh(y)
  dist.all_reduce(y)                  sum over the ranks (NCCL)
  x = y * (1 / world)
  acc += x
  torch.cuda.synchronize() every --sync-every K iterations (default 1; 0: never in the loop)
Every element of the result depends on every iteration through acc, and the ranks end with
the same x and acc.  With 2 ranks a reduced element is one addition of two values, so the
runs repeat bit for bit.  NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1 are forced.

Output, per rank (DIR/rank<R>.out, or stdout prefixed "[rank R]"):
  rank R world W pid P
  result x <sha256> acc <sha256> acc0 <float.hex()>    the same on every rank
  per_iter_us p50 X p90 Y          --bench: each iteration timed between two synchronizes,
  median_step_us X samples N       after W warm-up iterations (default 200; default
                                   iterations 3000)
  done
--delay-rank R: rank R sleeps a random 0..--delay-max s once, at a random iteration, before
its kernels or before its all-reduce (a line on stderr says where).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mgpu_common as mc  # noqa: E402

SCALES = (1.0, 0.75, 0.5, 1.25)


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[2:]))
    ap.add_argument("--iters", type=int, default=0,
                    help="iterations (default 1000; 3000 with --bench)")
    ap.add_argument("--numel", type=int, default=1024,
                    help="float32 elements all-reduced per iteration (default 1024: 4 KiB)")
    ap.add_argument("--sync-every", type=int, default=1,
                    help="torch.cuda.synchronize() every K iterations (default 1; 0: never "
                         "in the loop)")
    mc.add_common_args(ap)
    args = ap.parse_args()
    if args.iters == 0:
        args.iters = 3000 if args.bench else 1000
    if args.warmup < 0:
        args.warmup = 200 if args.bench else 0
    if args.iters < 1 or args.numel < 1 or args.sync_every < 0:
        ap.error("--iters and --numel must be >= 1, --sync-every >= 0")
    if args.bench and args.iters < args.warmup + 5:
        args.iters = args.warmup + 5
    return args


def main():
    args = parse()
    torch, dist, dev, rank, _, world, out = mc.start(
        args, "%d iterations of %d elements" % (args.iters, args.numel))

    gen = torch.Generator().manual_seed(77)
    x = torch.randn(args.numel, generator=gen).to(dev)  # the same start on every rank
    gen_rank = torch.Generator().manual_seed(500 + rank)
    bias = torch.randn(args.numel, generator=gen_rank).to(dev)
    acc = torch.zeros(args.numel, dtype=torch.float32, device=dev)
    inv = 1.0 / world
    delay = mc.Delay(args, rank, args.iters, ("kernels", "all_reduce"))
    torch.cuda.synchronize(dev)
    mc.log(rank, "looping")

    timer = mc.StepTimer(torch, dev, args)
    for i in range(args.iters):
        timer.start()
        delay.at(i, "kernels")
        y = torch.add(bias, x, alpha=SCALES[i % len(SCALES)])
        y = torch.tanh(y)
        delay.at(i, "all_reduce")
        dist.all_reduce(y)
        x = y * inv
        acc.add_(x)
        timer.stop(i)
        if not args.bench and args.sync_every and (i + 1) % args.sync_every == 0:
            torch.cuda.synchronize(dev)

    torch.cuda.synchronize(dev)
    acc0 = float(acc[0].item())
    out.line("result x %s acc %s acc0 %s" % (mc.tensors_sha256(torch, [x]),
                                             mc.tensors_sha256(torch, [acc]), acc0.hex()))
    mc.finish(args, dist, out, rank, timer)


if __name__ == "__main__":
    main()
