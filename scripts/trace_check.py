#!/usr/bin/env python3
"""trace_check.py -- independent checks of AUTOGRAPH_TRACE's output and of what
autograph-analyze reports about it (tests/bats/trace_sim.bats, tests/gpu/trace.bats).

    scripts/trace_check.py trace TRACE [--graphs DIR] [--kernels N] [--graph-kernels N]
                                       [--strict-flows]
        TRACE follows analyzer/FORMAT.md 1c: a JSON object, otherData.producer
        "libautograph", version 1; every GPU record (ph X, cat kernel / gpu_memcpy /
        gpu_memset) has name, integer pid/tid, ts and dur written with exactly 3
        decimals (dur >= 0), args device, stream, correlation, channel, channel type
        (kernels: grid and block, 3 integers each); "graph id" and "graph node id"
        come together.  Every graph record names, by its graph node id (low 32 bits,
        as the analyzer reads it), a node of the exec graph's file in DIR (default
        TRACE.graphs) of the record's kind (kernel names that differ from the node's
        are counted: kernel_names_differ).  --kernels / --graph-kernels: the exact
        number of kernel records / of those launched from a graph.  --strict-flows:
        every GPU record's correlation has a cuda_driver or cuda_runtime record (else
        only counted).
        The stream-order events (FORMAT.md 1d) are checked too: "event record"
        (cat cuda_event_record) and "stream wait event" (cat cuda_sync) instants with
        integer pid/tid and args stream, correlation, event, sync id; host syncs
        ("stream / event / context synchronize") on the host process's pid with an
        integer correlation; "stream_info" metadata with stream, device, flags
        (default / non_blocking) and priority, one per stream.  Sync ids of event
        records are unique, and every wait names by its sync id an event record made
        before it (a correlation no larger: one API call may record and then wait).  --event-records / --stream-waits /
        --stream-syncs N: the exact number of each; --streams N: at least N
        stream_info (the CUDA runtime creates streams of its own: 22 for a program
        of 16 streams on the H100).
        Prints "trace ok: ..." with the counts, or the problems (exit 1).

    scripts/trace_check.py falsedeps REPORT [--graphs DIR]
        REPORT: autograph-analyze --json output.  For every group, every pair of
        "false_dependencies" and every serialization of class "false" of its replays
        names two nodes (from_node, to_node: indices into the group's graph file,
        "graph_file", else the file in DIR whose exec_graph_id is the group's) between
        which the graph has no path, in either direction, computed here from the graph
        file's dependencies/dependents.  The names a pair of "false_dependencies" gives
        ("from", "to") must be the nodes' kernel names where both are known (else the
        indices are not what this script assumes).  Prints
            false_pairs P false_serializations S replays R per_replay X
        and "no false dependency has a path in its graph", or the offenders (exit 1).

    scripts/trace_check.py eagerdeps TRACE REPORT
        Rebuilds from TRACE alone the eager windows of FORMAT.md section 3: the GPU
        records without a graph id of one device between two host synchronizations
        (by correlation), each record ordered after the earlier work of its stream,
        after the work an event record captured where its stream waited for that
        record (by sync id; through waits too, transitively, where a stream recorded an
        event after waiting without a record of its own in between), and for a stream
        without stream_info (possibly the legacy default stream) after, and before,
        the work of every stream not known to be non_blocking.  REPORT
        (autograph-analyze --json on TRACE): every group with "eager_window" names in
        each replay a window (its "correlation": the window's first record), every
        serialization of class "false" names two records of it (from_correlation /
        from_stream, to_correlation / to_stream) between which there is no path, in
        either direction, and so does every pair of the group's "false_dependencies"
        (window positions) in every replay window.  Prints
            eager false serializations N, windows W, per_window X
        (N, W from the report's eager groups), then the windows rebuilt here, and
        "no eager false dependency has a path", or the offenders (exit 1).
"""
import argparse
import gzip
import json
import os
import re
import sys

GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
API_CATS = ("cuda_driver", "cuda_runtime")
HOST_SYNCS = ("stream synchronize", "event synchronize", "context synchronize")
STREAM_FLAGS = ("default", "non_blocking")
TIME_RE = re.compile(rb'"(ts|dur)":\s*(-?[0-9][0-9.eE+-]*)')
EXACT_RE = re.compile(rb'-?[0-9]+\.[0-9]{3}$')


def read_json(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw, json.loads(raw)


def graph_files(folder):
    if not folder or not os.path.isdir(folder):
        return []
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder))
            if n.endswith(".json") or n.endswith(".json.gz")]


def load_graph(path):
    """(exec id, nodes by index, adjacency by index) of one graph data file."""
    _, data = read_json(path)
    nodes = {}
    for pos, node in enumerate(data["nodes"]):
        nodes[node.get("index", pos)] = node
    succ = {i: set() for i in nodes}
    for i, node in nodes.items():
        for d in node.get("dependencies") or []:
            succ[d].add(i)
        for d in node.get("dependents") or []:
            succ[i].add(d)
    exec_id = data.get("exec_graph_id")
    if exec_id is None and nodes:
        exec_id = next(iter(nodes.values())).get("graph_id")
    return exec_id, nodes, succ


def load_graphs(folder):
    graphs = {}
    for path in graph_files(folder):
        exec_id, nodes, succ = load_graph(path)
        graphs.setdefault(exec_id, (path, nodes, succ))
    return graphs


# ---- trace --------------------------------------------------------------------------

def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def record_problems(ev):
    """What is wrong with one GPU record (a list of strings)."""
    bad = []
    args = ev.get("args") or {}
    if not isinstance(ev.get("name"), str):
        bad.append("no name")
    for key in ("pid", "tid"):
        if not is_int(ev.get(key)):
            bad.append(key + " not an integer")
    if not isinstance(ev.get("ts"), (int, float)) or not isinstance(ev.get("dur"), (int, float)) \
            or ev["dur"] < 0:
        bad.append("ts/dur")
    for key in ("device", "stream", "correlation", "channel"):
        if not is_int(args.get(key)):
            bad.append("args." + key)
    if not isinstance(args.get("channel type"), (int, float, str)):
        bad.append("args.channel type")
    if ev["cat"] == "kernel":
        for key in ("grid", "block"):
            v = args.get(key)
            if not (isinstance(v, list) and len(v) == 3 and all(is_int(x) for x in v)):
                bad.append("args." + key)
    if ("graph id" in args) != ("graph node id" in args):
        bad.append("graph id without graph node id or the reverse")
    return bad


def graph_problem(ev, graphs):
    """Why a graph record names no node of its kind in the graph files (or None)."""
    args = ev["args"]
    gid, nid = args["graph id"], args["graph node id"]
    if gid not in graphs:
        return "no graph file for exec graph %s" % gid
    path, nodes, _ = graphs[gid]
    low = nid & 0xFFFFFFFF
    hits = [n for n in nodes.values()
            if n.get("node_id") == low or (n.get("tools_id") is not None
                                           and n["tools_id"] & 0xFFFFFFFF == low)]
    if len(hits) != 1:
        return "graph node id %s names %d nodes of %s" % (nid, len(hits), path)
    want = GPU_CATS[ev["cat"]]
    if hits[0].get("node_type", "kernel") != want:
        return "graph node id %s is a %s node, the record a %s" % (
            nid, hits[0].get("node_type"), want)
    return None


def name_differs(ev, graphs):
    """A graph kernel record whose node has another kernel name (counted, not an error:
    the graph data names kernels with cuFuncGetName, CUPTI in its own way)."""
    args = ev["args"]
    nodes = graphs[args["graph id"]][1].values()
    low = args["graph node id"] & 0xFFFFFFFF
    names = {n.get("kernel_name") for n in nodes if n.get("node_id") == low}
    return ev["cat"] == "kernel" and None not in names and ev["name"] not in names


def check_head(raw, data):
    bad = []
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        return ["not an object with a traceEvents array"]
    other = data.get("otherData") or {}
    if other.get("producer") != "libautograph" or other.get("version") != 1:
        bad.append("otherData is not {producer: libautograph, version: 1}")
    for m in TIME_RE.finditer(raw):
        if not EXACT_RE.match(m.group(2)):
            bad.append("%s written as %s (not 3 decimals)" % (
                m.group(1).decode(), m.group(2).decode()))
            break
    return bad


def check_trace(opts):
    raw, data = read_json(opts.trace)
    bad = check_head(raw, data)
    if bad and "traceEvents" not in (data if isinstance(data, dict) else {}):
        return report(bad, "")
    graphs = load_graphs(opts.graphs or opts.trace + ".graphs")
    counts = dict(kernel=0, graph_kernel=0, gpu_memcpy=0, gpu_memset=0, cuda_driver=0,
                  flows=0, graph_records=0, no_api=0, names_differ=0)
    api_corr, gpu = set(), []
    for ev in data["traceEvents"]:
        cat = ev.get("cat")
        if ev.get("ph") == "X" and cat in GPU_CATS:
            gpu.append(ev)
            counts[cat] += 1
            bad += ["%s %s: %s" % (cat, ev.get("name"), p) for p in record_problems(ev)]
        elif ev.get("ph") == "X" and cat in API_CATS:
            counts["cuda_driver"] += 1
            api_corr.add((ev.get("args") or {}).get("correlation"))
        elif ev.get("ph") in ("s", "f") and cat == "ac2g":
            counts["flows"] += 1
    for ev in gpu:
        args = ev.get("args") or {}
        if "graph id" in args and args["graph id"]:
            counts["graph_records"] += 1
            counts["graph_kernel"] += ev["cat"] == "kernel"
            problem = graph_problem(ev, graphs)
            if problem:
                bad.append("%s %s: %s" % (ev["cat"], ev["name"], problem))
            else:
                counts["names_differ"] += name_differs(ev, graphs)
        if counts["cuda_driver"] and args.get("correlation") not in api_corr:
            counts["no_api"] += 1
    order_bad, order = check_order(data)
    bad += order_bad + expectations(opts, counts) + order_expectations(opts, order)
    summary = ("events %d kernels %d graph_kernels %d memcpy %d memset %d api %d flows %d "
               "graph_records %d graph_files %d gpu_records_without_api %d "
               "kernel_names_differ %d %s autographTrace %s" % (
                   len(data["traceEvents"]), counts["kernel"], counts["graph_kernel"],
                   counts["gpu_memcpy"], counts["gpu_memset"], counts["cuda_driver"],
                   counts["flows"], counts["graph_records"], len(graphs), counts["no_api"],
                   counts["names_differ"], " ".join("%s %d" % kv for kv in order.items()),
                   json.dumps(data.get("autographTrace"), separators=(",", ":"))))
    return report(bad, summary)


def expectations(opts, counts):
    bad = []
    if opts.kernels is not None and counts["kernel"] != opts.kernels:
        bad.append("%d kernel records, expected %d" % (counts["kernel"], opts.kernels))
    if opts.graph_kernels is not None and counts["graph_kernel"] != opts.graph_kernels:
        bad.append("%d graph kernel records, expected %d" % (counts["graph_kernel"],
                                                              opts.graph_kernels))
    if opts.strict_flows and counts["no_api"]:
        bad.append("%d GPU records have no driver API record" % counts["no_api"])
    return bad


# ---- stream order (FORMAT.md 1d) ------------------------------------------------------

def order_kind(ev):
    """"record", "wait", "sync", "stream" for a section 1d event, else None."""
    cat, name = ev.get("cat"), ev.get("name")
    if cat == "cuda_event_record":
        return "record"
    if cat == "cuda_sync":
        return "wait" if name == "stream wait event" else "sync"
    if ev.get("ph") == "M" and name == "stream_info":
        return "stream"
    return None


def order_problems(ev, kind, host_pid):
    """What is wrong with one section 1d event (a list of strings)."""
    args = ev.get("args") or {}
    keys = {"record": ("stream", "correlation", "event", "sync id"),
            "wait": ("stream", "correlation", "event", "sync id"),
            "sync": ("correlation",), "stream": ("stream", "device", "priority")}[kind]
    bad = ["args." + k for k in keys if not is_int(args.get(k))]
    bad += [k + " not an integer" for k in ("pid", "tid") if not is_int(ev.get(k))]
    if kind == "stream":
        if args.get("flags") not in STREAM_FLAGS:
            bad.append("flags %r" % args.get("flags"))
        return bad
    if ev.get("ph") != "i" or not isinstance(ev.get("ts"), (int, float)):
        bad.append("not an instant event with a ts")
    if kind == "sync":
        if ev.get("name") not in HOST_SYNCS:
            bad.append("unknown synchronization")
        if ev.get("pid") != host_pid:
            bad.append("pid %s is not the host process %s" % (ev.get("pid"), host_pid))
        bad += ["args." + k for k in ("stream", "event", "sync id")
                if k in args and not is_int(args[k])]
    elif ev.get("name") != {"record": "event record", "wait": "stream wait event"}[kind]:
        bad.append("name %r" % ev.get("name"))
    return bad


def check_order(data):
    """(problems, counts) of the section 1d events: each well formed, sync ids of records
    unique, every wait matched by an earlier record, one stream_info per stream."""
    host_pid = (data.get("otherData") or {}).get("pid")
    counts = dict(event_records=0, stream_waits=0, stream_syncs=0, event_syncs=0,
                  context_syncs=0, stream_infos=0, waits_unmatched=0)
    bad, records, waits, streams = [], {}, [], set()
    for ev in data["traceEvents"]:
        kind = order_kind(ev)
        if kind is None:
            continue
        problems = order_problems(ev, kind, host_pid)
        bad += ["%s: %s" % (ev.get("name"), p) for p in problems]
        args = ev.get("args") or {}
        if problems:
            continue
        if kind == "record":
            counts["event_records"] += 1
            if args["sync id"] in records:
                bad.append("two event records with sync id %s" % args["sync id"])
            records[args["sync id"]] = args["correlation"]
        elif kind == "wait":
            counts["stream_waits"] += 1
            waits.append(args)
        elif kind == "sync":
            counts[ev["name"].split()[0] + "_syncs"] += 1
        else:
            counts["stream_infos"] += 1
            if (args["device"], args["stream"]) in streams:
                bad.append("two stream_info for stream %s" % args["stream"])
            streams.add((args["device"], args["stream"]))
    for w in waits:
        # the same correlation: both made inside one API call (measured on the H100: the
        # shim joins streams around a graph launch inside the program's runtime call)
        if records.get(w["sync id"], w["correlation"] + 1) > w["correlation"]:
            counts["waits_unmatched"] += 1
    if counts["waits_unmatched"]:
        bad.append("%d stream waits name no earlier event record by sync id"
                   % counts["waits_unmatched"])
    return bad, counts


def order_expectations(opts, counts):
    want = dict(event_records=opts.event_records, stream_waits=opts.stream_waits,
                stream_syncs=opts.stream_syncs, stream_infos=opts.streams)
    at_least = {"stream_infos"}
    return ["%d %s, expected %s%d" % (counts[k], k, "at least " if k in at_least else "", n)
            for k, n in want.items()
            if n is not None and (counts[k] < n if k in at_least else counts[k] != n)]


def report(bad, summary):
    if bad:
        print("trace NOT ok: %d problems; the first ones:" % len(bad))
        for line in bad[:20]:
            print("  " + line)
        if summary:
            print("  (" + summary + ")")
        return 1
    print("trace ok: " + summary)
    return 0


# ---- false dependencies -------------------------------------------------------------

def reaches(succ, a, b):
    seen, todo = {a}, [a]
    while todo:
        for nxt in succ[todo.pop()]:
            if nxt == b:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def group_graph(group, folder, cache):
    path = group.get("graph_file")
    if not path or not os.path.exists(path):
        found = load_graphs(folder).get(group.get("exec_graph_id"))
        path = found[0] if found else None
    if path and path not in cache:
        cache[path] = load_graph(path)
    return path, cache.get(path)


def pair_problem(pair, graph, names):
    """names: the pair's "from"/"to" are node names (false_dependencies), to check."""
    _, nodes, succ = graph
    a, b = pair.get("from_node"), pair.get("to_node")
    if a not in nodes or b not in nodes:
        return "node %s or %s is not in the graph file" % (a, b)
    for key, idx in (("from", a), ("to", b)):
        name, known = pair.get(key), nodes[idx].get("kernel_name")
        if names and name and known and name != known:
            return "the analyzer names node %s %s, the graph file %s" % (idx, name, known)
    if reaches(succ, a, b) or reaches(succ, b, a):
        return "nodes %s -> %s have a path in the graph" % (a, b)
    return None


def check_false_deps(opts):
    _, rep = read_json(opts.report)
    trace = (rep.get("input") or {}).get("trace") or ""
    folder = opts.graphs or trace + ".graphs"
    cache, bad = {}, []
    pairs = sers = replays = 0
    for group in rep.get("groups") or []:
        if group.get("eager_window") is not None:
            continue     # an eager window has no graph: `eagerdeps` checks those
        replays += group.get("replay_count") or 0
        found = [(p, True) for p in group.get("false_dependencies") or []]
        found += [(s, False) for r in group.get("replays") or []
                  for s in r.get("serializations") or [] if s.get("class") == "false"]
        pairs += len(group.get("false_dependencies") or [])
        sers += (group.get("serializations") or {}).get("false", 0)
        if not found:
            continue
        path, graph = group_graph(group, folder, cache)
        if graph is None:
            bad.append("exec graph %s: false dependencies but no graph file"
                       % group.get("exec_graph_id"))
            continue
        bad += ["%s: %s" % (path, p) for p in (pair_problem(x, graph, n) for x, n in found) if p]
    print("false_pairs %d false_serializations %d replays %d per_replay %.3f" % (
        pairs, sers, replays, sers / replays if replays else 0.0))
    return verdict(bad, "FALSE DEPENDENCY CHECK FAILED",
                   "no false dependency has a path in its graph")


def verdict(bad, failed, passed):
    """Prints the first problems under `failed` (exit status 1), or `passed` (0)."""
    if bad:
        print("%s: %d problems; the first ones:" % (failed, len(bad)))
        for line in bad[:20]:
            print("  " + line)
        return 1
    print(passed)
    return 0


# ---- eager windows (FORMAT.md section 3) ----------------------------------------------

class Window:
    """One eager window: its records (by correlation) and the edges between them."""

    def __init__(self, device):
        self.device, self.nodes, self.succ = device, [], []

    def add(self, ev):
        self.nodes.append(ev)
        self.succ.append(set())
        return len(self.nodes) - 1

    def find(self, correlation, stream):
        for i, ev in enumerate(self.nodes):
            if ev["args"].get("correlation") == correlation and \
                    (stream is None or ev["args"].get("stream") == stream):
                return i
        return None


class Eager:
    """The eager windows of a trace and their edges, rebuilt from its records alone.

    Walks the eager GPU records, event records, waits and host syncs in correlation
    order.  Per (device, stream): `last`, its latest record, and `pending`, the records
    it has waited for since (as (window, node) pairs); an event record keeps the
    stream's frontier (both) under its sync id, a wait adds that to `pending`.  A
    stream without stream_info (possibly legacy) joins the frontiers of every stream
    not known to be non_blocking before each of its operations and raises a barrier
    that those streams take into `pending` at their next operation."""

    def __init__(self, events):
        self.flags = {}
        self.windows, self.edges = [], 0
        items = []
        for n, ev in enumerate(events):
            kind, args = self.kind(ev), ev.get("args") or {}
            if kind == "stream":
                self.flags[(args.get("device"), args.get("stream"))] = args.get("flags")
            elif kind:
                items.append((args.get("correlation", 0), ev.get("ts", 0), n, kind, ev))
        self.reset()
        for _, _, _, kind, ev in sorted(items, key=lambda x: x[:3]):
            self.step(kind, ev)

    @staticmethod
    def kind(ev):
        args = ev.get("args") or {}
        if ev.get("ph") == "X" and ev.get("cat") in GPU_CATS:
            return None if args.get("graph id") else "gpu"
        return order_kind(ev)

    def reset(self):
        self.current, self.last, self.pending = {}, {}, {}
        self.barrier, self.seen = {}, {}
        self.snap = getattr(self, "snap", {})

    def frontier(self, key):
        last = self.last.get(key)
        return self.pending.get(key, set()) | ({last} if last else set())

    def before_op(self, key):
        """Implicit synchronization before an operation on stream `key`."""
        device = key[0]
        if self.flags.get(key) is None:              # possibly the legacy stream
            for other in list(self.last) + list(self.pending):
                if other[0] == device and other != key and \
                        self.flags.get(other) != "non_blocking":
                    self.pending.setdefault(key, set()).update(self.frontier(other))
        elif self.flags[key] != "non_blocking":
            gen, front = self.barrier.get(device, (0, set()))
            if self.seen.get(key, 0) < gen:
                self.pending.setdefault(key, set()).update(front)
                self.seen[key] = gen

    def after_op(self, key):
        if self.flags.get(key) is None:
            gen = self.barrier.get(key[0], (0, set()))[0] + 1
            self.barrier[key[0]] = (gen, self.frontier(key))
            self.seen[key] = gen

    def step(self, kind, ev):
        args = ev.get("args") or {}
        if kind == "sync":
            self.reset()
            return
        key = (args.get("device", ev.get("pid")) if kind == "gpu" else ev.get("pid"),
               args.get("stream"))
        self.before_op(key)
        if kind == "gpu":
            self.record(key, ev)
        elif kind == "record":
            self.snap[args.get("sync id")] = self.frontier(key)
        else:
            self.pending.setdefault(key, set()).update(self.snap.get(args.get("sync id"), ()))
        self.after_op(key)

    def record(self, key, ev):
        window = self.current.get(key[0])
        if window is None:
            window = self.current[key[0]] = Window(key[0])
            self.windows.append(window)
        node = window.add(ev)
        for w, pred in self.frontier(key):
            if w is window and node not in window.succ[pred]:
                window.succ[pred].add(node)
                self.edges += 1
        self.last[key], self.pending[key] = (window, node), set()


def window_problem(window, a, b):
    if a is None or b is None:
        return "a record is not in the window"
    succ = dict(enumerate(window.succ))
    if reaches(succ, a, b) or reaches(succ, b, a):
        return "records %d -> %d (%s, %s) have a path" % (
            min(a, b), max(a, b), window.nodes[a]["name"], window.nodes[b]["name"])
    return None


def eager_group_problems(group, windows):
    """The offenders of one eager group of the report, given the trace's windows by
    (device, first correlation)."""
    bad, device = [], group["eager_window"].get("device", 0)
    for replay in group.get("replays") or []:
        window = windows.get((device, replay.get("correlation")))
        if window is None:
            bad.append("no eager window of the trace starts at correlation %s (device %s)"
                       % (replay.get("correlation"), device))
            continue
        for ser in replay.get("serializations") or []:
            if ser.get("class") != "false":
                continue
            problem = window_problem(
                window, window.find(ser.get("from_correlation"), ser.get("from_stream")),
                window.find(ser.get("to_correlation"), ser.get("to_stream")))
            if problem:
                bad.append("window at correlation %s: false serialization %s -> %s: %s" % (
                    replay.get("correlation"), ser.get("from_correlation"),
                    ser.get("to_correlation"), problem))
        for pair in group.get("false_dependencies") or []:
            a, b = pair.get("from_node"), pair.get("to_node")
            n = len(window.nodes)
            problem = window_problem(window, a if is_int(a) and 0 <= a < n else None,
                                     b if is_int(b) and 0 <= b < n else None)
            if problem:
                bad.append("window at correlation %s: false dependency %s -> %s: %s" % (
                    replay.get("correlation"), a, b, problem))
    return bad


def check_eager(opts):
    _, data = read_json(opts.trace)
    _, rep = read_json(opts.report)
    eager = Eager(data["traceEvents"])
    windows = {(w.device, w.nodes[0]["args"].get("correlation")): w for w in eager.windows}
    bad, false, replays = [], 0, 0
    for group in rep.get("groups") or []:
        if "eager_window" not in group:
            continue
        false += (group.get("serializations") or {}).get("false", 0)
        replays += group.get("replay_count") or 0
        bad += eager_group_problems(group, windows)
    print("eager false serializations %d, windows %d, per_window %.3f" % (
        false, replays, false / replays if replays else 0.0))
    print("trace: eager windows %d, records %d, edges %d" % (
        len(eager.windows), sum(len(w.nodes) for w in eager.windows), eager.edges))
    return verdict(bad, "EAGER FALSE DEPENDENCY CHECK FAILED",
                   "no eager false dependency has a path")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace")
    t.add_argument("trace")
    t.add_argument("--graphs")
    t.add_argument("--kernels", type=int)
    t.add_argument("--graph-kernels", type=int)
    t.add_argument("--strict-flows", action="store_true")
    for name in ("event-records", "stream-waits", "stream-syncs", "streams"):
        t.add_argument("--" + name, type=int)
    f = sub.add_parser("falsedeps")
    f.add_argument("report")
    f.add_argument("--graphs")
    e = sub.add_parser("eagerdeps")
    e.add_argument("trace")
    e.add_argument("report")
    opts = ap.parse_args()
    return {"trace": check_trace, "falsedeps": check_false_deps,
            "eagerdeps": check_eager}[opts.cmd](opts)


if __name__ == "__main__":
    sys.exit(main())
