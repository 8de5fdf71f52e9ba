# A program that turns cuDNN attention back on and every other backend off, as modded-nanogpt's
# records of 2024-11-03 on do: phantora's start-up hook says where it was turned on, and the
# first attention call stops the run naming cuDNN (checked by the test's expected output,
# tests/pytorch/CMakeLists.txt).
import sys

import torch
import torch.nn.functional as F
from torch.backends.cuda import (enable_cudnn_sdp, enable_flash_sdp, enable_math_sdp,
                                 enable_mem_efficient_sdp)

enable_cudnn_sdp(True)
enable_flash_sdp(False)
enable_mem_efficient_sdp(False)
enable_math_sdp(False)
q = torch.randn(1, 8, 1024, 128, device="cuda", dtype=torch.bfloat16)
print("before the attention call", flush=True)
F.scaled_dot_product_attention(q, q, q, is_causal=True)
torch.cuda.synchronize()
print("after the attention call: cuDNN ran on the virtual GPU", flush=True)
sys.exit(1)
