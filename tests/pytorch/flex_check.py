#!/usr/bin/env python3
"""Checks the trace of tests/pytorch/flex_attention.py (RUN_DIR, its --out directory): the
FlexAttention kernels are priced by the attention model, not by default, at FlexAttention's
published rate relative to FlashAttention-2 on H100 (kernels-db/data/models.toml [flex-gtc]:
1.25 forward, 1.03 backward) against the SDPA flash kernels of the same shapes in the same run:

  flex time - 4 us = (FA2 time - 4 us) / rate        (4 us: the attention model's fixed cost)

for the causal mask against causal SDPA and the full mask against non-causal SDPA. The sliding
window (512 tokens, blocks of 128, 2048 tokens) visits 70 of 16 x 16 blocks, by hand (query
block i sees key blocks max(0, i - 4) .. i), so it is priced as the full attention over 70/256
of each CTA's loop, 560 of 2048 steps; a CTA's time is proportional to its loop plus the per-tile
cost s0 (FA2's, models.toml [attention]), so against the full-mask flex kernel

  window - 4 us = (full - 4 us) x (560 + s0) / (2048 + s0)

forward (s0 = fa2_forward_s0) and backward (fa2_backward_s0). The causal mask ANDed with a
document mask read from the GPU is priced by its causal part (an upper bound), and the causal mask
made by a fullgraph-compiled create_block_mask as causal: both exactly as the first causal pair.
The causal call compiled with its projections, whose kernels receive Q, K and V in the
projections' layouts (and K/V with a quarter of the heads), is priced exactly as the first causal
pair too. A default-priced flex kernel, or a wrong shape or mask, fails it.

Usage: flex_check.py RUN_DIR
"""
import sys

from kernels_data import kernels_data
from trace_checks import Failures, exit_with
from trace_events import gpu_spans

FORWARD_RATE, BACKWARD_RATE = 1.25, 1.03
FIXED_US = 4.0
FULL, VISITED = 2048, 560


def main():
    run = sys.argv[1]
    events = gpu_spans(run)
    flash_fwd = [e for e in events if "flash_fwd_kernel" in e["name"]]
    flash_bwd = [e for e in events if "flash_bwd_dq_dk_dv_loop" in e["name"]]
    # inductor's templates (triton_tem_); its helper kernels (triton_per_..., the backward's
    # row sums) are other kernels.
    # (triton_tem_fused_..._flex_attention_...: fused with the views around it when compiled
    # with its block).
    flex = [e for e in events
            if e["name"].startswith("triton_tem_fused") and "flex_attention" in e["name"]]
    flex_fwd = [e for e in flex if "flex_attention_backward" not in e["name"]]
    flex_bwd = [e for e in flex if "flex_attention_backward" in e["name"]]
    failures = Failures()
    expect = failures.expect

    # SDPA calls in program order: causal, full; each forward then its backward. Flex: causal,
    # full, sliding window, causal AND document, causal from the compiled create_block_mask,
    # causal compiled with its projections (Q as (B x S, H x D), then as (B, S, H, D)).
    expect(len(flash_fwd) == 2 and len(flash_bwd) == 2,
           f"SDPA flash kernels: {len(flash_fwd)} forward, {len(flash_bwd)} backward, want 2 + 2")
    expect(len(flex_fwd) == 7 and len(flex_bwd) == 7,
           f"flex kernels: {len(flex_fwd)} forward, {len(flex_bwd)} backward, want 7 + 7")
    failures.modelled(flex_fwd + flex_bwd, "the attention model")
    if failures:
        return failures

    check = failures.near

    def against_fa2(fa2, rate):
        return (fa2["dur"] - FIXED_US) / rate + FIXED_US

    attention = kernels_data("models")["attention"]

    def window(full, s0):
        return (full["dur"] - FIXED_US) * (VISITED + s0) / (FULL + s0) + FIXED_US

    check("causal forward", flex_fwd[0]["dur"], against_fa2(flash_fwd[0], FORWARD_RATE))
    check("causal backward", flex_bwd[0]["dur"], against_fa2(flash_bwd[0], BACKWARD_RATE))
    check("full forward", flex_fwd[1]["dur"], against_fa2(flash_fwd[1], FORWARD_RATE))
    check("full backward", flex_bwd[1]["dur"], against_fa2(flash_bwd[1], BACKWARD_RATE))
    check("sliding-window forward", flex_fwd[2]["dur"],
          window(flex_fwd[1], attention["fa2_forward_s0"]))
    check("sliding-window backward", flex_bwd[2]["dur"],
          window(flex_bwd[1], attention["fa2_backward_s0"]))
    for i, what in ((3, "causal AND document"), (4, "causal, fullgraph-compiled mask"),
                    (5, "causal in a compiled block, Q (B x S, H x D)"),
                    (6, "causal in a compiled block, Q (B, S, H, D)")):
        check(f"{what} forward", flex_fwd[i]["dur"], flex_fwd[0]["dur"])
        check(f"{what} backward", flex_bwd[i]["dur"], flex_bwd[0]["dur"])
    # And the mask matters: causal under full, the window under causal.
    expect(flex_fwd[0]["dur"] < flex_fwd[1]["dur"] and flex_fwd[2]["dur"] < flex_fwd[0]["dur"],
           "forward times do not fall from full to causal to the sliding window")
    return failures


if __name__ == "__main__":
    exit_with(main())
