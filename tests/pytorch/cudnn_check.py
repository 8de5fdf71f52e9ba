#!/usr/bin/env python3
"""Checks the trace of tests/pytorch/cudnn_attention.py (RUN_DIR, its --out directory): cuDNN's
attention calls are priced by the attention model as cuDNN's kernels (kernels-db/data/models.toml:
[attention] cudnn_*_s0, [gpu.h100] cudnn_forward / cudnn_backward), from the graphs the program
built (2 x 16 heads of 128, 2048 tokens; every call compute-bound with every SM busy, 4 us the
model's fixed cost, t' = t - 4 us):

  without a mask, against flash on the same shape (a CTA's loop over 2048 keys plus s0):
    t'(cuDNN) = t'(flash) x (2048 + s0_cudnn_fwd) / (2048 + s0_fa2_fwd) x fa2_forward / cudnn_forward
  causal backward against the causal forward: a causal call of T = 2048 / 128 row blocks loops
  128 x (T (T + 1) / 2) x 128 steps plus s0 per row, work(s0) = 128^2 T (T + 1) / 2 + 2048 s0,
  either way round, so
    t'(bwd) = t'(fwd) x 2.5 x work(s0_cudnn_bwd) / work(s0_cudnn_fwd) x cudnn_forward / cudnn_backward

A graph decoded wrongly (the shape, the pass or the mask) or priced as another kernel fails it.

Usage: cudnn_check.py RUN_DIR
"""
import sys

from kernels_data import kernels_data
from trace_checks import Failures, exit_with
from trace_events import gpu_spans

FIXED_US = 4.0
SEQ, TILE = 2048, 128


def main():
    events = gpu_spans(sys.argv[1])
    fwd = [e for e in events if e["name"] == "cudnn_sdpa_forward"]
    bwd = [e for e in events if e["name"] == "cudnn_sdpa_backward"]
    flash = [e for e in events if "flash_fwd_kernel" in e["name"]]
    failures = Failures()
    expect = failures.expect

    expect(len(fwd) == 2 and len(bwd) == 1 and len(flash) == 1,
           f"kernels: {len(fwd)} cuDNN forward, {len(bwd)} backward, {len(flash)} flash; "
           "want 2, 1, 1")
    failures.modelled(fwd + bwd, "the attention model")
    if failures:
        return failures

    models = kernels_data("models")
    attention, h100 = models["attention"], models["gpu"]["h100"]

    check = failures.near

    def work(s0):
        blocks = SEQ // TILE
        return TILE * TILE * blocks * (blocks + 1) / 2 + SEQ * s0

    full, causal = fwd
    check("without a mask, against flash", full["dur"],
          FIXED_US + (flash[0]["dur"] - FIXED_US) * (SEQ + attention["cudnn_forward_s0"])
          / (SEQ + attention["fa2_forward_s0"]) * h100["fa2_forward"] / h100["cudnn_forward"])
    check("causal backward", bwd[0]["dur"],
          FIXED_US + (causal["dur"] - FIXED_US) * attention["backward_flops_factor"]
          * work(attention["cudnn_backward_s0"]) / work(attention["cudnn_forward_s0"])
          * h100["cudnn_forward"] / h100["cudnn_backward"])
    expect(causal["dur"] < full["dur"], "the causal forward is not cheaper than the full one")
    return failures


if __name__ == "__main__":
    exit_with(main())
