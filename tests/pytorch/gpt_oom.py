# examples/gpt.py with a model that cannot fit one GPU (Llama-3-8B, fp32 weights, gradients and
# AdamW state: ~128 GB on one 80 GB H100, no parallelism) must fail with PyTorch's own
# torch.OutOfMemoryError, raised from the caching allocator, not crash or hang.
import importlib.util
import pathlib

import torch

path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt.py"
spec = importlib.util.spec_from_file_location("gpt", path)
gpt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpt)

try:
    gpt.main(["--model", "llama3-8b", "--parallel", "none", "--seq-len", "2048",
              "--batch-size", "1", "--steps", "2"])
except torch.OutOfMemoryError as e:
    first = str(e).splitlines()[0]
    print(f"OutOfMemoryError as expected: {first}")
    assert "CUDA out of memory" in first, first
    assert torch.cuda.memory_allocated() <= torch.cuda.get_device_properties(0).total_memory
else:
    raise SystemExit("llama3-8b trained on one GPU without running out of memory")
