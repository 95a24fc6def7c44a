#!/usr/bin/env python3
"""torch_prog.py -- GPU test program (d): PyTorch, cuBLAS matmuls and elementwise ops.

Fixed-seed inputs made on the CPU, deterministic algorithms, no TF32.  Prints one line,
"sha256 <hex>", the hash of the bytes of every output tensor, so two runs can be
compared bit for bit.  usage: torch_prog.py [iterations]
"""
import hashlib
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    g = torch.Generator().manual_seed(1234)
    dev = torch.device("cuda")
    x = torch.randn(256, 512, generator=g).to(dev)
    w1 = (torch.randn(512, 1024, generator=g) / 512 ** 0.5).to(dev)
    w2 = (torch.randn(1024, 512, generator=g) / 1024 ** 0.5).to(dev)
    b1 = torch.randn(1024, generator=g).to(dev)
    wh = (torch.randn(512, 512, generator=g) / 512 ** 0.5).to(dev, torch.float16)
    wb = (torch.randn(512, 512, generator=g) / 512 ** 0.5).to(dev, torch.bfloat16)
    ln = torch.nn.LayerNorm(512).to(dev)
    outs = []
    h = x
    for it in range(iters):
        a = torch.relu(h @ w1 + b1) * 0.5          # cuBLAS sgemm + elementwise
        a = torch.nn.functional.gelu(a)
        h = torch.tanh(a @ w2) + 0.1 * h            # cuBLAS + elementwise
        h = ln(h)
        hh = (h.half() @ wh).float()                 # fp16 GEMM
        hb = (h.bfloat16() @ wb).float()             # bf16 GEMM
        h = h + 0.01 * hh - 0.01 * hb
        s = torch.softmax(h, dim=-1)
        h = h * (1.0 + s)
        if it % 5 == 4:
            torch.cuda.synchronize()
            outs.append(h.sum(dim=0))
    torch.cuda.synchronize()
    outs.append(h)
    digest = hashlib.sha256()
    for t in outs:
        digest.update(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    print("sha256", digest.hexdigest())


if __name__ == "__main__":
    main()
