#!/usr/bin/env python3
"""Runs that hang: the 16-rank GPT job (FSDP + tensor parallelism 4) N times on loaded cores.

Each run is `phantora run` of examples/gpt.py with 16 live ranks (2 hosts x 8 GPUs) while two
busy processes load the cores, stopped by --timeout. Prints each run's wall time and status and,
for a run stopped by --timeout, what the simulation stood at (report.json `message`) and what
the shims said held their processes' bounds (job.log, docs/reliability.md, "What holds a stalled
run"). Before the shim's hand-offs slept on futexes (docs/reliability.md, finding 9) one run in
10 to 20 hung on a 2-core machine.

  bench/reliability/loaded_ranks.py --build build [--runs 20] [--timeout 300]
Needs the PyTorch environment of scripts/setup-torch.sh. Python 3.11+ standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.path.expanduser("~/.cache/phantora/torch-venv")


def print_held_bounds(job_log):
    """The shims' reports of what held their processes' bounds, from the job's output."""
    try:
        with open(job_log, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for i, line in enumerate(lines):
        if line.startswith("phantora: pid ") and "has waited" in line and "its own bound" in line:
            print(f"    {line}", flush=True)
            for held in lines[i + 1:]:
                if not held.startswith("  "):
                    break
                print(f"    {held}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=300, help="--timeout of each run, seconds")
    ap.add_argument("--no-load", action="store_true")
    a = ap.parse_args()
    phantora = os.path.join(a.build, "tools", "phantora")
    load = [] if a.no_load else [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    hung = 0
    try:
        with tempfile.TemporaryDirectory(prefix="phantora-loaded-") as work:
            for i in range(a.runs):
                out = os.path.join(work, f"run{i}")
                cmd = [phantora, "run", "--quiet", "--hosts", "2", "--gpus-per-host", "8",
                       "--gpu", "h100", "--cpu-time", "model", "--timeout", str(a.timeout),
                       "--out", out, "--",
                       os.path.join(VENV, "bin", "torchrun"), "--nnodes", "2",
                       "--nproc-per-node", "8", "--rdzv-backend", "c10d", "--rdzv-endpoint",
                       f"localhost:{29700 + i}", os.path.join(ROOT, "examples", "gpt.py"),
                       "--model", "gpt-small", "--parallel", "fsdp", "--steps", "4", "--tp", "4"]
                start = time.monotonic()
                p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   cwd=ROOT)
                wall = time.monotonic() - start
                report = {}
                if os.path.exists(os.path.join(out, "report.json")):
                    with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
                        report = json.load(f)
                # Hand-offs between threads nobody took up, each of which held the simulation
                # for a second of real time (report.json ranks[].lapsed_handoffs; none expected).
                lapsed = sum(r.get("lapsed_handoffs", 0) for r in report.get("ranks", []))
                print(f"run {i + 1}: exit {p.returncode}, {wall:.0f} s, "
                      f"{report.get('status', 'no report')}, {lapsed} lapsed hand-off(s)",
                      flush=True)
                if p.returncode == 124:
                    hung += 1
                    # All of it: which rank holds the network, and the answers it has not taken up.
                    for line in report.get("message", "").splitlines():
                        print(f"    {line}", flush=True)
                    print_held_bounds(os.path.join(out, "job.log"))
    finally:
        for q in load:
            q.kill()
    print(f"{hung} of {a.runs} runs stopped by --timeout {a.timeout} s")
    return 1 if hung else 0


if __name__ == "__main__":
    sys.exit(main())
