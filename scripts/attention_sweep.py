#!/usr/bin/env python3
"""The device check's attention sweep (scripts/gpu-check.sh): causal self-attention of the
example GPT's shape (batch 8, 12 heads of 64, bf16) at 512, 1024 and 2048 tokens, forward and
backward, through PyTorch's FlashAttention backend.

Profiled with `phantora db profile -- python scripts/attention_sweep.py`: the run under the
simulator records each attention launch, and the profiler relaunches it on the real GPU, so the
sweep's rows are the kernels PyTorch itself picks for these shapes."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

for tokens in (512, 1024, 2048):
    q, k, v = (torch.randn(8, 12, tokens, 64, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.backward(torch.ones_like(out))
torch.cuda.synchronize()
print("attention sweep done")
