#!/usr/bin/env python3
"""Runs scripts/gemm_timing.py under `phantora run` (the command after --, --cpu-time zero, so
back-to-back products are timed by the GPU alone) and checks it against the model by hand:

  4096^3 bf16, op n/n, on h100: 8 waves of 128 x 128 tiles at 989.4 TFLOPS x 0.801 over 132
  SMs = 178.8 us, plus 4 us of overhead = 182.8 us (GemmModel.LargeBf16CubeOnH100ByHand)

and that each shape reaches cuBLAS in the orientation its signature names (the report's GEMM
signatures carry the same m, n, k and op_a / op_b), so that the script's GPU measurements and
the model's prices are of the same products.

Usage: gemm_timing_check.py RUN_DIR -- phantora run ... --out RUN_DIR -- python gemm_timing.py ...
"""
import json
import os
import re
import subprocess
import sys

LINE = re.compile(r"^gemm m=(\d+) n=(\d+) k=(\d+) op_a=([nt]) op_b=([nt]) time_us=([0-9.]+) "
                  r"tflops=([0-9.]+)$", re.M)


def main():
    run_dir = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(p.stdout[-3000:], p.stderr[-3000:])
    failures = []

    def expect(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            failures.append(what)

    expect(p.returncode == 0, "phantora run exits 0")
    with open(os.path.join(run_dir, "job.log")) as f:
        rows = LINE.findall(f.read())
    shapes = [(int(m), int(n), int(k), a, b) for m, n, k, a, b, _, _ in rows]
    expect(shapes == [(4096, 4096, 4096, "n", "n"), (8192, 2304, 768, "t", "n")],
           f"one line per signature, in order (got {shapes})")
    if rows:
        us = float(rows[0][5])
        expect(abs(us - 182.8) < 0.1, f"4096^3 on h100: 182.8 us by hand (got {us})")
        expect(abs(float(rows[0][6]) - 2 * 4096**3 / us / 1e6) < 0.1, "TFLOP/s = 2mnk / time")
    with open(os.path.join(run_dir, "report.json")) as f:
        kernels = [k["kernel"] for k in json.load(f)["top_kernels"]]
    for m, n, k, a, b in shapes:
        prefix = f"gemm:m={m},n={n},k={k},"
        expect(any(s.startswith(prefix) and f"op_a={a},op_b={b}," in s for s in kernels),
               f"{prefix} op_a={a} op_b={b} reaches cuBLAS as its signature says")
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
