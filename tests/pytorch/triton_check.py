#!/usr/bin/env python3
"""Checks the trace and report of tests/pytorch/triton_kernels.py (RUN_DIR, its --out
directory): each memory-bound Triton kernel it launches itself is priced by the bandwidth model
from the bytes of the tensors its source loads from and stores to, by hand (M = 8192, N = 4096,
bf16 = 2 bytes, f32 and int64 as their sizes):

  add_kernel          reads x and y (2 x M N x 2), writes out (M N x 2); launched by the
                      program and by inductor inside doubled_sum, twice each
  rms_norm_kernel     reads X (M N x 2) and W (N x 2), writes Y (M N x 2) and Rstd (M x 4);
                      every launch, triton.autotune's benchmarks of both configurations too
  gather_rows_kernel  reads Index (M/2 x 8) and Table (the whole of x, M N x 2: the launch does
                      not say which rows), writes Out (M/2 N x 2)

  time = floor + (read + written) / (HBM x memory_efficiency)

with the H100's figures (gpus.toml, models.toml). tile_product_kernel calls tl.dot: it must be
priced by the default model and named in the report's gpu_time.defaulted_kernels.

Usage: triton_check.py RUN_DIR
"""
import json
import os
import sys

from inductor_check import h100_figures
from trace_checks import memory_bound_by_hand
from trace_events import gpu_spans

M, N = 8192, 4096
EXPECTED = {
    "add_kernel": (2 * M * N * 2, M * N * 2),
    "rms_norm_kernel": (M * N * 2 + N * 2, M * N * 2 + M * 4),
    "gather_rows_kernel": (M // 2 * 8 + M * N * 2, M // 2 * N * 2),
}


def main():
    run_dir = sys.argv[1]
    rate, floor_us = h100_figures()
    spans = gpu_spans(run_dir)
    failures = memory_bound_by_hand(spans, EXPECTED, rate, floor_us, lambda n: n >= 2,
                                    "at least 2")
    if len([e for e in spans if e["name"] == "add_kernel"]) != 4:
        failures.append("add_kernel: expected 4 launches, 2 of them inside the compiled region")
    # triton.autotune ran each of the two configurations at least once before the first call.
    if len([e for e in spans if e["name"] == "rms_norm_kernel"]) < 4:
        failures.append("rms_norm_kernel: autotuning's benchmark launches are missing")
    with open(os.path.join(run_dir, "report.json")) as f:
        defaulted = {k["kernel"] for k in json.load(f)["gpu_time"].get("defaulted_kernels", [])}
    print(f"defaulted kernels: {sorted(defaulted)}")
    if defaulted != {"tile_product_kernel"}:
        failures.append(f"defaulted kernels {sorted(defaulted)}, expected only tile_product_kernel")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("Triton kernels launched by the program priced from their bytes")


if __name__ == "__main__":
    main()
