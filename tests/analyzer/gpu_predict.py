#!/usr/bin/env python3
"""gpu_predict.py -- the analyzer's figures for one workload of gpu_validate.sh, from its
JSON report (autograph-analyze --json) of the 1-connection trace.

    gpu_predict.py REPORT eager|graph [--skip N]

The group that holds the program's iterations: eager, the window shape with the most
windows (then the most records); graph, the program's exec graph (one with a graph
file first, then the most replays).  Its replays (windows, graph launches) but the
first N (default 2: the programs' untimed iterations), so that the figures cover the
iterations whose spans the programs report; medians, as the programs report theirs.
Prints one line, tab-separated:

    observed  predicted  false_per_iteration  iterations  note

observed: the trace's span of an iteration (first GPU record's start to the last one's
end); predicted: the analyzer's estimated span without false dependencies;
false_per_iteration: false serializations per iteration.  The note says where the
eager records' submission times came from (API records, estimated from the host's
timed calls, unknown).  Without an estimate: "n/a" for the figures, 0 iterations, and
the report's reason in the note.
"""
import argparse
import json
import statistics
import sys


def pick_group(r, kind):
    if kind == "eager":
        gs = [g for g in r["groups"] if "eager_window" in g]
        key = lambda g: (g["replay_count"], g["eager_window"]["records"])
    else:
        gs = [g for g in r["groups"] if "exec_graph_id" in g]
        key = lambda g: (g.get("graph_file") is not None, g["replay_count"])
    return max(gs, key=key) if gs else None


def no_estimate(r, kind, g):
    why = [n["why"] for n in r.get("cannot_decide", [])
           if "exec graph" in n["what"] or "estimated" in n["what"]]
    if g is None:
        why.append("no %s group in the report" % kind)
    return "n/a\tn/a\tn/a\t0\tno estimate: %s" % ("; ".join(why) or "no replay has one")


def submission_note(r):
    sub = (r.get("eager_windows") or {}).get("submission")
    if not sub:
        return ""
    return ("; submission times: %d from API records, %d estimated from host times, "
            "%d unknown" % (sub["api_records"], sub["host_estimated"], sub["unknown"]))


def figures(r, kind, skip):
    g = pick_group(r, kind)
    reps = g["replays"] if g else []
    reps = reps[skip:] if len(reps) > skip else reps
    reps = [x for x in reps if "estimated_span_us" in x]
    if not reps:
        return no_estimate(r, kind, g)
    false = sum(s["class"] == "false" for x in reps for s in x["serializations"])
    note = "%d iterations analysed%s" % (len(reps), submission_note(r) if kind == "eager" else "")
    return "%.1f\t%.1f\t%.2f\t%d\t%s" % (
        statistics.median(x["span_us"] for x in reps),
        statistics.median(x["estimated_span_us"] for x in reps),
        false / len(reps), len(reps), note)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report")
    ap.add_argument("kind", choices=("eager", "graph"))
    ap.add_argument("--skip", type=int, default=2)
    args = ap.parse_args()
    with open(args.report) as f:
        print(figures(json.load(f), args.kind, args.skip))


if __name__ == "__main__":
    sys.exit(main())
