#!/usr/bin/env python3
"""prop_deps.py -- property test of autograph-analyze's dependency classes.

    prop_deps.py ANALYZER [--cases N] [--seed S] [--keep DIR]

Each case is a random DAG (some nodes untimed: "empty" nodes that leave no record,
node indices not in topological order) and a few replays, each a simulated channel
schedule: nodes taken in a random topological order, each put on a random channel
(FIFO), starting after its predecessors and its channel's previous node plus a random
latency.  The case is written as a libautograph trace plus its graph file, analysed
with --json, and checked against an independent computation here:

  - no serialization between two nodes that have a path is ever "false" or
    "ambiguous", and every "true" one has a path (reachability computed here);
  - "false" iff no path and B waited more than epsilon after its predecessors;
  - the serializations reported are exactly the consecutive pairs on a channel whose
    gap is within epsilon;
  - critical path <= estimated span <= observed span.

Prints "prop_deps: N cases, M serializations (T true, F false, A ambiguous): ok" or
the first failing case (its files kept with --keep) and exits 1.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

EPS_NS = 2000


def random_dag(rnd):
    n = rnd.randint(2, 24)
    perm = list(range(n))
    rnd.shuffle(perm)                      # node index of the k-th node in topo order
    p = rnd.uniform(0.05, 0.4)
    preds = {perm[j]: [perm[i] for i in range(j) if rnd.random() < p] for j in range(n)}
    timed = {v: rnd.random() > 0.15 for v in range(n)}
    return n, preds, timed


def reach_sets(n, preds):
    """anc[v]: every node with a path to v."""
    anc = {}

    def ancestors(v):
        if v not in anc:
            s = set()
            for u in preds[v]:
                s.add(u)
                s |= ancestors(u)
            anc[v] = s
        return anc[v]
    for v in range(n):
        ancestors(v)
    return anc


def timed_preds(v, preds, timed, memo):
    """Timed nodes v depends on directly or through untimed nodes only."""
    if v in memo:
        return memo[v]
    out = set()
    for u in preds[v]:
        out |= {u} if timed[u] else timed_preds(u, preds, timed, memo)
    memo[v] = out
    return out


def topo_order(n, preds, rnd):
    left, order, done = set(range(n)), [], set()
    while left:
        ready = [v for v in left if all(u in done for u in preds[v])]
        v = rnd.choice(ready)
        order.append(v)
        done.add(v)
        left.remove(v)
    return order


def simulate(n, preds, timed, rnd, t0, channels):
    """start/end (ns) and channel of every timed node, one replay."""
    tp, start, end, chan, free = {}, {}, {}, {}, {}
    for v in topo_order(n, preds, rnd):
        if not timed[v]:
            continue
        ready = max([end[u] for u in timed_preds(v, preds, timed, tp)] + [t0])
        c = rnd.randrange(channels)
        s = max(ready + rnd.choice([0, 500, 1000, 3000]), free.get(c, t0) + rnd.choice([0, 300, 2500]))
        start[v], chan[v] = s, c
        end[v] = s + rnd.randint(500, 20000)
        free[c] = end[v]
    return start, end, chan


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def write_case(d, n, preds, timed, replays, gid):
    succ = {v: [w for w in range(n) if v in preds[w]] for v in range(n)}
    nodes = [{"index": v, "node_type": "kernel" if timed[v] else "empty",
              "tools_id": (gid << 32) | (v + 10), "graph_id": gid, "node_id": v + 10,
              "kernel_name": "k%d" % v if timed[v] else None,
              "dependencies": preds[v], "dependents": succ[v]} for v in range(n)]
    os.makedirs(os.path.join(d, "trace.graphs"), exist_ok=True)
    with open(os.path.join(d, "trace.graphs", "g.json"), "w") as f:
        json.dump({"exec_graph_id": gid, "nodes": nodes}, f)
    events = []
    for corr, (start, end, chan) in replays:
        for v in start:
            events.append('{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":%d,"ts":%s,'
                          '"dur":%s,"args":{"device":0,"stream":%d,"correlation":%d,'
                          '"graph id":%d,"graph node id":%d,"channel":%d}}'
                          % (v, 100 + chan[v], us(start[v]), us(end[v] - start[v]),
                             100 + chan[v], corr, gid, (gid << 32) | (v + 10), chan[v]))
    with open(os.path.join(d, "trace.json"), "w") as f:
        f.write('{"otherData":{"producer":"libautograph","version":1},"traceEvents":[\n'
                + ",\n".join(events) + "]}\n")


def expected(preds, timed, replay):
    """Serializations (a, b) -> (class, wait) computed independently."""
    start, end, chan = replay
    t0 = min(start.values())
    anc = reach_sets(len(preds), preds)
    tp, out = {}, {}
    for c in set(chan.values()):
        on = sorted((start[v], v) for v in start if chan[v] == c)
        for (_, a), (_, b) in zip(on, on[1:]):
            if abs(start[b] - end[a]) > EPS_NS:
                continue
            ready = max([end[u] for u in timed_preds(b, preds, timed, tp)] + [t0])
            wait = start[b] - ready
            cls = "true" if a in anc[b] else "false" if wait > EPS_NS else "ambiguous"
            out[(a, b)] = (cls, wait)
    return out


def check(report, preds, timed, replays):
    grp = report["groups"][0]
    counts = {"true": 0, "false": 0, "ambiguous": 0}
    for r, (corr, replay) in zip(grp["replays"], replays):
        want = expected(preds, timed, replay)
        got = {}
        for s in r["serializations"]:
            a, b = int(s["from"][1:]), int(s["to"][1:])
            got[(a, b)] = (s["class"], round(float(s["wait_us"]) * 1000))
            counts[s["class"]] += 1
        if got != want:
            return "replay %d: analyzer %s, expected %s" % (corr, sorted(got.items()),
                                                             sorted(want.items()))
        if not (r["critical_path_us"] <= r["estimated_span_us"] + 1e-9 <= r["span_us"] + 2e-9):
            return "replay %d: critical path %s, estimate %s, span %s" % (
                corr, r["critical_path_us"], r["estimated_span_us"], r["span_us"])
    return counts


def run_case(analyzer, rnd, d, case):
    n, preds, timed = random_dag(rnd)
    if not any(timed.values()):
        timed[0] = True
    channels = rnd.randint(1, 4)
    replays = [(1000 + k, simulate(n, preds, timed, rnd, 1_000_000 * (k + 1), channels))
               for k in range(rnd.randint(1, 3))]
    write_case(d, n, preds, timed, replays, gid=5 + case % 7)
    out = subprocess.run([analyzer, "-q", "--json", "-", os.path.join(d, "trace.json")],
                         capture_output=True, text=True)
    if out.returncode not in (0, 3):     # 3: the report leaves something undecided
        return "analyzer failed: " + out.stderr
    return check(json.loads(out.stdout), preds, timed, replays)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("analyzer")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    totals = {"true": 0, "false": 0, "ambiguous": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(args.cases):
            d = os.path.join(args.keep or tmp, "case%d" % case)
            result = run_case(args.analyzer, rnd, d, case)
            if isinstance(result, str):
                print("prop_deps: case %d (seed %d) FAILED: %s (files: %s)"
                      % (case, args.seed, result, d if args.keep else "use --keep"))
                return 1
            for k in totals:
                totals[k] += result[k]
    print("prop_deps: %d cases, %d serializations (%d true, %d false, %d ambiguous): ok"
          % (args.cases, sum(totals.values()), totals["true"], totals["false"],
             totals["ambiguous"]))
    return 0 if totals["true"] and totals["false"] else 1


if __name__ == "__main__":
    sys.exit(main())
