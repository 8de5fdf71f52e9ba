#!/usr/bin/env python3
"""Checks the trace of tests/pytorch/cudnn_batch_norm.py (RUN_DIR, its --out directory): each
cuDNN batch normalization call is one kernel priced by the bandwidth model from the bytes its
descriptors give (intercept/src/cudnn_batch_norm_work.hpp), by hand: x is 8 x 16 x 32 x 32 fp32
(X = 524,288 bytes), each per-channel tensor 16 floats (P = 64 bytes).

  cudnn_batch_norm_forward_training   reads x, scale, bias, running mean and variance
                                      (X + 4P); writes y, running mean and variance, saved
                                      mean and inverse variance (X + 4P)
  cudnn_batch_norm_backward           reads x, dy, scale, saved mean and inverse variance
                                      (2X + 3P); writes dx, scale and bias gradients (X + 2P)
  cudnn_batch_norm_forward_inference  reads x, scale, bias, running mean and variance
                                      (X + 4P); writes y (X)

  time = floor + (read + written) / (HBM x memory_efficiency)

with the H100's figures (gpus.toml, models.toml).

Usage: cudnn_batch_norm_check.py RUN_DIR
"""
import sys

from inductor_check import h100_figures
from trace_checks import memory_bound_by_hand
from trace_events import gpu_spans

X, P = 8 * 16 * 32 * 32 * 4, 16 * 4
EXPECTED = {
    "cudnn_batch_norm_forward_training": (X + 4 * P, X + 4 * P),
    "cudnn_batch_norm_backward": (2 * X + 3 * P, X + 2 * P),
    "cudnn_batch_norm_forward_inference": (X + 4 * P, X),
}


def main():
    rate, floor_us = h100_figures()
    failures = memory_bound_by_hand(gpu_spans(sys.argv[1]), EXPECTED, rate, floor_us,
                                    lambda n: n == 1, "1")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("cuDNN batch normalization priced from its bytes")


if __name__ == "__main__":
    main()
