#!/usr/bin/env python3
"""jax_train_loop.py -- a JAX training loop written the way people write it (realistic.bats):
an MLP trained with Adam, its batches uploaded from host numpy arrays every step and the
loss read back with float() every step for logging.

usage: jax_train_loop.py [--mode jit|eager] [--steps S] [--batch B] [--warmup W] [--time]
                         [--no-command-buffer]

  jit    (default) the whole step (forward, backward, Adam) is one jax.jit function: per step
         xb = jnp.asarray(X[i % 16]); yb = jnp.asarray(Y[i % 16])   (pageable uploads)
         params, m, v, loss = step(params, m, v, xb, yb, t)
         float(loss)                                                (a sync every step)
  eager  the same step without jit: every jax.numpy operation and every primitive of the
         gradient is dispatched on its own (JAX's op-by-op mode), many small launches
  The model: 6 x Dense(256, 256) + ReLU, then Dense(256, 10); batch 64 (default).
  --no-command-buffer  XLA_FLAGS gains --xla_gpu_enable_command_buffer= (XLA then issues
         its kernels itself instead of launching its own CUDA graphs)
  --time   per-step host time (time.perf_counter_ns around each step; the float() already
         synchronizes) over the steps after W warm-up steps (default 5):
         "per_iter_us p50 <x> p90 <y>"

Deterministic: weights and data from a numpy Generator with a fixed seed, and XLA_FLAGS gains
--xla_gpu_autotune_level=0 before jax is imported (GEMM algorithms are then chosen without
timing them: a run with the shim, whose timings differ, picks the same ones).

stdout: "step N loss <float.hex()>" per step, then "sha256 <hex>" over the bytes of every
parameter at the end (layer order, weight then bias); with --time, the timing line last.
"""
import argparse
import hashlib
import os
import sys
import time

NB = 16  # distinct batches, used in turn
WIDTH, DEPTH, CLASSES = 256, 6, 10


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("jit", "eager"), default="jit")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--time", action="store_true")
    p.add_argument("--no-command-buffer", action="store_true")
    return p.parse_args()


def set_xla_flags(no_command_buffer):
    """Before jax is imported: the flags that make the run reproducible (and the switch)."""
    flags = [os.environ.get("XLA_FLAGS", ""), "--xla_gpu_autotune_level=0"]
    if no_command_buffer:
        flags.append("--xla_gpu_enable_command_buffer=")
    os.environ["XLA_FLAGS"] = " ".join(f for f in flags if f)


def make_data(np, batch):
    rng = np.random.default_rng(1234)
    xs = [rng.standard_normal((batch, WIDTH)).astype(np.float32) for _ in range(NB)]
    ys = [rng.integers(0, CLASSES, size=(batch,)).astype(np.int32) for _ in range(NB)]
    sizes = [WIDTH] * (DEPTH + 1) + [CLASSES]
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        w = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)
        params.append((w, np.zeros((n,), np.float32)))
    return xs, ys, params


def build_step(jax, jnp):
    """The training step: loss, gradients, Adam (lr 1e-3); t is the step number from 1."""
    tree_map = jax.tree_util.tree_map

    def forward(params, x):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    def loss_fn(params, x, y):
        logp = jax.nn.log_softmax(forward(params, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def step(params, m, v, x, y, t):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
        m = tree_map(lambda a, g: b1 * a + (1 - b1) * g, m, grads)
        v = tree_map(lambda a, g: b2 * a + (1 - b2) * g * g, v, grads)
        c1 = 1.0 / (1.0 - b1 ** t)
        c2 = 1.0 / (1.0 - b2 ** t)
        params = tree_map(lambda p, a, s: p - lr * (a * c1) / (jnp.sqrt(s * c2) + eps),
                          params, m, v)
        return params, m, v, loss

    return step


def main():
    args = parse_args()
    set_xla_flags(args.no_command_buffer)
    import numpy as np
    import jax
    import jax.numpy as jnp

    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax_train_loop.py: no GPU device in jax.devices()", file=sys.stderr)
        return 2
    xs, ys, host_params = make_data(np, args.batch)
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in host_params]
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    step = build_step(jax, jnp)
    if args.mode == "jit":
        step = jax.jit(step)
    times = []
    for i in range(args.steps):
        t0 = time.perf_counter_ns()
        xb = jnp.asarray(xs[i % NB])
        yb = jnp.asarray(ys[i % NB])
        params, m, v, loss = step(params, m, v, xb, yb, jnp.float32(i + 1))
        value = float(loss)
        times.append(time.perf_counter_ns() - t0)
        print(f"step {i} loss {value.hex()}")
    digest = hashlib.sha256()
    for w, b in params:
        digest.update(np.asarray(w).tobytes())
        digest.update(np.asarray(b).tobytes())
    print(f"sha256 {digest.hexdigest()}")
    if args.time:
        timed = sorted(times[args.warmup:]) or sorted(times)
        p50 = timed[len(timed) // 2] / 1000.0
        p90 = timed[min(len(timed) - 1, (len(timed) * 9) // 10)] / 1000.0
        print(f"per_iter_us p50 {p50:.2f} p90 {p90:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
