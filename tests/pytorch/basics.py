# Device identity, memory accounting and values under the simulator (phantora run --gpu h100).
import torch

assert torch.cuda.is_available()
assert torch.cuda.device_count() == 2, torch.cuda.device_count()
p = torch.cuda.get_device_properties(0)
assert p.name == "NVIDIA H100 80GB HBM3", p.name
assert (p.major, p.minor) == (9, 0)
free, total = torch.cuda.mem_get_info(0)
assert total == p.total_memory, (total, p.total_memory)

# .item() of a tensor written from the host reads back what was written.
t = torch.tensor([3.5, 1.0], device="cuda")
assert t[0].item() == 3.5, t[0].item()
assert torch.tensor(7, device="cuda").item() == 7

# Elementwise work and the caching allocator's accounting: blocks are rounded to 512 bytes.
torch.cuda.reset_peak_memory_stats()
base = torch.cuda.memory_allocated()
a = torch.empty(1000, device="cuda")  # 4000 bytes -> 4096
b = torch.empty(10, device="cuda")  # 40 bytes -> 512
c = a + 1  # 4096
assert torch.cuda.memory_allocated() - base == 4096 + 512 + 4096, torch.cuda.memory_allocated() - base
assert torch.cuda.max_memory_allocated() - base == 4096 + 512 + 4096
del a, b, c

# An allocation larger than the device raises PyTorch's out-of-memory error.
try:
    torch.empty(100 * 2**30, dtype=torch.uint8, device="cuda")
    raise AssertionError("expected torch.OutOfMemoryError")
except torch.OutOfMemoryError:
    pass
torch.cuda.synchronize()
print("basics ok")
