#!/usr/bin/env python3
"""Where a simulated training step goes on one GPU, from a run's trace.json (docs/report.md).

A step is the span between two consecutive launches of a marker kernel that runs a fixed number
of times per step (by default PyTorch's flash-attention forward kernel, once per layer): the
script takes the last STEPS whole steps before the last SKIP marker launches (a validation pass
after the last step runs the forward too), sums the GPU's kernels and copies that start inside
them by family, and prints milliseconds per step.

Families, by the name the trace gives a span: `gemm:` (GEMMs priced from their signature),
`triton_` (inductor's and Triton's kernels), attention (`pytorch_flash`, PyTorch's
memory-efficient `fmha_cutlass`, cuDNN's `cudnn_sdpa`), copies and memsets,
and every other kernel. It also sums, over all families, the spans the report marks as priced by
the default model (`args.source` "default": kernels no model decoded, docs/kernels.md), which is
how much of the step rests on that model.

Usage: scripts/step_breakdown.py RUN/trace.json --per-step 12 [--gpu 0] [--steps 8] [--skip 12]
       [--json]   (the same figures as one JSON object, in milliseconds per step)
"""
import argparse
import json
import sys

ATTENTION_KERNELS = ("pytorch_flash", "fmha_cutlass", "cudnn_sdpa")
FAMILIES = (  # (family, test on a span) in the order they are tried
    ("GEMMs", lambda e: e["name"].startswith("gemm:")),
    ("attention", lambda e: any(k in e["name"] for k in ATTENTION_KERNELS)),
    ("inductor/Triton", lambda e: e["name"].startswith("triton_")),
    ("copies and memsets", lambda e: e.get("cat") in ("memcpy", "memset")),
    ("other kernels", lambda e: True),
)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("trace")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--marker", default="flash_fwd_kernel",
                   help="substring of the kernel that marks steps (default: flash_fwd_kernel)")
    p.add_argument("--per-step", type=int, required=True,
                   help="launches of the marker per training step (e.g. the number of layers)")
    p.add_argument("--steps", type=int, default=8, help="how many steps to average (default 8)")
    p.add_argument("--skip", type=int, default=0,
                   help="marker launches after the last step to leave out (a validation pass)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    a = p.parse_args()

    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events
             if e.get("ph") == "X" and e.get("cat") in ("kernel", "memcpy", "memset")
             and e.get("args", {}).get("gpu") == a.gpu]
    markers = sorted(e["ts"] for e in spans if a.marker in e["name"])
    if a.skip:
        markers = markers[:-a.skip]
    needed = a.per_step * (a.steps + 1)
    if len(markers) < needed:
        sys.exit(f"step_breakdown: {len(markers)} launches of '{a.marker}' on GPU {a.gpu} after "
                 f"--skip, {needed} needed for {a.steps} steps of {a.per_step}")
    # The window opens at the first marker of the first averaged step and closes at the first
    # marker of the last step in the trace: that last step may be cut short by the run's end.
    begin, end = markers[-needed], markers[-a.per_step]
    totals = {name: 0.0 for name, _ in FAMILIES}
    defaulted = 0.0
    for e in spans:
        if begin <= e["ts"] < end:
            if e.get("args", {}).get("source") == "default":
                defaulted += e["dur"]
            for name, test in FAMILIES:
                if test(e):
                    totals[name] += e["dur"]
                    break
    step_ms = (end - begin) / a.steps / 1e3
    per_step = {name: totals[name] / a.steps / 1e3 for name, _ in FAMILIES}
    default_ms = defaulted / a.steps / 1e3
    if a.json:
        print(json.dumps({"gpu": a.gpu, "steps": a.steps, "step_ms": step_ms,
                          "families_ms": per_step, "default_ms": default_ms}))
        return
    print(f"GPU {a.gpu}, {a.steps} steps: {step_ms:.2f} ms per step (marker to marker)")
    for name, ms in per_step.items():
        print(f"  {name:20s} {ms:9.2f} ms per step")
    busy = sum(per_step.values())
    print(f"  {'sum of spans':20s} {busy:9.2f} ms per step ({busy / step_ms:.1%} of the step; "
          "spans on several streams overlap)")
    print(f"  {'priced by default':20s} {default_ms:9.2f} ms per step (of the spans above; "
          "docs/kernels.md)")

if __name__ == "__main__":
    main()
