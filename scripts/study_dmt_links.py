#!/usr/bin/env python3
"""Network and NVLink bytes per training step of each point of a DMT study sweep, from the
simulator's link counters (each point's links.csv, docs/report.md).

Usage: study_dmt_links.py SWEEP_DIR STEPS. Prints a Markdown table. The counters cover the whole
run (start-up broadcasts, every step); dividing by the steps gives a per-step average that
slightly overstates the steady state.
"""
import csv
import os
import sys

sweep, steps = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(os.path.join(sweep, "summary.csv"), encoding="utf-8")))
print("| point | status | step time | network bytes / step (all NICs, out) | NVLink bytes / step "
      "(all GPUs, out) | busiest NIC utilisation |")
print("|---|---|---:|---:|---:|---:|")
for r in rows:
    links = os.path.join(sweep, "points", r["point"], "links.csv")
    nic = nvlink = 0.0
    busiest = 0.0
    if os.path.exists(links):
        for link in csv.DictReader(open(links, encoding="utf-8")):
            b = float(link["bytes"])
            if link["kind"] == "nic-to-leaf":
                nic += b
                busiest = max(busiest, float(link["utilisation"]))
            elif link["kind"] == "gpu-to-switch":
                nvlink += b
    step = f"{float(r['step_time_s']) * 1e3:.2f} ms" if r["status"] == "ok" else "—"
    print(f"| {r['point']} | {r['status']} | {step} | {nic / steps / 1e6:,.1f} MB | "
          f"{nvlink / steps / 1e6:,.1f} MB | {100 * busiest:.1f} % |")
