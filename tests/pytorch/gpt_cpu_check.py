#!/usr/bin/env python3
"""examples/gpt.py on the CPU (gloo, no simulator), gpt-tiny, batch 2, three steps: the script's
own arithmetic and values, which the simulated runs print but cannot compute (a virtual GPU
computes no large tensor's values, so their losses print as 0):

- the parameter count is the closed form of tests/pytorch/gpt_shapes.py;
- the first step's loss is the cross-entropy of random tokens under the initial model. The
  output layer's weights are truncated normal with std h^-1/2 (cut at 3 std, which keeps 97.33 %
  of the variance) applied to RMS-normalised hidden states, so each logit is ~N(0, 0.9733) and
  independent of the target: E[loss] = ln V + 0.9733 / 2 = 7.418 for V = 1024;
- the average line is the mean of the steps after the first, and tokens/s is the step's tokens
  over its time.

Usage: gpt_cpu_check.py PYTHON GPT_PY
"""
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_shapes import MODELS, Shape  # noqa: E402

python, gpt = sys.argv[1:3]
BATCH, STEPS = 2, 3
dims = MODELS["gpt-tiny"]
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


cmd = [python, gpt, "--device", "cpu", "--model", "gpt-tiny", "--parallel", "none",
       "--batch-size", str(BATCH), "--steps", str(STEPS)]
print("$", " ".join(cmd), flush=True)
proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
print(proc.stdout, proc.stderr)
if proc.returncode != 0:
    sys.exit(f"gpt.py failed ({proc.returncode})")
out = proc.stdout

m = re.search(r"([\d.]+)M parameters", out)
params = Shape(dims).params
check(m is not None and m.group(1) == f"{params / 1e6:.1f}",
      f"printed {m.group(1) if m else None}M parameters = {params:,} by hand")
steps = [(float(loss), float(ms), float(tps.replace(",", ""))) for loss, ms, tps in re.findall(
    r"^step +\d+/\d+ \| loss ([\d.]+) .*\| step time ([\d.]+) ms \| tokens/s/GPU ([\d,]+)", out, re.M)]
check(len(steps) == STEPS, f"{STEPS} step lines ({len(steps)})")
expected_loss = math.log(dims.vocab) + 0.9733 / 2
if steps:
    loss = steps[0][0]
    check(abs(loss - expected_loss) <= 0.03 * expected_loss,
          f"first loss {loss} = ln {dims.vocab} + 0.9733/2 = {expected_loss:.3f} within 3 %")
tokens = BATCH * dims.seq
for loss, ms, tps in steps:
    # The printed time is rounded to 0.05 ms; tokens/s was computed from the unrounded one.
    lo, hi = tokens / ((ms + 0.05) / 1e3), tokens / (max(ms - 0.05, 1e-3) / 1e3)
    check(lo - 1 <= tps <= hi + 1, f"{tps:,.0f} tokens/s = {tokens} tokens / {ms} ms")
m = re.search(r"average over (\d+) step\(s\): step time ([\d.]+) ms", out)
if check(m is not None and int(m.group(1)) == STEPS - 1, "the average leaves out the first step"):
    mean = sum(ms for _, ms, _ in steps[1:]) / (STEPS - 1)
    check(abs(float(m.group(2)) - mean) <= 0.1, f"average {m.group(2)} ms = mean {mean:.2f} ms")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("gpt on the CPU: all checks passed")
