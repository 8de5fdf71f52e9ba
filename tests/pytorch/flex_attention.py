# FlexAttention (torch.compile'd flex_attention: inductor's Triton kernels) beside PyTorch's SDPA
# flash kernels on the same shapes, forward and backward, with a causal, a full and a
# sliding-window block mask. flex_check.py then reads the run's trace: phantora's start-up hook
# describes the flex kernels (phantora_flex_attention.py), so each is priced by the attention
# model at FlexAttention's published rate relative to FlashAttention-2 instead of by default.
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

B, H, S, D = 2, 8, 2048, 64
WINDOW = 512  # the sliding window's length, in tokens


def qkv():
    return [torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            for _ in range(3)]


def causal(b, h, q, kv):
    return q >= kv


def full(b, h, q, kv):
    return q >= 0


def sliding_window(b, h, q, kv):
    return (q >= kv) & (q - kv < WINDOW)


with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for is_causal in (True, False):
        q, k, v = qkv()
        F.scaled_dot_product_attention(q, k, v, is_causal=is_causal).sum().backward()
torch.cuda.synchronize()

flex = torch.compile(flex_attention)
for mask_mod in (causal, full, sliding_window):
    block_mask = create_block_mask(mask_mod, B, H, S, S, device="cuda")
    q, k, v = qkv()
    out = flex(q, k, v, block_mask=block_mask)
    assert out.shape == (B, H, S, D)
    out.sum().backward()
    torch.cuda.synchronize()
print("flex attention ok")
