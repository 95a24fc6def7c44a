#!/usr/bin/env python3
"""gpu_corpus.py -- the regression corpus of gpu_validate.sh's traces (issue 33, part 4):
the 1-connection traces of its workloads, trimmed to a few iterations, with their graph
data and the classification the analyzer gives them (tests/analyzer/h100/gpu_validate/,
checked by tests/bats/analyzer_corpus.bats).  expect and check serve any folder of
traces with their graph data beside them: tests/analyzer/h100/kineto_graph/ too.

    gpu_corpus.py keep OUTDIR DEST [--iterations N] [--analyzer PATH]
        From a gpu_validate.sh OUTDIR: each NAME_c1.json.gz, trimmed to its first N + 2
        iterations (default N 3; the programs' 2 untimed ones first) and what came
        before them, as DEST/NAME_c1.json.gz; the program's graph data (OUTDIR/
        NAME_c1.graphs/*.json) as DEST/NAME_c1.json.gz.graphs/; OUTDIR/results.txt as
        DEST/results.txt; then "expect".
    gpu_corpus.py expect DEST [--analyzer PATH]
        Runs the analyzer (--json) on every DEST/*.json.gz and writes DEST/expected.json.
    gpu_corpus.py check DEST [--analyzer PATH]
        The same runs, compared with DEST/expected.json: exit status, status, and per
        group its replays, serialization classes (totals and per replay), false
        dependencies by node pair, eager submission sources, exactly; estimated spans
        within 0.1%.  Prints "corpus ok: N traces" or each difference (exit 1).

An iteration is a window between two host synchronizations holding the number of GPU
records that most windows with records hold (every iteration of these programs is
one such window; the setup and read-back windows are not).  The trace is cut after
the host synchronization that ends the last kept iteration: every event with a
correlation (flow events: an id) above it goes, every other event stays, byte for byte,
one event per line as the shim writes them.  The analyzer defaults to
build/autograph-analyze of this tree (AN in the environment overrides it).
"""
import argparse
import collections
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_SYNCS = ("stream synchronize", "event synchronize", "context synchronize")
UNTIMED = 2                     # the programs' untimed iterations (gpu/false_deps_*)
SPAN_TOLERANCE = 1e-3


def analyzer_path(opt):
    return opt or os.environ.get("AN") or os.path.join(TOP, "build", "autograph-analyze")


# ---- trimming -------------------------------------------------------------------------

def event_lines(path):
    """(head lines, [(line, event)], tail lines) of a trace written one event a line."""
    with gzip.open(path, "rt") as f:
        lines = f.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.rstrip().endswith('"traceEvents": ['))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("]"))
    events = [(l.rstrip(","), json.loads(l.rstrip(","))) for l in lines[start + 1:end]]
    return lines[:start + 1], events, lines[end:]


def correlation(ev):
    if ev.get("ph") in ("s", "f"):
        return ev.get("id")
    return (ev.get("args") or {}).get("correlation")


def cut_correlation(events, iterations):
    """The correlation of the host synchronization that ends the last kept iteration
    (None: keep everything)."""
    syncs = sorted(correlation(e) for _, e in events
                   if e.get("cat") == "cuda_sync" and e.get("name") in HOST_SYNCS)
    gpu = sorted(correlation(e) for _, e in events if e.get("ph") == "X" and
                 e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    counts, at = [], 0
    for s in syncs:
        n = 0
        while at < len(gpu) and gpu[at] < s:
            at, n = at + 1, n + 1
        counts.append((n, s))
    sizes = collections.Counter(n for n, _ in counts if n > 0)
    if not sizes:
        return None
    size = sizes.most_common(1)[0][0]
    ends = [s for n, s in counts if n == size]
    return ends[iterations - 1] if len(ends) > iterations else None


def trim(src, dst, iterations):
    head, events, tail = event_lines(src)
    cut = cut_correlation(events, iterations)
    kept = [l for l, e in events
            if cut is None or correlation(e) is None or correlation(e) <= cut]
    with gzip.open(dst, "wt") as f:
        f.write("\n".join(head) + "\n" + ",\n".join(kept) + "\n" + "\n".join(tail))
    return len(events), len(kept)


def keep(args):
    os.makedirs(args.dest, exist_ok=True)
    for src in sorted(glob.glob(os.path.join(args.outdir, "*_c1.json.gz"))):
        name = os.path.basename(src)
        dst = os.path.join(args.dest, name)
        total, kept = trim(src, dst, args.iterations + UNTIMED)
        graphs = os.path.join(args.outdir, name[:-len(".json.gz")] + ".graphs")
        files = sorted(glob.glob(os.path.join(graphs, "*.json")))
        if files:
            os.makedirs(dst + ".graphs", exist_ok=True)
            for g in files:
                shutil.copy(g, dst + ".graphs")
        print("%s: %d of %d events kept, %d graph files" % (name, kept, total, len(files)))
    results = os.path.join(args.outdir, "results.txt")
    if os.path.exists(results):
        shutil.copy(results, os.path.join(args.dest, "results.txt"))
    return expect(args)


# ---- what the analyzer says -----------------------------------------------------------

def analyze(analyzer, trace):
    report = trace[:-len(".json.gz")] + ".report.tmp.json"
    rc = subprocess.run([analyzer, "-q", "--json", report, trace]).returncode
    try:
        with open(report) as f:
            r = json.load(f)
    finally:
        if os.path.exists(report):
            os.remove(report)
    return rc, r


def group_key(g):
    if "exec_graph_id" in g:
        return "exec graph %s" % g["exec_graph_id"]
    if "eager_window" in g:
        return "eager window %s" % g["eager_window"]["shape"]
    return "launch shape %s" % g.get("launch_shape")


def summary(rc, r):
    groups = {}
    for g in r["groups"]:
        reps = g["replays"]
        groups[group_key(g)] = {
            "graph_file": os.path.basename(g["graph_file"]) if g.get("graph_file") else None,
            "replays": g["replay_count"],
            "serializations": g["serializations"],
            "false_per_replay": [sum(s["class"] == "false" for s in x["serializations"])
                                 for x in reps],
            "false_dependencies": sorted([p["from_node"], p["to_node"], p["replays"]]
                                         for p in g.get("false_dependencies", [])),
            "estimated_span_us": [x.get("estimated_span_us") for x in reps],
        }
    return {"exit": rc, "status": r["status"], "questions": r["questions"],
            "submission": (r.get("eager_windows") or {}).get("submission"),
            "groups": groups}


def run_all(args):
    out = {}
    for trace in sorted(glob.glob(os.path.join(args.dest, "*.json.gz"))):
        rc, r = analyze(analyzer_path(args.analyzer), trace)
        out[os.path.basename(trace)] = summary(rc, r)
    return out


def expect(args):
    got = run_all(args)
    with open(os.path.join(args.dest, "expected.json"), "w") as f:
        json.dump(got, f, indent=1, sort_keys=True)
        f.write("\n")
    print("expected.json: %d traces" % len(got))
    return 0


def spans_differ(a, b):
    if len(a) != len(b):
        return True
    for x, y in zip(a, b):
        if (x is None) != (y is None):
            return True
        if x is not None and abs(x - y) > SPAN_TOLERANCE * max(abs(y), 1.0):
            return True
    return False


def differences(name, want, got):
    bad = []
    for key in ("exit", "status", "questions", "submission"):
        if want[key] != got[key]:
            bad.append("%s: %s %s, expected %s" % (name, key, got[key], want[key]))
    if sorted(want["groups"]) != sorted(got["groups"]):
        bad.append("%s: groups %s, expected %s" % (name, sorted(got["groups"]),
                                                   sorted(want["groups"])))
        return bad
    for key, w in want["groups"].items():
        g = got["groups"][key]
        for field in w:
            same = (not spans_differ(w[field], g[field]) if field == "estimated_span_us"
                    else w[field] == g[field])
            if not same:
                bad.append("%s, %s: %s %s, expected %s" % (name, key, field, g[field], w[field]))
    return bad


def check(args):
    with open(os.path.join(args.dest, "expected.json")) as f:
        want = json.load(f)
    got = run_all(args)
    bad = []
    if sorted(want) != sorted(got):
        bad.append("traces %s, expected %s" % (sorted(got), sorted(want)))
    for name in sorted(set(want) & set(got)):
        bad += differences(name, want[name], got[name])
    for b in bad:
        print(b)
    if bad:
        print("corpus: %d differences (a deliberate change of the analysis: "
              "gpu_corpus.py expect %s)" % (len(bad), args.dest))
        return 1
    print("corpus ok: %d traces" % len(got))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("keep")
    k.add_argument("outdir")
    k.add_argument("dest")
    k.add_argument("--iterations", type=int, default=3)
    for name in ("expect", "check"):
        sub.add_parser(name).add_argument("dest")
    for p in sub.choices.values():
        p.add_argument("--analyzer")
    args = ap.parse_args()
    return {"keep": keep, "expect": expect, "check": check}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
