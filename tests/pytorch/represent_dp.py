#!/usr/bin/env python3
"""--represent-dp against a fully live run (issue 9, part 3): examples/gpt.py with DDP and with
FSDP2, launched on 2 hosts x 2 H100 and launched on 1 host standing for 2 replicas; FSDP2 x
tensor parallel 4 on 2 hosts x 8 against 1 host x 8 standing for 2; FSDP2 x 2 pipeline stages
on 2 hosts x 4 against 1 host x 4 standing for 2. The steady-state step time (the median of
the printed steps after the first) must agree within 2 % (model CPU time), and the represented
run's report must describe the 2-host cluster while listing only the live GPUs.

DDP: the live data-parallel all-reduce over 2 ranks becomes one over 4 with the same gradient
buffer, which is what the 2-host job runs. FSDP2: the all-gathers and reduce-scatters keep their
whole arrays over 4 ranks; the live ranks hold half-size shards of twice the size, so the
optimizer step and memory differ slightly (docs/scale.md).

Usage: represent_dp.py PHANTORA TORCHRUN GPT_PY OUT_DIR PORT
"""
import json
import os
import re
import statistics
import subprocess
import sys

phantora, torchrun, gpt, out, port = sys.argv[1:6]
TOLERANCE = 0.02  # the "agree within 2 %"
failures = []


def run(name, hosts, extra, parallel, port_offset, gpus=2, job_args=()):
    out_dir = os.path.join(out, name)
    cmd = [phantora, "run", "--quiet", "--hosts", str(hosts), "--gpus-per-host", str(gpus),
           "--gpu", "h100", "--cpu-time", "model", "--timeout", "600", "--out", out_dir, *extra,
           "--", torchrun, "--nnodes", str(hosts), "--nproc-per-node", str(gpus),
           "--rdzv-backend", "c10d", "--rdzv-endpoint", f"localhost:{int(port) + port_offset}",
           gpt, "--model", "gpt-small", "--parallel", parallel, "--steps", "4", *job_args]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        sys.exit(f"{name}: phantora run failed ({proc.returncode}):\n{log[-4000:]}")
    # The steady-state step: the median of the steps after the first. On a machine loaded far
    # beyond its cores (16 ranks on 2 CI cores) one step of a live run has been disturbed by late
    # collective starts (docs/time.md; a known gap, counted in report.json) while the others
    # agreed to 0.1 %: the median is the step time, the disturbed steps are printed.
    steps = [float(m) for m in re.findall(r"^step +\d+/\d+ .*?step time ([\d.]+) ms", log, re.M)]
    with open(os.path.join(out_dir, "report.json"), encoding="utf-8") as f:
        report = json.load(f)
    print(f"  steps {steps} ms; late collective starts "
          f"{report['communication'].get('late_collective_starts')}", flush=True)
    return statistics.median(steps[1:]), report


def check(cond, message):
    print(("ok: " if cond else "FAIL: ") + message, flush=True)
    if not cond:
        failures.append(message)


def compare(label, name, hosts, parallel, port_offset, rep_flags, gpus=2, job_args=()):
    """The job on `hosts` hosts, then on 1 host standing for `hosts` (--represent-dp plus
    `rep_flags`); checks the step times agree within TOLERANCE and returns both reports."""
    live_ms, live = run(f"{name}_live_{hosts}x{gpus}", hosts, [], parallel, port_offset, gpus,
                        job_args)
    rep_ms, rep = run(f"{name}_rep_1x{gpus}_of_{hosts}", 1,
                      ["--represent-dp", str(hosts), *rep_flags], parallel, port_offset + 1, gpus,
                      job_args)
    off = (rep_ms - live_ms) / live_ms
    check(abs(off) <= TOLERANCE,
          f"{label}: represented step {rep_ms} ms vs live {live_ms} ms ({off * 100:+.2f} %)")
    return live, rep


for i, parallel in enumerate(["ddp", "fsdp"]):
    live, rep = compare(parallel, parallel, 2, parallel, 2 * i, [])
    cl = rep["cluster"]
    check(cl["hosts"] == 1 and cl.get("represented", {}).get("hosts") == 2 and
          cl["represented"]["gpus"] == 4, f"{parallel}: report describes 1 live of 2 hosts ({cl})")
    check(len(rep["gpus"]) == 2 and len(live["gpus"]) == 4,
          f"{parallel}: report lists the live GPUs ({len(rep['gpus'])} and {len(live['gpus'])})")
    check(len(rep["ranks"]) == 2, f"{parallel}: 2 live ranks ({len(rep['ranks'])})")

# 2-D: FSDP2 x tensor parallel 4. Live: 2 hosts x 8 (DP 4); represented: 1 host x 8 (DP 2,
# its data-parallel communicators the 2-rank ones) standing for 2.
live, rep = compare("fsdp x tp4", "fsdp_tp4", 2, "fsdp", 4, ["--dp-comms", "size:2"], gpus=8,
                    job_args=["--tp", "4"])
ops = rep["communication"]["operations"]
check(ops.get("ncclReduceScatter", {}).get("count", 0) > 0,
      f"fsdp x tp4: the data-parallel reduce-scatters ran ({ops.get('ncclReduceScatter')})")

# Pipeline parallel x FSDP2: 2 stages (1F1B), live 2 hosts x 4 (DP 4), represented 1 host x 4
# (DP 2) standing for 2. The pipeline's own 2-rank communicator matches size:2 as well; it
# carries only point-to-point traffic (copied per replica whatever the rule) and the gradient
# norm's one-element all-reduce.
live, rep = compare("fsdp x pp2", "fsdp_pp2", 2, "fsdp", 6, ["--dp-comms", "size:2"], gpus=4,
                    job_args=["--pp", "2"])
check(rep["communication"]["operations"].get("ncclSend", {}).get("count", 0) > 0,
      "fsdp x pp2: the pipeline's sends ran")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("represent-dp agrees with the live runs")
