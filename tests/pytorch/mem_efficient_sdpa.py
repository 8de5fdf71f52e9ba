# PyTorch's memory-efficient attention (SDPA's EFFICIENT_ATTENTION backend: the CUTLASS kernels
# fmha_cutlassF_* / fmha_cutlassB_*), next to the flash kernel on the same shape. The run's trace
# is checked by mem_efficient_check.py, which says what each call must cost.
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

B, H, S, D, CROSS = 2, 16, 2048, 64, 560


def empty(*shape, dtype=torch.bfloat16, grad=False):
    return torch.empty(*shape, device="cuda", dtype=dtype, requires_grad=grad)


q, kv, kv_cross = empty(B, H, S, D), empty(B, H, S, D), empty(B, H, CROSS, D)
# 1. The reference: flash, non-causal self-attention.
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    F.scaled_dot_product_attention(q, kv, kv)
with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
    # 2. The same call on the memory-efficient kernels; 3. over 560 keys.
    F.scaled_dot_product_attention(q, kv, kv)
    F.scaled_dot_product_attention(q, kv_cross, kv_cross)
    # 4. In fp32 (the only backend with fp32 kernels).
    F.scaled_dot_product_attention(q.float(), kv.float(), kv.float())
    # 5. Causal, forward and backward.
    qg, kg, vg = empty(B, H, S, D, grad=True), empty(B, H, S, D, grad=True), empty(B, H, S, D, grad=True)
    F.scaled_dot_product_attention(qg, kg, vg, is_causal=True).sum().backward()
    # 6. An additive mask (an attention bias the kernel reads): priced as the unmasked call.
    F.scaled_dot_product_attention(q, kv, kv, attn_mask=empty(B, H, S, S))
torch.cuda.synchronize()
print("mem-efficient sdpa ok")
