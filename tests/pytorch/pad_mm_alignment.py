# A misaligned output layer in a real PyTorch program, eager and compiled (docs/cost-model.md,
# "GEMM", alignment; docs/pytorch.md, "torch.compile's decisions by timing").
#
# Eager, head(x) with a 768 -> 50,257 bf16 weight over 8,192 tokens is one cuBLAS GEMM,
# m = 50,257 (C's columns 100,514 bytes: 2-byte aligned), n = 8,192, k = 768: 393 x 64 = 25,152
# tiles of 128 x 128 in 191 waves on 132 SMs, each tile 2 * 128^2 * (768 + 207) FLOPs at an SM's
# share of the main loop's rate, 989.4 T * 0.763 * (6144 + 207) / 6144 * 0.686 (misaligned) / 132,
# plus the 4 us launch: 1508.7 us.
# Compiled, inductor's pad_mm times that GEMM against one padded to 50,264 (aligned: 1036.2 us,
# the same tiles at the aligned rate) plus copying the weight, and pads when that is 1.1 x
# faster: it must, on these prices. Without the alignment model both cost 1036 us and it would
# not pad (the compiled call would then cost at least as much as the eager one).
import os
import re

import torch

cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
assert re.search(r"/phantora-h100-[0-9a-f]{16}$", cache), f"inductor's cache directory: {cache}"

head = torch.nn.Linear(768, 50257, bias=False, device="cuda", dtype=torch.bfloat16)
x = torch.randn(8192, 768, device="cuda", dtype=torch.bfloat16)


def per_call_us(fn, reps=3):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()  # keeps the GPU busy while the host records `start` and launches the timed calls
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps * 1e3


main_loop_per_sm = 989.4e12 * 0.763 * (6144 + 207) / 6144 / 132
aligned_us = 4 + 191 * 2 * 128**2 * (768 + 207) / main_loop_per_sm * 1e6
misaligned_us = 4 + 191 * 2 * 128**2 * (768 + 207) / (main_loop_per_sm * 0.686) * 1e6
with torch.no_grad():
    eager = per_call_us(lambda: head(x))
    compiled_head = torch.compile(lambda t: head(t))
    compiled = per_call_us(lambda: compiled_head(x))
print(f"eager {eager:.1f} us (by hand {misaligned_us:.1f}), compiled {compiled:.1f} us "
      f"(the aligned GEMM alone {aligned_us:.1f})")
assert abs(eager / misaligned_us - 1) < 0.02, "eager: the misaligned GEMM's price"
assert aligned_us <= compiled < 0.8 * eager, "compiled: padded to an aligned GEMM plus copies"
