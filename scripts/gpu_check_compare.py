#!/usr/bin/env python3
"""Writes scripts/gpu-check.sh's comparison (Markdown, to stdout) from the files it left in
--out: real.log, sim-db/ and sim-model/ (report.json, job.log), calibrate.txt, profile.log,
and on a GPU clocks.csv, gemm-timing.txt, memory-timing.txt, real-kernels-{6,11}.json and
sim-model-11/. A file a failed step did not write is named as missing and the rest is still
compared."""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess

from gpu_kernel_times import summarize

# examples/gpt.py's line: "step    2/6 | loss ... | step time 31.0 ms | tokens/s/GPU ..."
STEP = re.compile(r"\bstep\s+(\d+)(?:/\d+)?\b.*?step time ([0-9.]+) ms")


def step_times(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {int(m.group(1)): float(m.group(2)) for m in map(STEP.search, f) if m}


def load_json(path):
    if not os.path.exists(path):
        print(f"\n({path} is missing: that step failed)\n")
        return {}
    with open(path) as f:
        return json.load(f)


def show_file(path, keep=lambda line: True):
    if not os.path.exists(path):
        print(f"({os.path.basename(path)} is missing: that step failed)")
        return
    with open(path) as f:
        for line in f:
            if keep(line):
                print(line.rstrip())


# nvidia-smi's CSV headers: the canonical field names (clocks.current.sm for clocks.sm), with
# " [unit]" appended; older drivers name the reasons field clocks_throttle_reasons.
FIELD_ALIASES = {"clocks.current.sm": "clocks.sm", "clocks.current.memory": "clocks.mem",
                 "clocks_throttle_reasons.active": "reasons", "clocks_event_reasons.active": "reasons"}


def clocks_summary(path):
    """The SM clock and power while the GPU was busy (utilisation >= 90 %), from the CSV
    gpu-check.sh's nvidia-smi sampler wrote."""
    if not os.path.exists(path):
        return
    with open(path) as f:
        rows = []
        for r in csv.DictReader(f, skipinitialspace=True):
            row = {}
            for k, v in r.items():
                if k is None or v is None:
                    continue
                name = re.sub(r"\s*\[.*\]$", "", k.strip())
                row[FIELD_ALIASES.get(name, name)] = v.strip().split(" ")[0]
            rows.append(row)

    def number(row, name):
        try:
            return float(row.get(name, ""))
        except ValueError:
            return None

    busy = [r for r in rows if (number(r, "utilization.gpu") or 0) >= 90]
    print(f"\n## Clocks under load (clocks.csv: {len(rows)} samples, {len(busy)} at >= 90 % "
          "utilisation)\n")
    if not busy:
        return
    print("| quantity | min | median | max |\n|---|---|---|---|")
    for name in ("clocks.sm", "clocks.mem", "power.draw", "temperature.gpu"):
        vals = [v for v in (number(r, name) for r in busy) if v is not None]
        if vals:
            print(f"| {name} | {min(vals):g} | {statistics.median(vals):g} | {max(vals):g} |")
    reasons = {}
    for r in busy:
        reasons[r.get("reasons", "?")] = reasons.get(r.get("reasons", "?"), 0) + 1
    print("\nclock event reasons while busy (nvidia-smi's bitmask: samples): " +
          ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())))
    print("power limit (W): " + ", ".join(sorted({r.get("power.limit", "?") for r in rows})))


# Kernel families by name, first match wins: flash attention's kernels carry cutlass types in
# their names, so attention is tried before GEMMs; the simulator names GEMMs by signature.
FAMILIES = (("attention", re.compile(r"flash|fmha|attention", re.I)),
            ("gemm", re.compile(r"^gemm:|gemm|nvjet|cutlass|xmma|cublas", re.I)),
            ("copies and memsets", re.compile(r"^(memcpy|memset)|^Memcpy|^Memset")))


def family(name):
    return next((f for f, pattern in FAMILIES if pattern.search(name)), "other kernels")


def without_return_type(name):
    """A demangled kernel name without its leading `void`, as both sides are compared."""
    return name[5:] if name.startswith("void ") else name


def demangled(names):
    """c++filt of each name (the simulator's trace keeps mangled names; the profiler demangles),
    without its return type, so both sides name a kernel alike."""
    names = list(names)
    if shutil.which("c++filt") and names:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True).stdout.splitlines()
        if len(out) == len(names):
            names = out
    return [without_return_type(n) for n in names]


def sim_kernel_times(run_dir, gpu=0):
    """A simulated run's GPU spans (trace.json), summarised as gpu_kernel_times.py does."""
    path = os.path.join(run_dir, "trace.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        t = json.load(f)
    spans = [e for e in (t["traceEvents"] if isinstance(t, dict) else t)
             if e.get("ph") == "X" and e.get("args", {}).get("gpu") == gpu]
    names = demangled(e["name"] for e in spans)
    return summarize([(n, e["ts"], e["ts"] + e["dur"]) for n, e in zip(names, spans)])


def real_kernel_times(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        k = json.load(f)
    k["kernels"] = {without_return_type(n): v for n, v in k["kernels"].items()}
    return k


def one_step(short, long_, steps):
    """Per step: (long run - short run) / steps, busy time and per-kernel totals (us)."""
    kernels = {}
    for name in set(short["kernels"]) | set(long_["kernels"]):
        us = long_["kernels"].get(name, [0, 0.0])[1] - short["kernels"].get(name, [0, 0.0])[1]
        if us:
            kernels[name] = us / steps
    return (long_["busy_us"] - short["busy_us"]) / steps, kernels


def step_comparison(out, steps=5):
    """The GPT's steady step on the GPU (torch.profiler) against the simulated one, from the
    6- and 11-step runs gpu-check.sh makes on each side."""
    real = [real_kernel_times(os.path.join(out, f"real-kernels-{n}.json")) for n in (6, 11)]
    sim = [sim_kernel_times(os.path.join(out, d)) for d in ("sim-model", "sim-model-11")]
    if None in real or None in sim:
        return
    real_busy, real_k = one_step(*real, steps)
    sim_busy, sim_k = one_step(*sim, steps)
    print("\n## One step's GPU time: the GPU (torch.profiler) against the models (ms)\n")
    print("From the 6- and 11-step runs of each side: (11-step total - 6-step total) / 5.\n")
    print("| | GPU | models | models / GPU |\n|---|---|---|---|")

    def row(label, r, m):
        print(f"| {label} | {r / 1e3:.3f} | {m / 1e3:.3f} | "
              + (f"{m / r:.3f}" if r > 0 else "-") + " |")

    row("busy (union of spans)", real_busy, sim_busy)
    by_family = {}
    for side, kernels in (("real", real_k), ("sim", sim_k)):
        for name, us in kernels.items():
            by_family.setdefault(family(name), {"real": 0.0, "sim": 0.0})[side] += us
    for fam in sorted(by_family):
        row(fam, by_family[fam]["real"], by_family[fam]["sim"])
    print("\nThe ten longest kernels on the GPU other than GEMMs, by name:\n")
    print("| kernel | GPU | models |\n|---|---|---|")
    others = sorted(((us, n) for n, us in real_k.items() if family(n) != "gemm"), reverse=True)
    for us, name in others[:10]:
        m = sim_k.get(name)
        print(f"| `{name[:110]}` | {us / 1e3:.3f} | " + ("-" if m is None else f"{m / 1e3:.3f}")
              + " |")


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
        # sources with no time are left out
        src = load_json(os.path.join(out, f"sim-{m}", "report.json")).get("gpu_time", {}).get(
            "by_source", {})
        print(f"| {m} | " + " | ".join(
            f"{src.get(k, {'time_s': 0})['time_s'] * 1e6:.3f}" for k in ("pinned", "measured", "modelled", "default"))
            + " |")
    print("\n## GPU time by family (ms; count of operations)\n")
    print("| family | phantora + measured db, by source | phantora, models only |")
    print("|---|---|---|")
    fams = {}
    for m in ("db", "model"):
        fams[m] = load_json(os.path.join(out, f"sim-{m}", "report.json")).get(
            "gpu_time", {}).get("by_family", {})

    def cell(sources):
        return ", ".join(f"{src} {v['time_s'] * 1e3:.3f} ({v['count']})"
                         for src, v in sorted(sources.items())) or "-"

    for fam in sorted(set(fams["db"]) | set(fams["model"])):
        print(f"| {fam} | {cell(fams['db'].get(fam, {}))} | {cell(fams['model'].get(fam, {}))} |")
    print("\n## Measured rows against the models (`phantora db calibrate`)\n\n```")
    show_file(os.path.join(out, "calibrate.txt"))
    print("```\n\n## What was not measured (`profile.log`)\n\n```")
    show_file(os.path.join(out, "profile.log"), lambda line: line.startswith(
        ("not measured", "  e.g.", "FAILED", "dry run", "the device was"))
        or "rows written" in line or "launches recorded" in line)
    print("```")
    for name, title in (("gemm-timing.txt", "GEMMs through torch.matmul (`scripts/gemm_timing.py`)"),
                        ("memory-timing.txt",
                         "Fills, copies and adds by size (`scripts/memory_timing.py`)")):
        if os.path.exists(os.path.join(out, name)):
            print(f"\n## {title}\n\n```")
            show_file(os.path.join(out, name))
            print("```")
    step_comparison(out)
    clocks_summary(os.path.join(out, "clocks.csv"))


if __name__ == "__main__":
    main()
