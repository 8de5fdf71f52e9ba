#!/usr/bin/env python3
"""scripts/gpu-check.sh --dry-run against the stand-in GPU, every operation 10 us.

Expected by hand: the sweep's 12 GEMM shapes and the job's own GEMM (256 x 512 x 128, A
transposed: not in the sweep) are 13 measured GEMM rows, the job's copy one copy row, the
attention sweep is skipped (it needs PyTorch); the run with the database prices the job's GEMM
and copy from it, 10 + 10 = 20 us measured, the run without prices nothing as measured."""
import argparse
import os
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--repo", required=True)
ap.add_argument("--build", required=True)
ap.add_argument("--out", required=True)
a = ap.parse_args()
p = subprocess.run([os.path.join(a.repo, "scripts/gpu-check.sh"), "--dry-run", "--build-dir",
                    a.build, "--out", a.out], cwd=a.repo, capture_output=True, text=True)
print(p.stdout[-6000:], p.stderr[-3000:])
failures = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


expect(p.returncode == 0, "gpu-check.sh --dry-run exits 0")
md = p.stdout
expect(re.search(r"^\| db \| 0\.000 \| 20\.000 \|", md, re.M) is not None,
       "with the database: 20 us measured (the job's GEMM and copy, 10 us each)")
expect(re.search(r"^\| model \| 0\.000 \| 0\.000 \|", md, re.M) is not None,
       "without it: nothing measured")
expect("| gemm | measured 0.010 (1) | modelled " in md and "| copy | measured 0.010 (1) | " in md,
       "per family: the job's GEMM and copy measured, 10 us each, modelled without the database")
# The sweep: 6 squares, 6 of the GPT, 15 of the Llama 3 8B step; and the job's own GEMM.
expect(re.search(r"^h200\s+gemm\s+28\s", md, re.M) is not None, "28 GEMM rows calibrated")
expect(re.search(r"^h200\s+copy\s+1\s", md, re.M) is not None, "1 copy row calibrated")
expect("dry run: no attention sweep" in md, "the attention sweep is skipped and says so")
expect(os.path.exists(os.path.join(a.out, "kernels.db")), "the database is left in --out")
# The GPT's step lines (the dry run's job prints none): the comparison reads them per step.
sys.path.insert(0, os.path.join(a.repo, "scripts"))
import gpu_check_compare  # noqa: E402
sample = os.path.join(a.out, "steps.log")
with open(sample, "w") as f:
    f.write("step    1/3 | loss n/a (simulated) | grad norm n/a (simulated) | step time 35.4 ms | "
            "tokens/s/GPU 231,732 | MFU 20.0%\n"
            "average over 2 step(s): step time 31.9 ms | tokens/s/GPU 257,000\n"
            "step   12/30 | loss 2.5 | step time 120.0 ms | tokens/s/GPU 1\n")
steps = gpu_check_compare.step_times(sample)
expect(steps == {1: 35.4, 12: 120.0}, f"step lines of examples/gpt.py are read per step (got {steps})")
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
