#!/usr/bin/env python3
"""Every kernel of the example GPT's runs is costed by a named model (issue 5: "the example GPT's
step is composed of kernels each costed by a named model or measurement"): report.json's
`gpu_time.by_source` has no default-costed time, and trace.json no kernel whose source is
"default". On failure the default-costed kernels are listed by time, demangled names first, so
a new PyTorch kernel family shows up by name.

Usage: kernels_named.py RUN_DIR...   (the --out directories of finished `phantora run`s)
"""
import collections
import json
import os
import subprocess
import sys


def defaults(run_dir):
    with open(os.path.join(run_dir, "trace.json"), encoding="utf-8") as f:
        t = json.load(f)
    events = t["traceEvents"] if isinstance(t, dict) else t
    time = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("args", {}).get("source") == "default":
            time[e["name"]] += e.get("dur", 0)
    return time


def demangled(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                             check=True).stdout.splitlines()
        return out if len(out) == len(names) else names
    except (OSError, subprocess.CalledProcessError):
        return names


failures = []
for run in sys.argv[1:]:
    with open(os.path.join(run, "report.json"), encoding="utf-8") as f:
        report = json.load(f)
    gpu = report["gpu_time"]
    if gpu["total_s"] <= 0:
        failures.append(f"{run}: no GPU time at all")
        continue
    by_source = gpu["by_source"]
    default_s = by_source.get("default", {}).get("time_s", 0.0)
    slow = defaults(run)
    print(f"{run}: {gpu['total_s'] * 1e3:.3f} ms of GPU time, "
          + ", ".join(f"{k} {v['share']:.2%}" for k, v in sorted(by_source.items())))
    if default_s > 0 or slow:
        top = slow.most_common(15)
        listing = "\n".join(f"  {us:10.1f} us  {name[:200]}"
                            for (_, us), name in zip(top, demangled([n for n, _ in top])))
        failures.append(f"{run}: {default_s * 1e3:.3f} ms default-costed:\n{listing}")

if failures:
    sys.exit("\n".join(failures))
print("every kernel costed by a named model")
