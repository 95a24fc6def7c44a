#!/usr/bin/env python3
"""gpu_busy.py -- how busy the GPU was per step in an AUTOGRAPH_TRACE trace: the ceiling
of what graphing can gain on a program whose GPU is the bottleneck.

usage: gpu_busy.py [--marker NAME] [--skip FRACTION] TRACE [TRACE ...]

    TRACE is a Chrome trace written by AUTOGRAPH_TRACE (analyzer/FORMAT.md 1c), with
    graphing on or off.  Steps are counted by a GPU record that ends each one, the last
    of that name in the step: --marker NAME (default "Memcpy DtoH", the copy of a loss
    or a result back to the host).  The first FRACTION of those steps (default 0.25:
    warm-up, graph builds) is left out; over the others, per step:
      span     from the end of one marker record to the end of the next
      busy     the time some kernel, copy or memset ran (the union of their intervals,
               so concurrent records count once)
      idle     span - busy
      records  GPU records (kernels, copies, memsets)
    A program can run no faster than its GPU's busy time: no shorter step than `busy`
    with the same kernels, whatever launches them.  CUPTI adds a little to each record
    and to the host's calls, so a traced step is longer than an untraced one; compare
    traced runs with each other.

Prints one line per trace; exit status 1 when a trace has fewer than 3 markers.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
from trace_check import GPU_CATS, read_json  # noqa: E402  (the trace's reader and kinds)


def load_events(path):
    data = read_json(path)[1]
    return data["traceEvents"] if isinstance(data, dict) else data


def gpu_records(events):
    """[(start, end, name)] of the GPU records, by start"""
    return sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                  if e.get("ph") == "X" and e.get("cat") in GPU_CATS)


def busy_time(records, lo, hi):
    """the union of the intervals of the records that lie in [lo, hi], and their count"""
    busy, count, run_start, run_end = 0.0, 0, None, None
    for start, end, _ in records:
        if start < lo or end > hi:
            continue
        count += 1
        if run_end is None or start > run_end:
            if run_end is not None:
                busy += run_end - run_start
            run_start, run_end = start, end
        else:
            run_end = max(run_end, end)
    if run_end is not None:
        busy += run_end - run_start
    return busy, count


def main():
    ap = argparse.ArgumentParser(description="GPU busy time per step of a trace")
    ap.add_argument("--marker", default="Memcpy DtoH")
    ap.add_argument("--skip", type=float, default=0.25)
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    status = 0
    for path in args.traces:
        records = gpu_records(load_events(path))
        ends = [end for _, end, name in records if name == args.marker]
        first = int(len(ends) * args.skip)
        steps = len(ends) - 1 - first
        if steps < 2:
            print(f"{path}: fewer than 3 '{args.marker}' records after the skipped ones")
            status = 1
            continue
        lo, hi = ends[first], ends[-1]
        busy, count = busy_time(records, lo, hi)
        print(f"{path}: steps {steps} span {(hi - lo) / steps:.1f} us, busy "
              f"{busy / steps:.1f} us, idle {(hi - lo - busy) / steps:.1f} us, records "
              f"{count / steps:.1f} per step")
    return status


if __name__ == "__main__":
    sys.exit(main())
