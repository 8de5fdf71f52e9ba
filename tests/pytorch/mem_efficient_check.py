#!/usr/bin/env python3
"""Checks the trace of tests/pytorch/mem_efficient_sdpa.py (RUN_DIR, its --out directory): PyTorch's
memory-efficient attention kernels are priced by the attention model from the shapes in their
Params structs, not by default. With the constants of kernels-db/data/models.toml [attention]
(the memory-efficient kernels run at FA2's plateau × mem_efficient_rate × their head-dim rate,
with their own s0, both passes; fp32 at the TF32 peak over f32_mma_passes) and the h100 preset's
peaks (gpus.toml), every call here being compute-bound with every SM busy, and 4 us the model's
fixed cost (t' = t - 4 us):

  self-attention, against flash on the same shape (head dim 64, 2048 keys):
    t'(mem-eff) = t'(flash) × (2048 + s0_me) / (2048 + s0_fa2_fwd) × rate_fa2(64) / (rate × rate_me(64))
  cross-attention over 560 keys:   t'(cross) = t'(self) × (560 + s0_me) / (2048 + s0_me)
  fp32:                            t'(fp32)  = t'(self) × bf16 peak / (TF32 peak / passes)
  causal backward against its forward (the causal loops are the same length both ways when
  queries and keys are as many):  t'(bwd) = t'(fwd) × 2.5 × fa2_forward / fa2_backward
  with an additive mask:          t = t(self) (the bias's traffic is not modelled)

Were the shapes taken wrongly (the keys, the head dim, the mask) or the kernels priced by
default, a check fails.

Usage: mem_efficient_check.py RUN_DIR
"""
import sys

from kernels_data import kernels_data
from trace_checks import Failures, exit_with
from trace_events import gpu_spans

FIXED_US = 4.0
SEQ, CROSS = 2048, 560


def main():
    events = gpu_spans(sys.argv[1])
    flash = [e for e in events if "flash_fwd_kernel" in e["name"]]
    fwd = [e for e in events if "fmha_cutlassF_" in e["name"]]
    bwd = [e for e in events if "fmha_cutlassB_" in e["name"]]
    failures = Failures()
    expect = failures.expect

    # Program order: flash self; mem-eff self, cross, fp32, causal (its backward), masked.
    expect(len(flash) == 1 and len(fwd) == 5 and len(bwd) == 1,
           f"kernels: {len(flash)} flash, {len(fwd)} memory-efficient forward, {len(bwd)} "
           "backward; want 1, 5, 1")
    failures.modelled(fwd + bwd, "the attention model")
    if failures:
        return failures

    models = kernels_data("models")
    attention, h100 = models["attention"], models["gpu"]["h100"]
    perf = kernels_data("gpus")["gpu"]["h100"]["perf"]
    s0, s0_fa2 = attention["mem_efficient_s0"], attention["fa2_forward_s0"]

    check = failures.near

    def net(e):
        return e["dur"] - FIXED_US

    self_, cross, fp32, causal, masked = fwd
    check("self-attention against flash", self_["dur"],
          FIXED_US + net(flash[0]) * (SEQ + s0) / (SEQ + s0_fa2)
          * attention["fa2_head_dim_64"]  # head dim 64: the head-dim-64 anchors
          / (attention["mem_efficient_rate"] * attention["mem_efficient_head_dim_64"]))
    check("cross-attention over 560 keys", cross["dur"],
          FIXED_US + net(self_) * (CROSS + s0) / (SEQ + s0))
    check("fp32", fp32["dur"],
          FIXED_US + net(self_) * perf["bf16_tflops"]
          / (perf["tf32_tflops"] / attention["f32_mma_passes"]))
    check("causal backward", bwd[0]["dur"],
          FIXED_US + net(causal) * attention["backward_flops_factor"]
          * h100["fa2_forward"] / h100["fa2_backward"])
    check("additive mask", masked["dur"], self_["dur"])
    expect(causal["dur"] < self_["dur"], "the causal forward is not cheaper than the full one")
    return failures


if __name__ == "__main__":
    exit_with(main())
