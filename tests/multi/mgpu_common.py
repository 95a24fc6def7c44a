"""mgpu_common.py -- what ddp_train.py and allreduce_loop.py share: the environment they
force, the rank's files, the delayed rank, step timing and percentiles, process group
set-up and end.

Nothing here imports torch at module level: the programs' --help works without it.
"""
import hashlib
import os
import random
import sys
import time

# Multicast objects (NVLS) must never be used on the machines these programs run on:
# forced here, whatever the caller's environment says, before torch or NCCL is loaded.
FORCED_ENV = (
    ("NCCL_NVLS_ENABLE", "0"),
    ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
    ("NVSHMEM_DISABLE_NVLS", "1"),
)


def force_env():
    for key, value in FORCED_ENV:
        os.environ[key] = value
    # cuBLAS is deterministic only with a fixed workspace; read when cuBLAS starts
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def dist_env():
    """rank, local rank, world size as torchrun sets them (0, 0, 1 when run alone)."""
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", str(rank)))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return rank, local, world


def add_common_args(ap):
    ap.add_argument("--out-dir", default="",
                    help="write rank<R>.out (the result lines) and rank<R>.pid (written "
                         "first) there; default: result lines on stdout, prefixed by rank")
    ap.add_argument("--bench", action="store_true",
                    help="time every step / iteration between two torch.cuda.synchronize() "
                         "calls; prints 'per_iter_us p50 X p90 Y' and 'median_step_us X' over "
                         "the ones after --warmup")
    ap.add_argument("--time-every", type=int, default=1,
                    help="--bench: synchronize and time every K steps / iterations, each "
                         "sample the K's mean (default 1; a loop that never synchronizes "
                         "otherwise keeps K of them in one run of work)")
    ap.add_argument("--warmup", type=int, default=-1,
                    help="steps / iterations left out of the timing (default: the "
                         "program's bench default)")
    ap.add_argument("--delay-rank", type=int, default=-1,
                    help="this rank sleeps a random 0..--delay-max s at one random step and "
                         "point in it (the others wait in their collectives)")
    ap.add_argument("--delay-max", type=float, default=2.0,
                    help="longest sleep of --delay-rank, in seconds (default 2)")
    ap.add_argument("--cpus", default="",
                    help="pin the ranks to these CPUs (a list such as 2-9 or 2,3,6-9), "
                         "each local rank to its own equal share, in order; default: "
                         "not pinned")
    ap.add_argument("--pg-timeout", type=int, default=100,
                    help="process group timeout in seconds: a collective stuck this long "
                         "fails with the NCCL watchdog's report (default 100)")


class RankOut:
    """The rank's result lines: kept, written at the end (one file per rank)."""

    def __init__(self, out_dir, rank, world):
        self.rank = rank
        self.lines = []
        self.path = os.path.join(out_dir, "rank%d.out" % rank) if out_dir else ""
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)
            with open(os.path.join(out_dir, "rank%d.pid" % rank), "w") as f:
                f.write("%d\n" % os.getpid())
        self.line("rank %d world %d pid %d" % (rank, world, os.getpid()))

    def line(self, text):
        self.lines.append(text)

    def close(self):
        self.line("done")
        if self.path:
            tmp = self.path + ".tmp"
            with open(tmp, "w") as f:
                f.write("\n".join(self.lines) + "\n")
            os.replace(tmp, self.path)
        else:
            # one write per line: the ranks share torchrun's stdout
            for text in self.lines:
                os.write(1, ("[rank %d] %s\n" % (self.rank, text)).encode())


def log(rank, text):
    sys.stderr.write("rank %d: %s\n" % (rank, text))
    sys.stderr.flush()


class Delay:
    """--delay-rank: one sleep of a random length at a random step and point of this rank.
    The choice is random per run (not seeded): the results must not depend on it."""

    def __init__(self, args, rank, steps, points):
        self.step = -1
        self.point = None
        self.secs = 0.0
        self.rank = rank
        if args.delay_rank != rank or steps < 1:
            return
        rnd = random.Random(os.urandom(16))
        self.step = rnd.randrange(steps)
        self.point = rnd.choice(points)
        self.secs = rnd.uniform(0.0, max(0.0, args.delay_max))

    def at(self, step, point):
        if step == self.step and point == self.point:
            log(self.rank, "delay: sleeping %.3f s at step %d, %s" % (self.secs, step, point))
            time.sleep(self.secs)


def percentiles(times_ns):
    """'per_iter_us p50 X p90 Y' and 'median_step_us X' lines (nan when no sample)."""
    if not times_ns:
        return ["per_iter_us p50 nan p90 nan", "median_step_us nan"]
    v = sorted(t / 1000.0 for t in times_ns)
    n = len(v)
    p50 = v[(n - 1) // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0
    p90 = v[int((n - 1) * 0.9)]
    return ["per_iter_us p50 %.2f p90 %.2f" % (p50, p90),
            "median_step_us %.2f samples %d" % (p50, n)]


def parse_cpus(text):
    """The CPUs of a list such as 2-9 or 2,3,6-9, in order, each once."""
    cpus = []
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()) or int(hi or lo) < int(lo):
            raise SystemExit("--cpus: bad list %r (e.g. 2-9 or 2,3,6-9)" % text)
        cpus += [c for c in range(int(lo), int(hi or lo) + 1) if c not in cpus]
    return cpus


def rank_cpus(text, local, nlocal):
    """Local rank `local`'s share of --cpus among nlocal ranks: an equal slice, in
    order (the whole list when it has fewer CPUs than ranks)."""
    cpus = parse_cpus(text)
    share = len(cpus) // nlocal
    return cpus[local * share:(local + 1) * share] if share else cpus


def pin(args, rank, local):
    """--cpus: this process and the threads it starts from now on, on its share."""
    if not args.cpus:
        return
    nlocal = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
    cpus = rank_cpus(args.cpus, local, nlocal)
    os.sched_setaffinity(0, cpus)
    log(rank, "pinned to CPUs %s" % ",".join(map(str, cpus)))


def start(args, what):
    """The rank's start: the forced environment, its rank and files, torch imported
    after them, the NCCL process group, deterministic algorithms.  Returns torch, the
    torch.distributed module, the device, rank, local rank, world size, RankOut."""
    force_env()
    rank, local, world = dist_env()
    out = RankOut(args.out_dir, rank, world)
    log(rank, "starting (%s)" % what)
    pin(args, rank, local)
    import torch
    dist, dev = init_process_group(torch, args, local)
    deterministic(torch)
    return torch, dist, dev, rank, local, world, out


class StepTimer:
    """--bench: the wall time of every --time-every steps between two
    torch.cuda.synchronize() calls, per step, those that start after --warmup kept in
    .times; nothing without --bench."""

    def __init__(self, torch, dev, args):
        self.torch, self.dev, self.args = torch, dev, args
        self.times, self.t0, self.n = [], 0, 0
        if args.time_every < 1:
            raise SystemExit("--time-every must be >= 1")

    def start(self):
        if self.args.bench and self.n == 0:
            self.torch.cuda.synchronize(self.dev)
            self.t0 = time.perf_counter_ns()

    def stop(self, step):
        if not self.args.bench:
            return
        self.n += 1
        if self.n < self.args.time_every:
            return
        self.torch.cuda.synchronize(self.dev)
        if step + 1 - self.n >= self.args.warmup:
            self.times.append((time.perf_counter_ns() - self.t0) // self.n)
        self.n = 0


def finish(args, dist, out, rank, timer):
    """The timing lines (--bench), then the process group's end and the rank's files."""
    if args.bench:
        for text in percentiles(timer.times):
            out.line(text)
    dist.barrier()
    dist.destroy_process_group()
    out.close()
    log(rank, "done")


def tensors_sha256(torch, tensors):
    """sha256 over the bytes of the tensors, in order (copied to the host)."""
    digest = hashlib.sha256()
    for t in tensors:
        host = t.detach().to("cpu").contiguous().view(-1).view(torch.uint8)
        digest.update(host.numpy().tobytes())
    return digest.hexdigest()


def deterministic(torch):
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def init_process_group(torch, args, local):
    """NCCL process group on cuda:<local>, its communicator made at once (device_id)."""
    import datetime
    import torch.distributed as dist
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    kw = {"backend": "nccl", "timeout": datetime.timedelta(seconds=args.pg_timeout)}
    try:
        dist.init_process_group(device_id=dev, **kw)
    except TypeError:
        dist.init_process_group(**kw)
    return dist, dev
