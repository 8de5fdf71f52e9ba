# A program that turns cuDNN attention on and every other backend off, as modded-nanogpt's
# records of 2024-11-03 on do (phantora's start-up hook turns it off at start-up, as it is not
# PyTorch's choice everywhere): its attention runs through cuDNN's graph API, which the shim
# stands in for. cudnn_check.py reads the run's trace and says what each call must cost.
import torch
import torch.nn.functional as F
from torch.backends.cuda import (enable_cudnn_sdp, enable_flash_sdp, enable_math_sdp,
                                 enable_mem_efficient_sdp)
from torch.nn.attention import SDPBackend, sdpa_kernel

enable_cudnn_sdp(True)
enable_flash_sdp(False)
enable_mem_efficient_sdp(False)
enable_math_sdp(False)


def empty(grad=False):
    return torch.empty(2, 16, 2048, 128, device="cuda", dtype=torch.bfloat16, requires_grad=grad)


q, k, v = empty(), empty(), empty()
# 1. Without a mask; 2. causal, forward and backward.
F.scaled_dot_product_attention(q, k, v)
qg, kg, vg = empty(True), empty(True), empty(True)
F.scaled_dot_product_attention(qg, kg, vg, is_causal=True).sum().backward()
# 3. The reference: flash on the first call's shape.
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
print("cudnn attention ok")
