#!/usr/bin/env python3
"""Peak memory across the example GPT's runs (they are the gpt_runs fixture): the same model and
batch per GPU on one GPU and under DDP on 2 x 2 differ by DDP's gradient buckets alone. With the
default gradient_as_bucket_view=False DDP keeps a copy of every gradient in its buckets, fp32:
4 bytes a parameter, 4 x 162,220,800 = 0.604 GiB for gpt-small, on top of the single GPU's peak
(the activations, weights, gradients and AdamW state are the same).

Usage: gpt_memory.py SINGLE_RUN_DIR DDP_RUN_DIR   (the --out directories, with their job.log)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_shapes import MODELS, Shape  # noqa: E402

GIB = 2**30


def allocated(run_dir):
    with open(os.path.join(run_dir, "job.log"), encoding="utf-8") as f:
        peaks = re.findall(r"peak memory allocated ([\d.]+) GiB", f.read())
    if not peaks or len(set(peaks)) != 1:
        sys.exit(f"{run_dir}: expected the same peak on every rank, got {peaks}")
    return float(peaks[0]) * GIB


single, ddp = (allocated(d) for d in sys.argv[1:3])
buckets = 4 * Shape(MODELS["gpt-small"]).params
grown = ddp - single
print(f"single GPU {single / GIB:.2f} GiB, DDP {ddp / GIB:.2f} GiB: +{grown / GIB:.3f} GiB; "
      f"DDP's buckets {buckets / GIB:.3f} GiB")
# Both peaks are printed to 0.01 GiB.
if abs(grown - buckets) > 0.01 * GIB:
    sys.exit("DDP's peak is not the single GPU's plus its gradient buckets")
print("memory: DDP adds exactly its gradient buckets")
