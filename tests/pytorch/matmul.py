# GEMMs through cuBLAS and cuBLASLt, autocast, and CUDA event timing of a bf16 product.
import torch

x = torch.randn(256, 512, device="cuda")
y = torch.randn(512, 128, device="cuda")
assert (x @ y).shape == (256, 128)  # fp32: cublasSgemm / GemmEx
xb, yb = x.bfloat16(), y.bfloat16()
assert (xb @ yb).dtype == torch.bfloat16
assert torch.bmm(xb.view(2, 128, 512), yb.expand(2, 512, 128)).shape == (2, 128, 128)

lin = torch.nn.Linear(512, 64).cuda()  # addmm with bias: cuBLASLt epilogue
assert lin(x).shape == (256, 64)
with torch.autocast("cuda", dtype=torch.bfloat16):
    out = lin(x)
assert out.dtype == torch.bfloat16

# 2*8192^3 flops in bf16: the event time is the cost model's GEMM time, at most the dense
# bf16 peak of an H100 SXM (989 TFLOP/s) and not slower than a tenth of it.
n = 8192
a = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
a @ b
end.record()
end.synchronize()
ms = start.elapsed_time(end)
ideal_ms = 2 * n**3 / 989e12 * 1e3
print(f"bf16 {n}^3 gemm: {ms:.3f} ms (peak-rate time {ideal_ms:.3f} ms)")
assert ideal_ms * 0.99 <= ms <= ideal_ms * 10, ms
torch.cuda.synchronize()
print("matmul ok")
