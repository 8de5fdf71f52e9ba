#!/usr/bin/env python3
"""The device check's attention sweep (scripts/gpu-check.sh): causal self-attention in bf16,
forward and backward, through PyTorch's FlashAttention backend, at
  * the example GPT's shape (batch 8, 12 heads of 64) at 512, 1024 and 2048 tokens;
  * the same FLOPs with 6 heads of 128: beside the rows above, how the head dim changes each
    pass's rate (the model takes the published forward ratio for both passes, docs/cost-model.md,
    "Attention"; this project's H200 disagreed on the backward);
  * a Llama 3 8B layer's (batch 1, 32 heads of 128 over 8 KV heads, 8192 tokens), the attention
    of docs/accuracy.md's TorchTitan rows;
  * the 2048-token shapes of both head dims through the memory-efficient backend, whose rate
    relative to FA2 the model takes from an A100 figure (docs/cost-model.md, "Memory-efficient
    attention").

Profiled with `phantora db profile -- python scripts/attention_sweep.py`: the run under the
simulator records each attention launch, and the profiler relaunches it on the real GPU, so the
sweep's rows are the kernels PyTorch itself picks for these shapes."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# (batch, query heads, key/value heads, tokens, head dim)
SHAPES = [(8, 12, 12, t, 64) for t in (512, 1024, 2048)]
SHAPES += [(8, 6, 6, t, 128) for t in (512, 1024, 2048)]
SHAPES += [(1, 32, 8, 8192, 128)]

for batch, heads, kv_heads, tokens, head_dim in SHAPES:
    q = torch.randn(batch, heads, tokens, head_dim, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    k, v = (torch.randn(batch, kv_heads, tokens, head_dim, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True) for _ in range(2))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                             enable_gqa=kv_heads != heads)
    out.backward(torch.ones_like(out))
for batch, heads, tokens, head_dim in [(8, 12, 2048, 64), (8, 6, 2048, 128)]:
    q, k, v = (torch.randn(batch, heads, tokens, head_dim, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.backward(torch.ones_like(out))
torch.cuda.synchronize()
print("attention sweep done")
