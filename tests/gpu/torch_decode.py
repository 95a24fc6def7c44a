#!/usr/bin/env python3
"""torch_decode.py -- GPT-2-size greedy decoding and a variable-batch inference loop, written
the way people write them (issue 35: "a PyTorch decode loop with a growing KV cache, and a
variable-batch inference loop").

usage: torch_decode.py [--mode loop|generate|batches] [--tokens N] [--dtype fp32|bf16]
                       [--model gpt2|mlp] [--device cuda|cpu] [--time] [--warmup W]
                       [--calls C] [--steps S] [--prompt P] [--attn sdpa|eager]
                       [--warn-only]

The model: transformers' GPT2LMHeadModel(GPT2Config(n_layer=12, n_head=12, n_embd=768)),
random init (torch.manual_seed(0), built on the CPU, then moved), eval(), torch.no_grad();
n_positions 1024, or more where prompt + tokens need it (e.g. --tokens 10000).
No from_pretrained, nothing downloaded. The prompt: P token ids (default 8) from a CPU
torch.Generator seeded 1234.

--mode loop      a hand-written greedy decode of N tokens (default 400): the prompt once
                 (use_cache=True: the model makes its DynamicCache), then per token
                     out = model(next_tok, past_key_values=past, use_cache=True)
                     past = out.past_key_values      (the KV cache grows every token)
                     next_tok = out.logits[:, -1, :].argmax(-1, keepdim=True)
                     ids[:, t] = next_tok[:, 0]      (stays on the device)
                 no .item(), no attention_mask (it would make the mask code look at it on
                 the host), one sync at the end (ids.cpu()).
--mode generate  model.generate(input_ids, attention_mask=ones, max_new_tokens=N (default
                 200), do_sample=False, pad_token_id=eos): HF checks its stopping criteria
                 on the host after every token. Without --time one call; with --time a
                 warm-up call then C timed calls (default 3), each with a prompt one token
                 longer than the last (P, P+1, ...: no call repeats another's shapes).
--mode batches   an inference loop of S steps (default 200) whose batch size cycles 1..8:
                 per step x = xs[i % 16][:bs].to(device) (CPU tensors, pageable), forward,
                 out.cpu() (hashed). --model gpt2 (default): GPT-2 forward, use_cache=False,
                 on a fixed prompt length P (default 32), the last position's logits;
                 --model mlp: 8 x Linear(512, 512) + ReLU, then Linear(512, 10) (needs no
                 transformers).

--dtype bf16     the model in bfloat16 (default fp32)
--attn           attn_implementation (default sdpa, what transformers picks by default)
--time           loop: one torch.cuda.synchronize after the W warm-up tokens (default 50),
                 then the rest (N - W tokens, the final sync included) is one sample per
                 token: "per_iter_us p50 <x> p90 <y>" with p50 = p90 (the time to the
                 final sync divided by the tokens; per-token host times without a sync
                 would only measure enqueueing), also "enqueue_us p50 p90" (host time per
                 token spent in the loop body).
                 generate: per call, the call's time (ended by a torch.cuda.synchronize)
                 divided by its new tokens; p50 / p90 over the C timed calls.
                 batches: per-step host time (the .cpu() synchronizes) after W warm-up steps
                 (default 8, one full cycle).
--warn-only      torch.use_deterministic_algorithms(True, warn_only=True) (default: strict)
--no-fill        torch.utils.deterministic.fill_uninitialized_memory = False: deterministic
                 mode otherwise fills every new tensor (NaN), one kernel more per
                 allocation, which a program outside deterministic mode does not run;
                 every tensor is written before it is read, so the outputs are the same

Deterministic: fixed seeds, torch.use_deterministic_algorithms(True),
CUBLAS_WORKSPACE_CONFIG=:4096:8 set before the import of torch, TF32 off.

stdout: loop / generate: "tokens <n>", "token_ids <id> <id> ..." (every generated id, per
call for generate), "sha256 <hex>" over the ids (int64 little endian); batches: "sha256
<hex>" over every output's bytes. With --time, the timing line(s) last. Runs on the CPU too
(--device cpu, the default without CUDA), with torch 1.13: the mlp batches mode needs no
transformers.
"""
import argparse
import hashlib
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

NB = 16  # distinct input batches for --mode batches, used in turn
BATCHES = (1, 2, 3, 4, 5, 6, 7, 8)


def log(msg):
    print("torch_decode.py: " + msg, file=sys.stderr, flush=True)


def percentiles(samples_us, what="per_iter_us"):
    if not samples_us:
        return "%s p50 nan p90 nan" % what
    v = sorted(samples_us)
    n = len(v)
    return "%s p50 %.2f p90 %.2f" % (what, v[(n - 1) // 2], v[int((n - 1) * 0.9)])


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def make_gpt2(args, dtype):
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError as e:  # the CPU smoke machine has no transformers
        log("transformers not importable (%s): --mode %s --model gpt2 needs it" % (e, args.mode))
        sys.exit(3)
    # n_positions: GPT-2's 1024, or enough for a longer run (--tokens 10000)
    need = args.prompt + args.tokens + args.calls + 1
    cfg = GPT2Config(n_layer=12, n_head=12, n_embd=768, n_positions=max(1024, need))
    torch.manual_seed(0)
    try:
        model = GPT2LMHeadModel._from_config(cfg, attn_implementation=args.attn)
    except (AttributeError, TypeError, ValueError):
        cfg._attn_implementation = args.attn
        model = GPT2LMHeadModel(cfg)
    model = model.to(dtype=dtype).eval()
    log("GPT-2 %d layers, %d positions, %d params, attn %s, dtype %s" % (
        cfg.n_layer, cfg.n_positions, sum(p.numel() for p in model.parameters()),
        getattr(model.config, "_attn_implementation", "?"), dtype))
    return model


def make_mlp(dtype):
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(512, 512), nn.ReLU()]
    layers.append(nn.Linear(512, 10))
    return nn.Sequential(*layers).to(dtype=dtype).eval()


def prompt_ids(length, vocab, dev):
    g = torch.Generator().manual_seed(1234)
    return torch.randint(0, vocab, (1, length), generator=g).to(dev)


def ids_lines(ids_list):
    """token_ids lines and the sha256 over every id (int64, little endian)."""
    h = hashlib.sha256()
    n = 0
    lines = []
    for ids in ids_list:
        flat = [int(v) for v in ids.reshape(-1).tolist()]
        n += len(flat)
        lines.append("token_ids " + " ".join(str(v) for v in flat))
        for v in flat:
            h.update(int(v).to_bytes(8, "little", signed=True))
    return ["tokens %d" % n] + lines + ["sha256 " + h.hexdigest()]


def mode_loop(args, model, dev):
    vocab = model.config.vocab_size
    ids_in = prompt_ids(args.prompt, vocab, dev)
    n = args.tokens
    ids = torch.zeros((1, n), dtype=torch.long, device=dev)
    enq = []
    with torch.no_grad():
        out = model(ids_in, use_cache=True)
        past = out.past_key_values
        next_tok = out.logits[:, -1, :].argmax(-1, keepdim=True)
        log("cache: %s" % type(past).__name__)
        t_start = None
        for t in range(n):
            ids[:, t] = next_tok[:, 0]
            if t == n - 1:
                break
            if args.time and t == args.warmup:
                sync(dev)  # --time only: the timed part starts drained
                t_start = time.perf_counter_ns()
            t0 = time.perf_counter_ns()
            out = model(next_tok, past_key_values=past, use_cache=True)
            past = out.past_key_values
            next_tok = out.logits[:, -1, :].argmax(-1, keepdim=True)
            if args.time and t >= args.warmup:
                enq.append((time.perf_counter_ns() - t0) / 1000.0)
        host_ids = ids.cpu()  # the one sync
    timed = []
    if args.time:
        t_end = time.perf_counter_ns()
        steps = n - 1 - args.warmup
        timed = [(t_end - t_start) / 1000.0 / steps]
    return ids_lines([host_ids]), timed, enq


def mode_generate(args, model, dev):
    vocab = model.config.vocab_size
    eos = model.config.eos_token_id
    calls = [args.prompt] if not args.time else [args.prompt + i for i in range(1 + args.calls)]
    outs, timed = [], []
    with torch.no_grad():
        for ci, plen in enumerate(calls):
            ids_in = prompt_ids(plen, vocab, dev)
            mask = torch.ones_like(ids_in)
            sync(dev)
            t0 = time.perf_counter_ns()
            gen = model.generate(ids_in, attention_mask=mask, max_new_tokens=args.tokens,
                                 do_sample=False, pad_token_id=eos)
            sync(dev)
            t1 = time.perf_counter_ns()
            new = gen[:, plen:].cpu()
            outs.append(new)
            if args.time and ci > 0:  # call 0 is the warm-up
                timed.append((t1 - t0) / 1000.0 / max(1, new.shape[1]))
    return ids_lines(outs), timed, []


def mode_batches(args, dev, dtype):
    g = torch.Generator().manual_seed(1234)
    if args.model == "gpt2":
        model = make_gpt2(args, dtype).to(dev)
        vocab = model.config.vocab_size
        xs = [torch.randint(0, vocab, (max(BATCHES), args.prompt), generator=g)
              for _ in range(NB)]
    else:
        model = make_mlp(dtype).to(dev)
        xs = [torch.randn(max(BATCHES), 512, generator=g).to(dtype) for _ in range(NB)]
    h = hashlib.sha256()
    times = []
    with torch.no_grad():
        for i in range(args.steps):
            bs = BATCHES[i % len(BATCHES)]
            t0 = time.perf_counter_ns()
            x = xs[i % NB][:bs].to(dev)
            if args.model == "gpt2":
                y = model(x, use_cache=False).logits[:, -1, :]
            else:
                y = model(x)
            yc = y.cpu()  # synchronizes
            t1 = time.perf_counter_ns()
            if yc.dtype == torch.bfloat16:
                yc = yc.view(torch.int16)
            h.update(yc.contiguous().numpy().tobytes())
            if i >= args.warmup:
                times.append((t1 - t0) / 1000.0)
    sync(dev)
    return ["steps %d" % args.steps, "sha256 " + h.hexdigest()], times, []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("loop", "generate", "batches"), default="loop")
    ap.add_argument("--tokens", type=int, default=None,
                    help="new tokens (loop 400, generate 200)")
    ap.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--model", choices=("gpt2", "mlp"), default="gpt2",
                    help="batches mode only")
    ap.add_argument("--device", choices=("cuda", "cpu"), default=None)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--warmup", type=int, default=None,
                    help="loop: tokens (50), batches: steps (8)")
    ap.add_argument("--calls", type=int, default=3, help="generate --time: timed calls")
    ap.add_argument("--steps", type=int, default=200, help="batches: steps")
    ap.add_argument("--prompt", type=int, default=None,
                    help="prompt length (loop / generate 8, batches 32)")
    ap.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa")
    ap.add_argument("--warn-only", action="store_true")
    ap.add_argument("--no-fill", action="store_true")
    args = ap.parse_args()
    if args.tokens is None:
        args.tokens = 200 if args.mode == "generate" else 400
    if args.warmup is None:
        args.warmup = 8 if args.mode == "batches" else 50
    if args.prompt is None:
        args.prompt = 32 if args.mode == "batches" else 8
    if args.mode == "loop" and args.time and args.warmup >= args.tokens - 1:
        ap.error("--warmup must be below --tokens - 1")
    if args.mode == "batches" and args.time and args.steps <= args.warmup:
        ap.error("--steps must exceed --warmup")
    if args.tokens < 1 or args.prompt < 1 or args.calls < 1:
        ap.error("--tokens, --prompt and --calls must be positive")

    dev = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.use_deterministic_algorithms(True, warn_only=args.warn_only)
    if args.no_fill:
        torch.utils.deterministic.fill_uninitialized_memory = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    log("torch %s, device %s, mode %s" % (torch.__version__, dev, args.mode))

    if args.mode == "batches":
        lines, timed, enq = mode_batches(args, dev, dtype)
    else:
        model = make_gpt2(args, dtype).to(dev)
        if args.mode == "loop":
            lines, timed, enq = mode_loop(args, model, dev)
        else:
            lines, timed, enq = mode_generate(args, model, dev)
    for line in lines:
        print(line)
    if args.time:
        print(percentiles(timed))
        if enq:
            print(percentiles(enq, "enqueue_us"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
