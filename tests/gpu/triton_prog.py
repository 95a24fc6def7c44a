#!/usr/bin/env python3
"""triton_prog.py -- GPU test program (e): a loop of Triton kernels.

Two @triton.jit kernels (elementwise, row softmax) run in a loop on fixed-seed data;
no autotuning, so the number of launches is fixed.  Prints "sha256 <hex>" of the
output bytes.  usage: triton_prog.py [iterations]
"""
import hashlib
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def axpy_sq(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, alpha * x + y * y * 0.5 - 0.25, mask=m)


@triton.jit
def row_softmax(x_ptr, out_ptr, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < ncols
    x = tl.load(x_ptr + row * ncols + offs, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * ncols + offs, e / tl.sum(e, axis=0), mask=m)


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    g = torch.Generator().manual_seed(4321)
    rows, cols = 512, 1000
    n = rows * cols
    x = torch.randn(n, generator=g).cuda()
    y = torch.randn(n, generator=g).cuda()
    t = torch.empty_like(x)
    digest = hashlib.sha256()
    for it in range(iters):
        axpy_sq[(triton.cdiv(n, 1024),)](x, y, t, n, 0.5 + it * 0.01, BLOCK=1024)
        row_softmax[(rows,)](t, y, cols, BLOCK=1024)
        x, t = t, x
        if it % 10 == 9:
            torch.cuda.synchronize()
            digest.update(y.cpu().numpy().tobytes())
    torch.cuda.synchronize()
    digest.update(x.cpu().numpy().tobytes())
    digest.update(y.cpu().numpy().tobytes())
    print("sha256", digest.hexdigest())


if __name__ == "__main__":
    main()
