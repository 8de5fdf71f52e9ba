"""Values that tiny GPU kernels compute (docs/pytorch.md, "Values"): reductions, comparisons,
concatenation, in-place adds and casts of host-written tensors read back exactly, the way control
flow in training scripts uses them (`.item()`, `if t > 0:`, `range(int(n))`)."""
import torch

t = torch.tensor([5, 7, 11], device="cuda")
assert torch.sum(t).item() == 23
assert t.max().item() == 11 and t.min().item() == 5
assert torch.cat([t, torch.tensor([2], device="cuda")]).tolist() == [5, 7, 11, 2]

offset = 0
for size in t:  # 0-d views, as torch.distributed's object collectives iterate sizes
    offset += size
assert offset.item() == 23, offset.item()
assert bool(t[2] > t[1]) and not bool(t[0] >= t[1])

assert torch.zeros(4, dtype=torch.long, device="cuda").tolist() == [0, 0, 0, 0]
f = torch.full((3,), 4.5, device="cuda")
assert (f * 2).tolist() == [9.0, 9.0, 9.0] and (f + f).tolist() == [9.0, 9.0, 9.0]
b = torch.tensor([1.5, 2.25, 1 / 3], device="cuda").to(torch.bfloat16)
assert b.float().tolist() == [1.5, 2.25, 0.333984375], b.float().tolist()

# A large tensor's values are not computed: kernels over it leave zeros (not stale host bytes).
big = torch.ones(1 << 20, device="cuda")
big.mul_(3)
assert big[:4].tolist() == [0.0, 0.0, 0.0, 0.0], big[:4].tolist()
print("small values ok")
