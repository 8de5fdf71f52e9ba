#!/usr/bin/env python3
"""Times cuBLAS GEMMs through torch.matmul, one line per shape, with CUDA events.

The shapes are read from --signatures, by default scripts/gpu-check.sh's sweep
(scripts/gpu-check-sweep.txt: the square bf16 shapes, the example GPT's, every GEMM of
TorchTitan's Llama 3 8B step, partial waves and few-tile long-K shapes), in cuBLAS's column-major terms (C[m x n] = op(A)[m x k]
op(B)[k x n], op n or t).
The same script gives both sides of a comparison:

  python3 scripts/gemm_timing.py                                  # on a GPU: measured
  phantora run --gpu h200 -- python3 scripts/gemm_timing.py       # the cost model's prices

Each shape: --warmup untimed products, then --repetitions timed back to back between two
events (the GPU never idles, so its clock is the sustained one); the whole list is timed
--passes times and the last pass printed, so the first shapes do not see a cold GPU.
Output (stdout): `gemm m=.. n=.. k=.. op_a=. op_b=. time_us=.. tflops=..` per shape."""
import argparse
import os
import re

import torch

SIGNATURE = re.compile(r"gemm:m=(\d+),n=(\d+),k=(\d+),.*op_a=([nt]),op_b=([nt])")
SWEEP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-check-sweep.txt")


def operands(m, n, k, op_a, op_b):
    """Row-major torch operands whose product is cuBLAS's C (m x n column-major) = its
    row-major transpose (n x m) = op(B)^T op(A)^T, each laid out as cuBLAS would read it."""
    def make(rows, cols, transposed):
        t = torch.randn(cols, rows, device="cuda", dtype=torch.bfloat16) if transposed else \
            torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        return t.t() if transposed else t
    # op_b = n: B is k x n column-major, i.e. n x k row-major, read as is.
    left = make(n, k, op_b == "t")
    right = make(k, m, op_a == "t")
    return left, right


def back_to_back_us(launch, warmup, repetitions):
    """Microseconds per call of `launch`, its calls queued back to back between two events
    after `warmup` untimed ones (also scripts/memory_timing.py's timer)."""
    for _ in range(warmup):
        launch()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repetitions):
        launch()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / repetitions


def time_shape(shape, warmup, repetitions):
    m, n, k, op_a, op_b = shape
    left, right = operands(m, n, k, op_a, op_b)
    out = torch.empty(n, m, device="cuda", dtype=torch.bfloat16)
    return back_to_back_us(lambda: torch.matmul(left, right, out=out), warmup, repetitions)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--signatures", default=SWEEP,
                    help="gemm:m=..,n=..,... lines (default: gpu-check.sh's sweep)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repetitions", type=int, default=20)
    ap.add_argument("--passes", type=int, default=2)
    a = ap.parse_args()
    with open(a.signatures) as f:
        shapes = [(int(m[1]), int(m[2]), int(m[3]), m[4], m[5])
                  for m in map(SIGNATURE.search, f) if m]
    if not shapes:
        raise SystemExit("gemm_timing: no GEMM signature in " + a.signatures)
    print(f"gemm_timing: {torch.cuda.get_device_name()}, {len(shapes)} shapes, bf16 in and out")
    for p in range(a.passes):
        times = [time_shape(s, a.warmup, a.repetitions) for s in shapes]
    for (m, n, k, op_a, op_b), us in zip(shapes, times):
        print(f"gemm m={m} n={n} k={k} op_a={op_a} op_b={op_b} time_us={us:.2f} "
              f"tflops={2 * m * n * k / us / 1e6:.1f}", flush=True)


if __name__ == "__main__":
    main()
