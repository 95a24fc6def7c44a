#!/usr/bin/env python3
"""tools_id_match.py -- do a trace's graph kernel records name the nodes of the graph
data that libautograph dumped?

    scripts/tools_id_match.py --records RECORDS [--raw RAW] [--min N] JSON_OR_DIR...

JSON_OR_DIR: graph data files (AUTOGRAPH_DEBUG_DUMP's *.json, or what
autograph_graph_data returned), or folders holding them.
RECORDS: one kernel record a line, "<graphId> <graphNodeId> <kernel name>", as CUPTI's
kernel activity records give them (tests/gpu/introspect_prog.cu writes them) or as
the simulator's SIM_GRAPH_TRACE does; graphNodeId 0 is a kernel launched outside a
graph.  '#' lines are comments.
RAW (diagnostics only): "<exec_graph_id> <template graph id> <template node CUPTI id>"
a line, the ids before the remap (tests/gpu/introspect_prog.cu writes them).

Prints, among others, the line
    tools_id match: M/N = P%
where N counts the records launched from a graph and M those whose graphNodeId is
the tools_id of exactly one node of the graph data, a kernel node.  Exit status 0
when M == N >= --min (default 1) and no node had a null tools_id; 1 otherwise.
"""
import argparse
import collections
import json
import os
import sys


def json_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                if name.endswith(".json"):
                    yield os.path.join(p, name)
        else:
            yield p


def load_nodes(paths):
    """tools_id -> [node], the exec graph ids, and the count of null ids."""
    by_tools_id = collections.defaultdict(list)
    execs, nulls, files = set(), 0, 0
    for path in json_files(paths):
        with open(path) as f:
            data = json.load(f)
        files += 1
        execs.add(data["exec_graph_id"])
        for node in data["nodes"]:
            node["file"] = os.path.basename(path)
            node["exec_graph_id"] = data["exec_graph_id"]
            if node["tools_id"] is None:
                nulls += 1
            else:
                by_tools_id[node["tools_id"]].append(node)
    return by_tools_id, execs, nulls, files


def load_records(path):
    records = []
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            records.append((int(parts[0]), int(parts[1]), parts[2].strip() if len(parts) > 2 else ""))
    return records


def load_raw(path):
    raw = set()
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and not line.startswith("#"):
                    raw.add(int(parts[2], 0))
    return raw


def diagnose(unmatched, by_tools_id, raw):
    """Why records did not match: which other form of the ids they take."""
    local = collections.defaultdict(set)
    for nodes in by_tools_id.values():
        for n in nodes:
            local[n["exec_graph_id"]].add(n["node_id"])
    low = sum(1 for g, nid, _ in unmatched if any((nid & 0xffffffff) in s for s in local.values()))
    high = sum(1 for g, nid, _ in unmatched if (nid >> 32) in local)
    by_gid = sum(1 for g, nid, _ in unmatched if g in local)
    print(f"  unmatched records whose low 32 bits are some node_id: {low}/{len(unmatched)}")
    print(f"  unmatched records whose high 32 bits are some exec_graph_id: {high}/{len(unmatched)}")
    print(f"  unmatched records whose graphId is some exec_graph_id: {by_gid}/{len(unmatched)}")
    if raw:
        hits = sum(1 for _, nid, _ in unmatched if nid in raw)
        print(f"  unmatched records equal to a template node's raw CUPTI id: {hits}/{len(unmatched)}")
    for g, nid, name in unmatched[:5]:
        print(f"  e.g. graphId {g} graphNodeId {nid} (0x{nid:x}) {name}: "
              f"{len(by_tools_id.get(nid, []))} nodes with that tools_id")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", required=True)
    ap.add_argument("--raw")
    ap.add_argument("--min", type=int, default=1)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()

    by_tools_id, execs, nulls, files = load_nodes(args.paths)
    records = load_records(args.records)
    graphed = [r for r in records if r[1] != 0]
    matched, names_agree, gid_agree, unmatched = 0, 0, 0, []
    for g, nid, name in graphed:
        nodes = by_tools_id.get(nid, [])
        if len(nodes) == 1 and nodes[0]["node_type"] == "kernel":
            matched += 1
            names_agree += nodes[0]["kernel_name"] == name
            gid_agree += nodes[0]["exec_graph_id"] == g
        else:
            unmatched.append((g, nid, name))
    kernels = sum(1 for ns in by_tools_id.values() for n in ns if n["node_type"] == "kernel")
    dup = sum(1 for ns in by_tools_id.values() if len(ns) > 1)
    print(f"graph data: {files} files, {len(execs)} exec graphs, {kernels} kernel nodes, "
          f"{nulls} nodes with null ids, {dup} tools_ids on more than one node")
    print(f"records: {len(records)} kernel records, {len(graphed)} launched from a graph")
    pct = 100.0 * matched / len(graphed) if graphed else 0.0
    print(f"tools_id match: {matched}/{len(graphed)} = {pct:.1f}%")
    print(f"kernel names agree: {names_agree}/{matched}; record graphId == exec_graph_id: "
          f"{gid_agree}/{matched}")
    if unmatched:
        diagnose(unmatched, by_tools_id, load_raw(args.raw))
    ok = graphed and matched == len(graphed) and len(graphed) >= args.min and nulls == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
