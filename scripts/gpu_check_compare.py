#!/usr/bin/env python3
"""Writes scripts/gpu-check.sh's comparison (Markdown, to stdout) from the files it left in
--out: real.log, sim-db/ and sim-model/ (report.json, job.log), calibrate.txt, profile.log."""
import argparse
import json
import os
import re

# examples/gpt.py's line: "step    2/6 | loss ... | step time 31.0 ms | tokens/s/GPU ..."
STEP = re.compile(r"\bstep\s+(\d+)(?:/\d+)?\b.*?step time ([0-9.]+) ms")


def step_times(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {int(m.group(1)): float(m.group(2)) for m in map(STEP.search, f) if m}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    real = step_times(os.path.join(out, "real.log"))
    sim = {m: step_times(os.path.join(out, f"sim-{m}", "job.log")) for m in ("db", "model")}
    print("# GPU check\n\n## Step times (ms)\n")
    print("| step | real GPU | phantora + measured db | phantora, models only |")
    print("|---|---|---|---|")
    for s in sorted(set(real) | set(sim["db"]) | set(sim["model"])):
        cells = [real.get(s), sim["db"].get(s), sim["model"].get(s)]
        print(f"| {s} | " + " | ".join("-" if c is None else f"{c:.1f}" for c in cells) + " |")
    print("\n## GPU time by source (us)\n")
    print("| run | pinned | measured | modelled | default |")
    print("|---|---|---|---|---|")
    for m in ("db", "model"):
        with open(os.path.join(out, f"sim-{m}", "report.json")) as f:
            src = json.load(f)["gpu_time"]["by_source"]  # sources with no time are left out
        print(f"| {m} | " + " | ".join(
            f"{src.get(k, {'time_s': 0})['time_s'] * 1e6:.3f}" for k in ("pinned", "measured", "modelled", "default"))
            + " |")
    print("\n## GPU time by family (ms; count of operations)\n")
    print("| family | phantora + measured db, by source | phantora, models only |")
    print("|---|---|---|")
    fams = {}
    for m in ("db", "model"):
        with open(os.path.join(out, f"sim-{m}", "report.json")) as f:
            fams[m] = json.load(f)["gpu_time"].get("by_family", {})

    def cell(sources):
        return ", ".join(f"{src} {v['time_s'] * 1e3:.3f} ({v['count']})"
                         for src, v in sorted(sources.items())) or "-"

    for fam in sorted(set(fams["db"]) | set(fams["model"])):
        print(f"| {fam} | {cell(fams['db'].get(fam, {}))} | {cell(fams['model'].get(fam, {}))} |")
    print("\n## Measured rows against the models (`phantora db calibrate`)\n\n```")
    with open(os.path.join(out, "calibrate.txt")) as f:
        print(f.read().rstrip())
    print("```\n\n## What was not measured (`profile.log`)\n\n```")
    with open(os.path.join(out, "profile.log")) as f:
        for line in f:
            if line.startswith(("not measured", "  e.g.", "FAILED", "dry run", "the device was")) \
                    or "rows written" in line or "launches recorded" in line:
                print(line.rstrip())
    print("```")


if __name__ == "__main__":
    main()
