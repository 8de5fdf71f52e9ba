#!/usr/bin/env python3
"""DDP's gradient all-reduces overlap the backward (docs/time.md, "Host clocks").

Runs examples/gpt.py with DDP on 2 simulated hosts x 1 H100 (--cpu-time model, 3 steps) and
reads the trace of the last step, between the job's last two torch.cuda.synchronize() calls.
DDP all-reduces a bucket of gradients as soon as the backward has produced it, on its NCCL
stream, while the backward goes on producing the next buckets on the compute stream. So every
bucket but the last overlaps backward kernels on the same GPU for (nearly) its whole duration;
the last one (the first layer's gradients, produced at the very end) has nothing left to overlap.
Under one host clock per process the NCCL watchdog's polling stopped the backward at every
all-reduce, and none overlapped.

Usage: ddp_overlap.py PHANTORA TORCHRUN GPT_PY WORK_DIR PORT
"""
import json
import os
import shutil
import subprocess
import sys

phantora, torchrun, gpt, work, port = sys.argv[1:6]
out = os.path.join(work, "out")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
cmd = [phantora, "run", "--quiet", "--hosts", "2", "--gpus-per-host", "1", "--gpu", "h100",
       "--cpu-time", "model", "--timeout", "600", "--out", out, "--",
       torchrun, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d",
       "--rdzv-endpoint", f"localhost:{port}", gpt, "--model", "gpt-small", "--parallel", "ddp",
       "--steps", "3"]
print("$", " ".join(cmd), flush=True)
proc = subprocess.run(cmd, capture_output=True, text=True, timeout=800)
print(proc.stdout[-3000:], proc.stderr[-3000:])
if proc.returncode != 0:
    sys.exit(f"phantora run failed with {proc.returncode}")

with open(os.path.join(out, "trace.json"), encoding="utf-8") as f:
    trace = json.load(f)
events = trace["traceEvents"] if isinstance(trace, dict) else trace
with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
    report = json.load(f)

failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


check(report["communication"]["late_collective_starts"] == 0, "no collective started late")
spans = [e for e in events if e.get("ph") == "X"]
for pid in sorted({e["pid"] for e in spans}):
    mine = [e for e in spans if e["pid"] == pid]
    syncs = sorted(e["ts"] + e["dur"] for e in mine
                   if e["cat"] == "host-wait" and e["name"] == "cudaDeviceSynchronize")
    check(len(syncs) >= 2, f"pid {pid}: the job's step-end synchronizations are in the trace")
    if len(syncs) < 2:
        continue
    begin, end = syncs[-2], syncs[-1]
    buckets = sorted((e for e in mine if e["cat"] == "collective" and e["name"] == "ncclAllReduce"
                      and begin <= e["ts"] < end), key=lambda e: e["ts"])
    kernels = [e for e in mine if e["cat"] == "kernel" and begin <= e["ts"] < end]
    check(len(buckets) >= 3, f"pid {pid}: the last step all-reduces {len(buckets)} buckets")
    if not buckets:
        continue

    def overlapped(c):
        return sum(max(0.0, min(c["ts"] + c["dur"], k["ts"] + k["dur"]) - max(c["ts"], k["ts"]))
                   for k in kernels if k["tid"] != c["tid"])

    early = buckets[:-1]
    share = sum(overlapped(c) for c in early) / sum(c["dur"] for c in early)
    check(share >= 0.8, f"pid {pid}: all-reduces before the last bucket overlap the backward for "
          f"{share:.1%} of their time (>= 80 %)")
    for c in early:
        check(overlapped(c) > 0.5 * c["dur"],
              f"pid {pid}: bucket of {c['args'].get('bytes')} B at {c['ts'] / 1e3:.3f} ms "
              f"overlaps compute for {overlapped(c) / c['dur']:.0%} of its {c['dur']:.1f} us")
    whole = sum(c["dur"] for c in buckets)
    print(f"pid {pid}: last step: {len(buckets)} all-reduces, {whole / 1e3:.3f} ms, "
          f"{sum(overlapped(c) for c in buckets) / whole:.1%} of it overlapping compute")
for g in report["gpus"]:
    print(f"GPU: communication {g['communication_s'] * 1e3:.3f} ms, exposed "
          f"{g['exposed_communication_s'] * 1e3:.3f} ms")
if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("ddp overlap: all checks passed")
