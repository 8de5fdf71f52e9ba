# A convolution and scaled-dot-product attention (see docs/pytorch.md, "cuDNN", for which kernels
# run: the convolution cuDNN's, the attention the backend PyTorch picks).
import os
import tomllib

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

conv = torch.nn.Conv2d(3, 16, 3, padding=1).cuda()
img = torch.randn(2, 3, 32, 32, device="cuda")
assert conv(img).shape == (2, 16, 32, 32)
conv(img).sum().backward()

q = torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
v = torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
o.sum().backward()
assert o.shape == q.shape

# Cross-attention: 2,048 queries over 560 keys, the flash forward. Its params struct says both
# lengths; priced by the attention model (docs/cost-model.md: a CTA's time is proportional to
# its loop over the keys plus the per-tile cost s0 = fa2_forward_s0, the fixed 4 us apart), it
# costs (560 + s0) / (2048 + s0) of the self-attention call on the same queries, both
# compute-bound here. Were the keys taken from the grid (square), both would cost the same.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels-db",
                       "data", "models.toml"), "rb") as f:
    s0 = tomllib.load(f)["attention"]["fa2_forward_s0"]
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


busy = torch.empty(8192, 8192, device="cuda", dtype=torch.bfloat16)


def timed(op):
    op()
    busy @ busy  # 1.4 ms of GPU work while the host records `start`: the events bracket op alone
    start.record()
    op()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3


q = torch.empty(2, 16, 2048, 64, device="cuda", dtype=torch.bfloat16)
kv_self = torch.empty(2, 16, 2048, 64, device="cuda", dtype=torch.bfloat16)
kv_cross = torch.empty(2, 16, 560, 64, device="cuda", dtype=torch.bfloat16)
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    self_us = timed(lambda: F.scaled_dot_product_attention(q, kv_self, kv_self))
    cross_us = timed(lambda: F.scaled_dot_product_attention(q, kv_cross, kv_cross))
want = 4 + (self_us - 4) * (560 + s0) / (2048 + s0)
print(f"flash forward 2048 x 2048: {self_us:.2f} us; 2048 x 560: {cross_us:.2f} us, want {want:.2f}")
assert abs(cross_us - want) <= 0.005 * want, (self_us, cross_us, want)
torch.cuda.synchronize()
print("conv sdpa ok")
