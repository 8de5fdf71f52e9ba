# Scaled-dot-product attention with no backend chosen: PyTorch picks one by its own rule for the
# part and the cuDNN it ships, and `phantora run` leaves that choice to it (docs/pytorch.md,
# "cuDNN"). sdpa_default_check.py reads the run's trace and says which kernels must have run.
import torch
import torch.nn.functional as F


def empty(grad=False):
    return torch.empty(2, 16, 2048, 128, device="cuda", dtype=torch.bfloat16, requires_grad=grad)


q, k, v = empty(True), empty(True), empty(True)
F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
torch.cuda.synchronize()
print(f"sdpa default ok: torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
      f"compute capability {torch.cuda.get_device_capability()}")
