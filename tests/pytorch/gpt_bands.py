#!/usr/bin/env python3
"""Runs examples/gpt.py with DDP under phantora and checks its printed step time and peak memory
against independent hand estimates (issue 4, part 6):

  step time  ~ 6·N·T FLOPs (+ attention) at the cost model's large-GEMM efficiency on the H100
               peak, plus the ring all-reduce of the fp32 gradients over the NICs;
  memory     ~ fp32 weights + fp32 gradients + DDP's gradient buckets + two AdamW moments, plus
               activations by Korthikanti et al. (2022), "Reducing Activation Recomputation in
               Large Transformer Models", 34·s·b·h bytes per layer (flash attention: no s² term),
               plus the logits in bf16 and their fp32 loss copies.

The bands are wide (0.5–2x for time, 0.7–1.5x for memory): the estimate leaves out the
elementwise, norm and softmax kernels (costed by the bytes they move) and the Python overhead is
measured CPU time, so the estimates bound the answer rather than predict it; a run that costs nothing or runs away still fails.

Usage: gpt_bands.py PHANTORA TORCHRUN GPT_PY OUT_DIR PORT
"""
import re
import subprocess
import sys

phantora, torchrun, gpt, out, port = sys.argv[1:6]
HOSTS, GPUS = 2, 2
LAYERS, HIDDEN, FFN, VOCAB, SEQ, BATCH = 12, 768, 2048, 50304, 1024, 8  # gpt-small in gpt.py

cmd = [phantora, "run", "--quiet", "--hosts", str(HOSTS), "--gpus-per-host", str(GPUS), "--gpu", "h100",
       "--cpu-time", "model", "--timeout", "600", "--out", out, "--",
       torchrun, "--nnodes", str(HOSTS), "--nproc-per-node", str(GPUS), "--rdzv-backend", "c10d",
       "--rdzv-endpoint", f"localhost:{port}", gpt, "--model", "gpt-small", "--parallel", "ddp",
       "--steps", "4"]
proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
log = proc.stdout + proc.stderr
if proc.returncode != 0:
    sys.exit(f"phantora run failed ({proc.returncode}):\n{log[-4000:]}")

params = float(re.search(r"([\d.]+)M parameters", log).group(1)) * 1e6
step_s = float(re.search(r"average over \d+ step\(s\): step time ([\d.]+) ms", log).group(1)) / 1e3
peaks = [float(g) * 2**30 for g in re.findall(r"peak memory allocated ([\d.]+) GiB", log)]
assert len(peaks) == HOSTS * GPUS, f"expected a peak per rank, got {peaks}"

# --- step time ---------------------------------------------------------------------------
tokens = BATCH * SEQ                                   # per GPU per step
non_embedding = params - VOCAB * HIDDEN                # the output layer is tied in FLOPs below
flops = 6 * non_embedding * tokens + 6 * VOCAB * HIDDEN * tokens + 12 * LAYERS * HIDDEN * SEQ * tokens
peak = 989e12                                          # H100 SXM dense bf16 (datasheet)
efficiency = 0.80                                      # kernels-db/data/models.toml, H100 large GEMMs
compute_s = flops / (efficiency * peak)
# Ring all-reduce of fp32 gradients across 4 GPUs on 2 hosts: 2(n-1)/n of the buffer crosses each
# GPU's NIC (one 400G NIC per GPU, 48.5 GB/s effective: reference/hardware-and-nccl.md).
n = HOSTS * GPUS
allreduce_s = 2 * (n - 1) / n * params * 4 / 48.5e9
estimate_s = compute_s + allreduce_s
print(f"step time {step_s * 1e3:.1f} ms; estimate {estimate_s * 1e3:.1f} ms "
      f"(compute {compute_s * 1e3:.1f} ms + all-reduce {allreduce_s * 1e3:.1f} ms)")
assert 0.5 * estimate_s <= step_s <= 2.0 * estimate_s, "step time outside 0.5-2x of the estimate"

# --- peak memory ---------------------------------------------------------------------------
static = params * (4 + 4 + 4 + 8)                      # weights, grads, DDP buckets, Adam m and v
activations = 34 * SEQ * BATCH * HIDDEN * LAYERS       # bf16 activations kept for backward
logits = BATCH * SEQ * VOCAB * (2 + 4 + 4)             # bf16 logits, fp32 copy, fp32 grad
estimate_b = static + activations + logits
for p in peaks:
    print(f"peak {p / 2**30:.2f} GiB; estimate {estimate_b / 2**30:.2f} GiB")
    assert 0.7 * estimate_b <= p <= 1.5 * estimate_b, "peak memory outside 0.7-1.5x of the estimate"
print("bands ok")
