#!/usr/bin/env python3
"""Runs a Python script on a real GPU under torch.profiler and writes what its kernels took:
per kernel name the count and total microseconds, and the GPU's busy time (the union of all
kernel, copy and memset spans), as JSON:

  {"busy_us": ..., "kernels": {"<demangled name>": [count, total_us], ...}}

  python3 scripts/gpu_kernel_times.py --out real-6.json -- examples/gpt.py --steps 6

scripts/gpu-check.sh runs the example GPT twice this way, for 6 and 11 steps: the difference
over 5 is one steady step's GPU time, kernel by kernel, with no step markers needed (the
profiler's own host overhead changes the step times it prints, not the kernels' durations).
gpu_check_compare.py reads the simulated side from phantora's trace.json the same way."""
import argparse
import json
import os
import runpy
import sys


def busy_us(spans):
    """The union of (start, end) spans, in the spans' unit."""
    total, reach = 0.0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def summarize(events):
    """events: (name, start_us, end_us) of every GPU span. Returns the JSON's structure."""
    kernels = {}
    for name, start, end in events:
        count, us = kernels.get(name, (0, 0.0))
        kernels[name] = (count + 1, us + (end - start))
    return {"busy_us": busy_us([(s, e) for _, s, e in events]),
            "kernels": {k: [c, round(us, 3)] for k, (c, us) in sorted(kernels.items())}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- SCRIPT [ARGS...]")
    a = ap.parse_args()
    script = a.script[1:] if a.script[:1] == ["--"] else a.script
    if not script:
        raise SystemExit("gpu_kernel_times: name the script to run after --")

    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    sys.argv = script
    sys.path.insert(0, os.path.dirname(os.path.abspath(script[0])))  # as `python SCRIPT` does
    # CPU activity too: some releases return no device events without it (the durations of the
    # kernels do not change).
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        try:
            runpy.run_path(script[0], run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                raise
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    events = [(e.name, e.time_range.start, e.time_range.end) for e in prof.events()
              if e.device_type == DeviceType.CUDA]
    with open(a.out, "w") as f:
        json.dump(summarize(events), f, indent=1)
    print(f"gpu_kernel_times: {len(events)} GPU spans -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
