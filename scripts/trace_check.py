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
        every GPU record's correlation has a cuda_driver record (else only counted).
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
"""
import argparse
import gzip
import json
import os
import re
import sys

GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
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
        elif ev.get("ph") == "X" and cat == "cuda_driver":
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
    bad += expectations(opts, counts)
    summary = ("events %d kernels %d graph_kernels %d memcpy %d memset %d api %d flows %d "
               "graph_records %d graph_files %d gpu_records_without_api %d "
               "kernel_names_differ %d autographTrace %s" % (
                   len(data["traceEvents"]), counts["kernel"], counts["graph_kernel"],
                   counts["gpu_memcpy"], counts["gpu_memset"], counts["cuda_driver"],
                   counts["flows"], counts["graph_records"], len(graphs), counts["no_api"],
                   counts["names_differ"],
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
    if bad:
        print("FALSE DEPENDENCY CHECK FAILED: %d problems; the first ones:" % len(bad))
        for line in bad[:20]:
            print("  " + line)
        return 1
    print("no false dependency has a path in its graph")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace")
    t.add_argument("trace")
    t.add_argument("--graphs")
    t.add_argument("--kernels", type=int)
    t.add_argument("--graph-kernels", type=int)
    t.add_argument("--strict-flows", action="store_true")
    f = sub.add_parser("falsedeps")
    f.add_argument("report")
    f.add_argument("--graphs")
    opts = ap.parse_args()
    return check_trace(opts) if opts.cmd == "trace" else check_false_deps(opts)


if __name__ == "__main__":
    sys.exit(main())
