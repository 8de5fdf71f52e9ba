#!/usr/bin/env python3
"""Checks the report and trace of tests/pytorch/cudnn_convolutions.py (RUN_DIR, its --out
directory): every kernel of its CNN step is priced by a model, none by default (the report's
gpu_time.defaulted_kernels is empty); cuDNN's three convolution passes ran as their own kernels;
and its pooling, which PyTorch runs itself (3 x 3, stride 2, over the 7 x 7 convolution's
16 x 64 x 112 x 112 bf16 output under autocast, channels-last), is priced by the bandwidth model
from its tensors by hand (torch_counted_kernels.cpp):

  max_pool_forward_nhwc   reads x (16·64·112·112 x 2 B), writes 16·64·56·56 values (2 B) and
                          their int64 indices (8 B)
  max_pool_backward_nhwc  reads the output gradient and the indices, writes x's gradient

and its average pooling (2 x 2, stride 2, over the last 1 x 1 convolution's 16 x 128 x 56 x 56
bf16 output): the forward reads it and writes 16·128·28·28 values, the backward (whose windows
tile the input: avg_pool2d_backward_nonoverlap_frame) reads that many gradients and writes the
input's

  time = floor + (read + written) / (HBM x memory_efficiency)

with the H100's figures (gpus.toml, models.toml).

Usage: cudnn_convolutions_check.py RUN_DIR
"""
import json
import os
import sys

from inductor_check import h100_figures
from trace_checks import Failures, exit_with, memory_bound_by_hand
from trace_events import gpu_spans

X = 16 * 64 * 112 * 112 * 2
Y = 16 * 64 * 56 * 56 * (2 + 8)
A = 16 * 128 * 56 * 56 * 2
B = 16 * 128 * 28 * 28 * 2
EXPECTED = {"max_pool_forward_nhwc": (X, Y), "max_pool_backward_nhwc": (Y, X),
            "avg_pool2d_out_cuda_frame_nhwc": (A, B),
            "avg_pool2d_backward_nonoverlap_frame": (B, A)}


def main():
    run_dir = sys.argv[1]
    failures = Failures()
    with open(os.path.join(run_dir, "report.json")) as f:
        gpu_time = json.load(f)["gpu_time"]
    defaulted = [k["kernel"] for k in gpu_time.get("defaulted_kernels", [])]
    print(f"defaulted kernels: {defaulted}")
    failures.expect(not defaulted, f"kernels priced by default: {defaulted}")
    spans = gpu_spans(run_dir)
    for name in ("cudnn_convolution_fprop", "cudnn_convolution_dgrad", "cudnn_convolution_wgrad"):
        ran = [e for e in spans if e["name"] == name]
        failures.expect(ran, f"no {name} kernel")
        failures.modelled(ran, "the convolution model")
    # PyTorch's kernels are named by their mangled names in the trace: keep the pooling ones
    # under the kernel's own name.
    pooling = [dict(e, name=key) for e in spans for key in EXPECTED if key in e["name"]]
    rate, floor_us = h100_figures()
    # Two training steps: each pooling kernel runs once per step.
    failures.extend(memory_bound_by_hand(pooling, EXPECTED, rate, floor_us, lambda n: n == 2,
                                         "2 (one per step)"))
    return failures


if __name__ == "__main__":
    exit_with(main())
