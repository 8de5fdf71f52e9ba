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
# The sweep: 6 squares, 6 of the GPT, 15 of the Llama 3 8B step, 8 partial waves, 5 few-tile
# long-K shapes, 8 alignment shapes; and the job's own GEMM.
expect(re.search(r"^h200\s+gemm\s+49\s", md, re.M) is not None, "49 GEMM rows calibrated")
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

# One steady step from 6- and 11-step runs on both sides (the real side's JSON as
# gpu_kernel_times.py writes it, the simulated side's trace.json with mangled names), by hand:
# the GEMM grows by 5 x 100 us, the elementwise kernel by 5 x 40 us on the GPU and 5 x 30 us in
# the model; busy time is the union of the spans.
import io  # noqa: E402
import json  # noqa: E402
from contextlib import redirect_stdout  # noqa: E402
from gpu_kernel_times import summarize  # noqa: E402

ELEMENTWISE = "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, " \
    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
MANGLED = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
steps_dir = os.path.join(a.out, "steps")
os.makedirs(steps_dir, exist_ok=True)
for n in (6, 11):
    events = []
    for i in range(n):  # step i: a GEMM at 1000 i for 100 us, then the fill for 40 us
        events += [("nvjet_tst_128x256_64x4", 1000 * i, 1000 * i + 100),
                   ("void " + ELEMENTWISE, 1000 * i + 100, 1000 * i + 140)]
    with open(os.path.join(steps_dir, f"real-kernels-{n}.json"), "w") as f:
        json.dump(summarize(events), f)
    trace = []
    for i in range(n):  # the model: 90 us and 30 us, overlapping by 10 us
        trace += [{"ph": "X", "name": "gemm:m=8,n=8,k=8", "ts": 1000 * i, "dur": 90,
                   "args": {"gpu": 0}},
                  {"ph": "X", "name": MANGLED, "ts": 1000 * i + 80, "dur": 30,
                   "args": {"gpu": 0}}]
    d = os.path.join(steps_dir, "sim-model" if n == 6 else "sim-model-11")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "trace.json"), "w") as f:
        json.dump({"traceEvents": trace}, f)
buf = io.StringIO()
with redirect_stdout(buf):
    gpu_check_compare.step_comparison(steps_dir)
table = buf.getvalue()
print(table)
expect("| busy (union of spans) | 0.140 | 0.110 | 0.786 |" in table,
       "busy per step: 140 us on the GPU, 110 us in the model (the overlap counted once)")
expect("| gemm | 0.100 | 0.090 | 0.900 |" in table, "GEMMs by family, per step")
expect("| other kernels | 0.040 | 0.030 | 0.750 |" in table, "other kernels by family, per step")
expect(f"| `{ELEMENTWISE[:110]}` | 0.040 | 0.030 |" in table,
       "a kernel matched by name across the profiler's and the simulator's naming")
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
