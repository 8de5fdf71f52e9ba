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

# 2*8192^3 flops in bf16: the event time is the GEMM's simulated time: the rate the GH100 die
# sustains at its 700 W limit, 755 TFLOP/s, the best a shape held once the part was saturated
# (S. Bekman, "Machine Learning Engineering Open Book", compute/accelerator, "Maximum Sustainable
# Matmul FLOPS", on an H200: the same SMs at the same power), 76.3 % of the 989 TFLOP/s dense
# peak at K = 6144 (1536 x 2816 x 6144), over whole waves of output tiles: 64 x 64 = 4096 tiles
# of 128 x 128 on 132 SMs are 31.03 waves' work done in 32, each tile paying a fixed cost worth
# 207 of K (the pipeline's fill and the epilogue, measured on an H200): (8192 + 207) / 8192 of
# the work at (6144 + 207) / 6144 of that rate (docs/cost-model.md, GEMM). Within -1 % / +3 %:
# the events bracket the GEMM alone.
n = 8192
a = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
# A first GEMM keeps the GPU busy while the host records `start` and launches the timed one, so
# the events bracket the GEMM alone, whatever the host's (measured, loaded) CPU time in between.
a @ b
start.record()
a @ b
end.record()
end.synchronize()
ms = start.elapsed_time(end)
tiles, sms = (n // 128) ** 2, 132
tile_cost_k, rate_k = 207, 6144
achievable_ms = (2 * n**3 / 755e12 * 1e3 * (-(-tiles // sms)) / (tiles / sms)
                 * (n + tile_cost_k) / n * rate_k / (rate_k + tile_cost_k))
print(f"bf16 {n}^3 gemm: {ms:.3f} ms (at the best sustained rate in whole waves "
      f"{achievable_ms:.3f} ms)")
assert achievable_ms * 0.99 <= ms <= achievable_ms * 1.03, ms

# beta = 1: the product reads C as well as writing it. On a memory-bound shape (k = 64; 11 us of
# tensor-core work against 45 us of traffic) the plain product moves A and B (1 MiB each) and
# writes C (128 MiB); c.addmm_(a, b) accumulates into C in place (beta = 1, no copy), 128 MiB
# more: 258 / 130 = 1.98 x the bytes, less the fixed launch cost both pay. Were beta not read,
# both would cost the same.
a_big, b_big = a, b
m, k = 8192, 64
a = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)
b = torch.empty(k, m, device="cuda", dtype=torch.bfloat16)
c = torch.empty(m, m, device="cuda", dtype=torch.bfloat16)


def timed(op):
    op()
    a_big @ b_big  # 1.4 ms of GPU work while the host records `start`: the events bracket op alone
    start.record()
    op()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


plain, accumulating = timed(lambda: a @ b), timed(lambda: c.addmm_(a, b))
print(f"8192 x 8192 x 64 bf16: {plain * 1e3:.1f} us, accumulating into C {accumulating * 1e3:.1f} us")
assert 1.8 <= accumulating / plain <= 258 / 130, (plain, accumulating)
torch.cuda.synchronize()
print("matmul ok")
