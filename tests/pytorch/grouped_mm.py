"""torch._grouped_mm as a mixture-of-experts layer uses it: tokens (2-D) by per-expert weights
(3-D) with the experts' token offsets, forward and backward. On Hopper each call is CUTLASS's
grouped GEMM, whose group sizes are on the device; grouped_mm_check.py checks from the trace
that each is priced as the GEMM its set-up launch describes (tests/pytorch/CMakeLists.txt)."""
import torch

TOKENS, EXPERTS, DIM, HIDDEN = 16384, 8, 512, 1536

x = torch.randn(TOKENS, DIM, device="cuda", dtype=torch.bfloat16, requires_grad=True)
# Expert weights stored as the grouped GEMM expects its B: (experts, hidden, dim), transposed.
w = torch.randn(EXPERTS, HIDDEN, DIM, device="cuda", dtype=torch.bfloat16, requires_grad=True)
offs = torch.arange(1, EXPERTS + 1, device="cuda", dtype=torch.int32) * (TOKENS // EXPERTS)

out = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
assert out.shape == (TOKENS, HIDDEN), out.shape
out.backward(torch.randn_like(out))
assert x.grad.shape == x.shape and w.grad.shape == w.shape
torch.cuda.synchronize()
print("grouped_mm ok")
