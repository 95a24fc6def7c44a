#!/usr/bin/env python3
"""gen_eager.py -- synthetic libautograph traces of eager multi-stream work, with the
stream-order records of analyzer/FORMAT.md section 1d, for the analyzer's tests.

    gen_eager.py scenario OUT.json NAME [--n N] [--wait] [--legacy] [--no-order]
                                        [--no-driver] [--every K] [--separate]
    gen_eager.py malformed OUT.json KIND     prints "OFFSET<TAB>PHRASE" of the error
    gen_eager.py bench OUT.json --mb N       a large eager trace (make bench-analyzer)
    gen_eager.py prop ANALYZER [--cases N] [--seed S] [--keep DIR]

A small program is simulated.  The host makes calls one after the other, each with
the next correlation: kernel launches (a "cuda_driver" record whose end is when the
kernel was submitted), event records, stream waits and host synchronizations.  A
kernel is ready when its driver call has returned and its predecessors have ended:
the previous kernel of its stream, what the events it waits for captured, and for
streams without stream_info (the legacy default stream) the implicit order.  It starts
when it is ready and its channel is free: channels are FIFO, so kernels of
independent streams that share a channel are serialized (false dependencies).

Scenarios (NAME):
  two_streams  kernel A (stream 14, 20 us) then B (stream 15), both on channel 3: B
               starts exactly at A's end.  --wait: B's stream waits for an event
               recorded after A (a true dependency); --legacy: neither stream has
               stream_info (never false), a context synchronize at the end;
               --no-order: no section 1d records at all
  syncs        A, B; context synchronize; C, D; stream synchronize; E: 3 windows
  repeat       two_streams --n times, each followed by a context synchronize (one
               shape); --every K: every K-th time with the event wait (a second shape)
  graph_between  A (stream 14, channel 3), a graph launched on 14 (its record on an
               internal stream, channel 4), C (stream 16, channel 3, after A), B (stream
               14, channel 3): B starts at C's end, and was waiting for the graph
  long         --n kernels alternating over two non-blocking streams on two channels,
               no host synchronization: each stream's kernels queue up back to back
               (n - 2 true serializations per window); --no-driver: no driver records
  paced        the host forks --n non-blocking streams from an event on stream 20, one
               after the other (a wait, then two 30 us kernels), every call taking 4 us,
               then a context synchronize: all on channel 3, each stream's first kernel
               waits for the previous stream's last (false dependencies); --separate:
               a channel per stream (the span without them); with --no-driver only the
               waits and the synchronize carry host times
Malformed KINDs: wait_sync_id, record_corr, info_flags, info_stream, driver_dur,
  sync_event, wait_ts; and ignored_* (a malformed key that event kind does not use: no error,
  prints "-").

The property test writes random programs (streams with and without stream_info, some
"without stream_info" streams not legacy at all, events, waits on unknown events, host
synchronizations, graph launches, two devices, random channels, random --window-max),
runs the analyzer (--json) and checks its eager serializations against the simulation:
every pair of eager records consecutive on a channel within epsilon in one (sub-)window
is reported; one with a path in the program through eager records of its device is
"true"; "false" only without any path and when B started more than epsilon after it
was ready; and where the program is exactly what the analyzer assumes (no unknown
events, every stream without stream_info legacy, no graph launches, one device), the
classes are exactly those.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

EPS_NS = 2000
LAUNCH_NS = 3000        # a driver call's duration
HOST_GAP_NS = 1000      # host time between calls
PID = 4242


def us(ns):
    return "%d.%03d" % divmod(ns, 1000) if ns >= 0 else "-" + us(-ns)


class Program:
    """The simulated program: its calls, their records, and the true dependencies."""

    def __init__(self, channels=None, legacy=(), nb=(), fake_legacy=(), devices=None,
                 t0=1_000_000):
        self.now = t0
        self.devices = devices or {}        # stream -> device (default 0)
        self.corr = 100
        self.sync_id = 500
        self.channels = channels or {}
        self.legacy = set(legacy)           # no stream_info, legacy semantics
        self.fake_legacy = set(fake_legacy) # no stream_info, but non-blocking
        self.nb = set(nb)                   # stream_info non_blocking (others: default)
        self.free = {}                      # channel -> when its last kernel ends
        self.last = {}                      # stream -> its last kernel
        self.pending = {}                   # stream -> kernels its next one waits for
        self.legacy_since = {}              # stream -> legacy kernels since its last
        self.events = {}                    # event -> (sync id, captured kernels)
        self.kernels = []                   # dicts: corr stream channel name drv start end preds
        self.calls = []                     # (kind, dict) in host order
        self.unknown_waits = 0

    def streams(self):
        return sorted(set(self.channels) | set(self.last))

    def info_streams(self):
        return [s for s in self.streams() if s not in self.legacy and s not in self.fake_legacy]

    def is_legacy(self, s):
        return s in self.legacy

    def blocking(self, s):
        """Not known to be non_blocking in the program's semantics."""
        return s not in self.nb and s not in self.fake_legacy

    def device(self, s):
        return self.devices.get(s, 0)

    def next_corr(self):
        self.corr += 1
        return self.corr

    def implicit(self, s):
        """What work on stream s waits for implicitly (legacy semantics)."""
        if self.is_legacy(s):
            return {self.last[t] for t in self.last
                    if t != s and self.blocking(t) and self.device(t) == self.device(s)}
        if self.blocking(s):
            return set(self.legacy_since.get(s, ()))
        return set()

    def launch(self, s, name, dur_ns, graph=False):
        """A kernel launched on stream s (graph: a one-node graph launched there, whose
        record names the graph and an internal stream, as CUPTI's do)."""
        corr = self.next_corr()
        drv = (self.now, self.now + LAUNCH_NS)
        self.now += LAUNCH_NS + HOST_GAP_NS
        preds = set(self.pending.pop(s, set())) | self.implicit(s)
        if s in self.last:
            preds.add(self.last[s])
        ready = max([drv[1]] + [self.kernels[p]["end"] for p in preds])
        ch = (self.device(s), self.channels.get(s, 0))
        start = max(ready, self.free.get(ch, 0))
        k = dict(corr=corr, stream=s, device=ch[0], channel=ch[1], name=name, drv=drv,
                 start=start, end=start + dur_ns, preds=preds, ready=ready, graph=graph)
        idx = len(self.kernels)
        self.kernels.append(k)
        self.free[ch] = k["end"]
        self.last[s] = idx
        self.legacy_since[s] = []
        if self.is_legacy(s):
            for t in self.streams():
                if t != s and self.blocking(t) and self.device(t) == self.device(s):
                    self.legacy_since.setdefault(t, []).append(idx)
        self.calls.append(("kernel", idx))
        return idx

    def record(self, event, s):
        corr = self.next_corr()
        self.sync_id += 1
        captured = self.implicit(s) | ({self.last[s]} if s in self.last else set())
        self.events[event] = (self.sync_id, captured)
        self.calls.append(("record", dict(corr=corr, stream=s, event=event, device=self.device(s),
                                          sync=self.sync_id, ts=self.now)))
        self.now += HOST_GAP_NS

    def wait(self, s, event):
        corr = self.next_corr()
        if event in self.events:
            sync, captured = self.events[event]
            self.pending.setdefault(s, set()).update(captured)
        else:
            sync = 900000 + corr            # recorded before tracing began
            self.unknown_waits += 1
        self.calls.append(("wait", dict(corr=corr, stream=s, event=event, sync=sync,
                                        device=self.device(s), ts=self.now)))
        self.now += HOST_GAP_NS

    def host_sync(self, kind="context synchronize", stream=None):
        """The host waits for every kernel, or for one stream's (work on the other
        streams goes on past the end of the window)."""
        corr = self.next_corr()
        ends = [k["end"] for k in self.kernels if stream is None or k["stream"] == stream]
        self.calls.append(("sync", dict(corr=corr, name=kind, ts=self.now)))   # its start
        self.now = max([self.now] + ends) + 2 * HOST_GAP_NS


def kernel_events(p, k, driver=True):
    stream, graph = k["stream"], ""
    if k.get("graph"):
        stream, graph = 1000 + k["stream"], ', "graph id": 7, "graph node id": %d' % (7 << 32)
    dev = k.get("device", 0)
    ev = ['{"ph": "X", "cat": "kernel", "name": "%s", "pid": %d, "tid": %d, "ts": %s, '
          '"dur": %s, "args": {"device": %d, "stream": %d, "correlation": %d, "channel": %d, '
          '"channel type": 1%s}}' % (k["name"], dev, stream, us(k["start"]),
                                     us(k["end"] - k["start"]), dev, stream, k["corr"],
                                     k["channel"], graph)]
    if driver:
        ev.append('{"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": %d, '
                  '"tid": %d, "ts": %s, "dur": %s, "args": {"correlation": %d, "cbid": 307, '
                  '"result": 0}}' % (PID, PID, us(k["drv"][0]), us(k["drv"][1] - k["drv"][0]),
                                     k["corr"]))
    return ev


def order_event(kind, c):
    if kind == "record":
        return ('{"ph": "i", "s": "t", "cat": "cuda_event_record", "name": "event record", '
                '"pid": %d, "tid": %d, "ts": %s, "args": {"stream": %d, "correlation": %d, '
                '"event": %d, "sync id": %d, "note": {"unknown": [1, "x"]}}}'
                % (c.get("device", 0), c["stream"], us(c["ts"]), c["stream"], c["corr"],
                   c["event"], c["sync"]))
    if kind == "wait":
        return ('{"ph": "i", "s": "t", "cat": "cuda_sync", "name": "stream wait event", '
                '"pid": %d, "tid": %d, "ts": %s, "args": {"stream": %d, "correlation": %d, '
                '"event": %d, "sync id": %d}}'
                % (c.get("device", 0), c["stream"], us(c["ts"]), c["stream"], c["corr"],
                   c["event"], c["sync"]))
    return ('{"ph": "i", "s": "p", "cat": "cuda_sync", "name": "%s", "pid": %d, "tid": %d, '
            '"ts": %s, "args": {"correlation": %d}}' % (c["name"], PID, PID, us(c["ts"]),
                                                      c["corr"]))


def stream_info(p, s):
    return ('{"ph": "M", "name": "stream_info", "pid": %d, "tid": %d, "args": {"stream": %d, '
            '"device": %d, "flags": "%s", "priority": 0}}'
            % (p.device(s), s, s, p.device(s), "non_blocking" if s in p.nb else "default"))


def trace_events(p, order=True, driver=True, rnd=None):
    ev = [stream_info(p, s) for s in p.info_streams()] if order else []
    for kind, c in p.calls:
        if kind == "kernel":
            ev += kernel_events(p, p.kernels[c], driver)
        elif order:
            ev.append(order_event(kind, c))
    if rnd is not None:
        rnd.shuffle(ev)                 # the analyzer orders by correlation itself
    return ev


def write_trace(path, events):
    with open(path, "w") as f:
        f.write('{"otherData": {"producer": "libautograph", "version": 1},\n'
                ' "displayTimeUnit": "ns",\n "traceEvents": [\n  ')
        f.write(",\n  ".join(events))
        f.write("\n ]}\n")


# ---- scenarios ----------------------------------------------------------------------

def two_streams(p, wait=False, tag=""):
    p.launch(14, "producer_a" + tag, 20000)
    if wait:
        p.record(1, 14)
        p.wait(15, 1)
    p.launch(15, "consumer_b" + tag, 5000)


def paced(p, n, separate):
    """See "paced" above: a host that makes its calls at one pace (4 us each)."""
    streams = [21 + i for i in range(n)]
    p.nb |= set(streams) | {20}
    p.channels = {s: 3 + (i if separate else 0) for i, s in enumerate(streams)}
    p.channels[20] = 3
    p.record(1, 20)
    p.now += LAUNCH_NS
    for s in streams:
        p.wait(s, 1)
        p.now += LAUNCH_NS
        p.launch(s, "k1", 30000)
        p.launch(s, "k2", 30000)
    p.host_sync()


def scenario(args):
    legacy = (14, 15) if args.legacy else ()
    p = Program(channels={14: 3, 15: 3}, legacy=legacy, nb=() if args.legacy else (14, 15))
    if args.name == "two_streams":
        two_streams(p, args.wait)
        if args.legacy:
            p.host_sync()               # a section 1d record: the trace has stream order
    elif args.name == "syncs":
        two_streams(p)
        p.host_sync("context synchronize")
        p.launch(14, "c", 4000)
        p.launch(15, "d", 4000)
        p.host_sync("stream synchronize")
        p.launch(14, "e", 4000)
    elif args.name == "repeat":
        for i in range(args.n):
            two_streams(p, args.every > 0 and i % args.every == args.every - 1)
            p.host_sync()
    elif args.name == "graph_between":
        p.channels = {14: 3, 16: 3}
        p.nb |= {16}
        p.launch(14, "a", 20000)
        p.channels[14] = 4
        p.launch(14, "graph_g", 30000, graph=True)
        p.launch(16, "c", 30000)
        p.channels[14] = 3
        p.launch(14, "b", 5000)
    elif args.name == "paced":
        paced(p, args.n, args.separate)
    elif args.name == "long":
        p.channels = {14: 1, 15: 2}
        for i in range(args.n):
            p.launch(14 + i % 2, "k%d" % (i % 7), 6000 + 37 * (i % 11))
    else:
        sys.exit("gen_eager.py: unknown scenario %s" % args.name)
    write_trace(args.out, trace_events(p, not args.no_order, not args.no_driver))


# ---- a large trace, written as it is simulated --------------------------------------

def bench(args):
    """--mb megabytes of eager work: 4 streams (two non_blocking, one default, one
    without stream_info) over 3 channels, an event wait every 10 launches, a host
    synchronization every 2000 calls, except in every 4th stretch of 100000 calls
    (sub-windows); driver records for every launch."""
    rnd = random.Random(args.seed)
    streams = {20: (0, "non_blocking"), 21: (1, "non_blocking"), 22: (1, "default"), 7: (2, None)}
    end_of, free, ev = {s: 0 for s in streams}, {}, []
    now, corr, sync_id, size, limit = 1_000_000, 100, 500, 0, args.mb * 1_000_000
    out = open(args.out, "w")
    out.write('{"otherData": {"producer": "libautograph", "version": 1}, "traceEvents": [\n')
    first = [s for s in streams if streams[s][1]]
    ev += [stream_info(Program(nb=[s for s in first if streams[s][1] == "non_blocking"]), s)
           for s in first]
    waited = None
    while size < limit:
        corr += 1
        if corr % 2000 < 2 and (corr // 100000) % 4 != 3:
            now = max([now] + list(end_of.values())) + HOST_GAP_NS
            ev.append(order_event("sync", dict(corr=corr, name="context synchronize", ts=now)))
        elif corr % 10 == 0:
            sync_id += 1
            src, dst = rnd.sample(sorted(streams), 2)
            ev.append(order_event("record", dict(corr=corr, stream=src, event=1, sync=sync_id,
                                                 ts=now)))
            corr += 1
            ev.append(order_event("wait", dict(corr=corr, stream=dst, event=1, sync=sync_id,
                                               ts=now)))
            waited = (dst, end_of[src])
        else:
            s = rnd.choice(sorted(streams))
            ch = streams[s][0]
            ready = max(now + LAUNCH_NS, end_of[s], waited[1] if waited and waited[0] == s else 0)
            start = max(ready, free.get(ch, 0))
            k = dict(name=KERNEL_NAMES[corr % 5], stream=s, start=start,
                     end=start + rnd.choice([2000, 5000, 9000]), corr=corr, channel=ch,
                     drv=(now, now + LAUNCH_NS))
            free[ch] = end_of[s] = k["end"]
            waited = None if waited and waited[0] == s else waited
            ev += kernel_events(None, k)
        now += LAUNCH_NS + HOST_GAP_NS
        if len(ev) > 4000:
            chunk = ",\n".join(ev) + ",\n"
            out.write(chunk)
            size += len(chunk)
            ev = []
    ev.append(order_event("sync", dict(corr=corr + 1, name="context synchronize", ts=now)))
    out.write(",\n".join(ev) + "\n]}\n")
    out.close()


KERNEL_NAMES = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "ampere_sgemm_128x64_tn",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
    "MeanOps<float, float, float, float>, unsigned int, float, 4> >",
    "triton_poi_fused_add_mul_sigmoid_0",
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
]


# ---- malformed section 1d values ----------------------------------------------------

MALFORMED = {
    # kind: (event text with @ before the bad value, phrase of the error)
    "wait_sync_id": ('{"ph": "i", "cat": "cuda_sync", "name": "stream wait event", "pid": 0, '
                     '"tid": 15, "ts": 1.0, "args": {"stream": 15, "correlation": 7, '
                     '"sync id": @-3}}', '"sync id": expected a non-negative integer (in a '
                     'cuda_sync event)'),
    "record_corr": ('{"ph": "i", "cat": "cuda_event_record", "name": "event record", "pid": 0, '
                    '"ts": 1.0, "args": {"stream": 14, "correlation": @1.5, "sync id": 3}}',
                    '"correlation": expected an integer (in a cuda_event_record event)'),
    "info_flags": ('{"ph": "M", "name": "stream_info", "pid": 0, "args": {"stream": 14, '
                   '"flags": @"sometimes", "priority": 0}}',
                   '"flags": expected "default" or "non_blocking" (in a stream_info event)'),
    "info_stream": ('{"ph": "M", "name": "stream_info", "pid": 0, "args": {"stream": @1e3}}',
                    '"stream": expected an integer (in a stream_info event)'),
    "sync_event": ('{"ph": "i", "cat": "cuda_sync", "name": "event synchronize", "pid": 1, '
                   '"ts": 1.0, "args": {"correlation": 9, "event": @-1}}',
                   '"event": expected a non-negative integer (in a cuda_sync event)'),
    "wait_ts": ('{"ph": "i", "cat": "cuda_sync", "name": "stream wait event", "pid": 0, '
                '"tid": 15, "ts": @1e30, "args": {"stream": 15, "correlation": 7}}',
                '"ts": number out of range (in a cuda_sync event)'),
    "driver_dur": ('@{"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, '
                   '"ts": 1.0, "dur": -2.5, "args": {"correlation": 9}}',
                   'a cuda_driver or cuda_runtime event with a negative "dur"'),
    # keys that event kind does not use: ignored
    "ignored_graph_id": ('{"ph": "i", "cat": "cuda_sync", "name": "stream wait event", '
                         '"pid": 0, "args": {"stream": 15, "correlation": 7, '
                         '"graph id": -1}}', None),
    "ignored_sync_id": ('{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "ts": 1.0, '
                        '"dur": 1.0, "args": {"stream": 15, "correlation": 7, '
                        '"sync id": -1, "flags": "odd"}}', None),
    "ignored_unknown_sync": ('{"ph": "i", "cat": "cuda_sync", "name": "Unknown", "pid": 0, '
                             '"args": {"correlation": 1.5}}', None),
}


def malformed(args):
    text, phrase = MALFORMED[args.kind]
    head = ('{"traceEvents": [\n  {"ph": "M", "name": "stream_info", "pid": 0, "args": '
            '{"stream": 15, "device": 0, "flags": "default"}},\n  ')
    body = head + text
    with open(args.out, "w") as f:
        f.write(body.replace("@", "") + "\n]}\n")
    print("-" if phrase is None else "%d\t%s" % (body.index("@"), phrase))


# ---- property test ------------------------------------------------------------------

def random_program(rnd):
    n_streams = rnd.randint(2, 5)
    streams = [20 + i for i in range(n_streams)]
    kinds = {s: rnd.choice(["nb", "nb", "default", "legacy", "fake"]) for s in streams}
    exact = rnd.random() < 0.5
    if exact:                               # what the analyzer assumes, exactly
        kinds = {s: ("legacy" if k == "fake" else k) for s, k in kinds.items()}
    n_channels = rnd.randint(1, n_streams)
    two_devices = not exact and rnd.random() < 0.3
    p = Program(channels={s: rnd.randrange(n_channels) for s in streams},
                legacy=[s for s in streams if kinds[s] == "legacy"],
                nb=[s for s in streams if kinds[s] == "nb"],
                fake_legacy=[s for s in streams if kinds[s] == "fake"],
                devices={s: rnd.randrange(2) if two_devices else 0 for s in streams})
    for _ in range(rnd.randint(2, 40)):
        r = rnd.random()
        s = rnd.choice(streams)
        if r < 0.06 and not exact:     # a graph launched on s (unknown stream)
            p.launch(s, "graph", rnd.choice([3000, 20000]), graph=True)
        elif r < 0.6:
            p.launch(s, "k%d" % rnd.randrange(4), rnd.choice([1000, 3000, 8000, 20000]))
        elif r < 0.75:
            p.record(rnd.randrange(3), s)
        elif r < 0.9 and exact:
            if p.events:                # only events recorded in the trace
                p.wait(s, rnd.choice(sorted(p.events)))
        elif r < 0.9:
            p.wait(s, rnd.randrange(4))     # event 3 never recorded: an unknown event
        elif r < 0.95:
            p.host_sync("stream synchronize", s)
        else:
            p.host_sync(rnd.choice(["context synchronize", "event synchronize"]))
    p.host_sync()                       # the trace has a section 1d record
    return p, exact and p.unknown_waits == 0


def windows_of(p, window_max):
    """Eager kernel indices per (sub-)window (per device), by correlation."""
    wins, cur = [], {}
    for kind, c in p.calls:
        if kind == "sync":
            wins += cur.values()
            cur = {}
        elif kind == "kernel" and not p.kernels[c]["graph"]:
            w = cur.setdefault(p.kernels[c]["device"], [])
            if len(w) == window_max:
                wins.append(w)
                w = cur[p.kernels[c]["device"]] = []
            w.append(c)
    wins += cur.values()
    return [w for w in wins if w]


def ancestors(p, in_window=False):
    """anc[k]: the kernels with a path to k (in_window: only paths that an eager window
    can hold: through eager kernels of k's device)."""
    anc = []
    for k in p.kernels:
        s = set()
        for q in k["preds"]:
            Q = p.kernels[q]
            if not in_window or (not Q["graph"] and Q["device"] == k["device"]):
                s.add(q)
                s |= anc[q]
        anc.append(s)
    return anc


def expected_sers(p, window_max):
    """(from corr, to corr) -> (gap, class) the analyzer must report."""
    anc, out = ancestors(p), {}
    for win in windows_of(p, window_max):
        pos = {k: i for i, k in enumerate(win)}
        by_ch = {}
        for k in win:
            by_ch.setdefault(p.kernels[k]["channel"], []).append(k)
        for ks in by_ch.values():
            ks.sort(key=lambda k: (p.kernels[k]["start"], pos[k]))
            for a, b in zip(ks, ks[1:]):
                A, B = p.kernels[a], p.kernels[b]
                gap = B["start"] - A["end"]
                if abs(gap) > EPS_NS:
                    continue
                cls = ("true" if a in anc[b] else
                       "false" if B["start"] - B["ready"] > EPS_NS else "ambiguous")
                out[(A["corr"], B["corr"])] = cls
    return out


def reported_sers(report):
    out = {}
    for g in report["groups"]:
        if "eager_window" not in g:
            continue
        for r in g["replays"]:
            for s in r["serializations"]:
                out[(s["from_correlation"], s["to_correlation"])] = s["class"]
    return out


def check_case(p, exact, report, window_max):
    want, got = expected_sers(p, window_max), reported_sers(report)
    if set(want) != set(got):
        return "serializations differ: expected %s, reported %s" % (sorted(want), sorted(got))
    anc, eager_anc = ancestors(p), ancestors(p, in_window=True)
    by_corr = {k["corr"]: i for i, k in enumerate(p.kernels)}
    for key, cls in got.items():
        a, b = by_corr[key[0]], by_corr[key[1]]
        B = p.kernels[b]
        if a in eager_anc[b] and cls != "true":
            return "%s: a path in the program, reported %s" % (key, cls)
        if cls == "false" and (a in anc[b] or B["start"] - B["ready"] <= EPS_NS):
            return "%s: reported false, but B was not ready more than epsilon early" % (key,)
        if exact and cls != want[key]:
            return "%s: expected %s, reported %s" % (key, want[key], cls)
    return None


def prop(args):
    rnd = random.Random(args.seed)
    tmp = args.keep or tempfile.mkdtemp(prefix="gen_eager.")
    os.makedirs(tmp, exist_ok=True)
    counts = {"true": 0, "false": 0, "ambiguous": 0}
    exact_cases = 0
    for case in range(args.cases):
        p, exact = random_program(rnd)
        window_max = rnd.choice([65536, 65536, 3, 7])
        trace, out = os.path.join(tmp, "t%d.json" % case), os.path.join(tmp, "r%d.json" % case)
        write_trace(trace, trace_events(p, rnd=rnd))
        cmd = [args.analyzer, "-q", "--json", out, "--window-max", str(window_max), trace]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode not in (0, 3):     # 3: the report leaves something undecided
            print("gen_eager prop: case %d: analyzer failed: %s" % (case, res.stderr))
            return 1
        with open(out) as f:
            report = json.load(f)
        err = check_case(p, exact, report, window_max)
        if err is not None:
            print("gen_eager prop: case %d (%s, window max %d, exact %s): %s"
                  % (case, trace, window_max, exact, err))
            return 1
        for cls in reported_sers(report).values():
            counts[cls] += 1
        exact_cases += exact
        if not args.keep:
            os.remove(trace)
            os.remove(out)
    if not args.keep:
        os.rmdir(tmp)
    print("gen_eager prop: %d cases (%d exact), %d serializations (%d true, %d false, "
          "%d ambiguous): ok" % (args.cases, exact_cases, sum(counts.values()),
                                 counts["true"], counts["false"], counts["ambiguous"]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sc = sub.add_parser("scenario")
    sc.add_argument("out")
    sc.add_argument("name")
    sc.add_argument("--n", type=int, default=5)
    sc.add_argument("--every", type=int, default=0)
    for flag in ("--wait", "--legacy", "--no-order", "--no-driver", "--separate"):
        sc.add_argument(flag, action="store_true")
    mf = sub.add_parser("malformed")
    mf.add_argument("out")
    mf.add_argument("kind", choices=sorted(MALFORMED))
    bn = sub.add_parser("bench")
    bn.add_argument("out")
    bn.add_argument("--mb", type=float, default=200)
    bn.add_argument("--seed", type=int, default=1)
    pr = sub.add_parser("prop")
    pr.add_argument("analyzer")
    pr.add_argument("--cases", type=int, default=200)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--keep")
    args = ap.parse_args()
    if args.cmd == "scenario":
        scenario(args)
    elif args.cmd == "bench":
        bench(args)
    elif args.cmd == "malformed":
        malformed(args)
    else:
        sys.exit(prop(args))


if __name__ == "__main__":
    main()
