#!/usr/bin/env python3
"""Checks the trace of tests/pytorch/inductor_kernels.py (RUN_DIR, its --out directory): each of
its inductor Triton kernels is priced by the bandwidth model from the bytes its tensors hold, by
hand (N = 4096, bf16 = 2 bytes, f32 = 4):

  scale_add            triton_poi_*  reads 2 x N^2 x 2, writes N^2 x 2
  row_sum_of_squares   triton_red_* or triton_per_*  reads N^2 x 2, writes N x 4
  add_bias             triton_poi_*  reads N^2 x 2 + N x 2, writes N^2 x 2
  scaled_left_quarter  triton_poi_*  reads and writes N^2 / 4 x 2 (the slice, not all of x)

  time = floor + (read + written) / (HBM x memory_efficiency)

with the H100's figures (gpus.toml: 3350 GB/s; models.toml: efficiency 0.90, floor 3 us). The
last launch of each kernel is checked (the first call of a compiled function may autotune).
A kernel priced by default, or from other bytes, fails it.

Usage: inductor_check.py RUN_DIR
"""
import sys

from kernels_data import kernels_data
from trace_events import gpu_spans

N = 4096


def h100_figures():
    hbm = kernels_data("gpus")["gpu"]["h100"]["perf"]["hbm_gbytes_per_s"] * 1e9
    models = kernels_data("models")
    efficiency = models["gpu"]["h100"]["memory_efficiency"]
    floor_us = models["memory_bound"]["floor_us"]
    return hbm * efficiency, floor_us


def main():
    rate, floor_us = h100_figures()
    triton = [e for e in gpu_spans(sys.argv[1]) if e["name"].startswith("triton_")]
    # Program order of the second round: the last four Triton launches.
    if len(triton) < 8:
        sys.exit(f"FAIL: expected at least 8 Triton launches on GPU 0, found {len(triton)}")
    last = triton[-4:]
    expected = [
        ("scale_add", "triton_poi_", 2 * N * N * 2, N * N * 2),
        ("row_sum_of_squares", ("triton_red_", "triton_per_"), N * N * 2, N * 4),
        ("add_bias", "triton_poi_", N * N * 2 + N * 2, N * N * 2),
        ("scaled_left_quarter", "triton_poi_", N * N // 4 * 2, N * N // 4 * 2),
    ]
    failures = []
    for event, (what, prefix, read, written) in zip(last, expected):
        name, args = event["name"], event.get("args", {})
        want_us = floor_us + (read + written) / rate * 1e6
        line = (f"{what}: {name} {event['dur']:.3f} us, source {args.get('source')}; "
                f"by hand {want_us:.3f} us ({read} B read, {written} B written)")
        print(line)
        if not name.startswith(prefix):
            failures.append(f"{what}: kernel {name} is not {prefix}*")
        if args.get("source") != "modelled":
            failures.append(f"{what}: priced by {args.get('source')}, not the bandwidth model")
        if abs(event["dur"] - want_us) > 0.01:
            failures.append(f"{what}: {event['dur']:.3f} us, by hand {want_us:.3f} us")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("inductor kernels priced from their bytes")


if __name__ == "__main__":
    main()
