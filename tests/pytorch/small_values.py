"""Values that tiny GPU kernels compute (docs/pytorch.md, "Values"): reductions, comparisons,
concatenation, in-place adds, casts and arange of host-written tensors read back exactly, the way control
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

# Positions and the equality tests frameworks read back (transformers' causal mask decides
# between `is_causal=True` and a materialised mask on `(position_diff != 1)...`, computed on
# the GPU from torch.arange): arange in int64, float and bfloat16, == and != against a scalar
# and between tensors.
pos = torch.arange(0, 1024, device="cuda").unsqueeze(0)
assert pos.sum().item() == 1023 * 1024 // 2 and pos[0, -1].item() == 1023
assert torch.arange(3, 13, 2, device="cuda").tolist() == [3, 5, 7, 9, 11]
assert torch.arange(0.5, 2, 0.25, device="cuda").tolist() == [0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
assert torch.arange(4, device="cuda", dtype=torch.bfloat16).float().tolist() == [0, 1, 2, 3]
diff = torch.diff(pos, prepend=pos[:, :1] - 1, dim=-1)
assert not (diff != 1).any().item() and (diff == 1).all().item()
assert (pos[0, :3] == torch.tensor([0, 5, 2], device="cuda")).tolist() == [True, False, True]
# cumsum of a contiguous tensor (cub's scan): transformers' packed-sequence test.
assert torch.tensor([1, 2, 3, 4], device="cuda").cumsum(0).tolist() == [1, 3, 6, 10]
packed = torch.tensor([[0, 1, 2, 0, 1, 0]], device="cuda")
packed_diff = torch.diff(packed, prepend=packed[:, :1] - 1, dim=-1)
assert (packed_diff != 1).cumsum(-1).tolist() == [[0, 0, 0, 1, 1, 2]]
assert not ((diff != 1).cumsum(-1)[:, -1] == 0).logical_not().any().item()

# A tokenizer's attention mask past 65,536 elements is host-written, so its cast and sum are
# computed (transformers reads `mask.sum() == mask.numel()` to drop the mask from SDPA).
mask = torch.ones(16, 8192, dtype=torch.long).cuda()
assert (mask.bool().sum() == mask.numel()).item()
mask[3, 100] = 0
assert mask.bool().sum().item() == 16 * 8192 - 1

# A large tensor's values are not computed: kernels over it leave zeros (not stale host bytes).
big = torch.ones(1 << 20, device="cuda")
big.mul_(3)
assert big[:4].tolist() == [0.0, 0.0, 0.0, 0.0], big[:4].tolist()
print("small values ok")
