# A convolution and scaled-dot-product attention (see docs/pytorch.md for which kernels run).
import torch
import torch.nn.functional as F

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
torch.cuda.synchronize()
print("conv sdpa ok")
