# Pinned host memory as a DataLoader uses it: its pin-memory thread pins each batch the worker
# processes made (cudaHostAlloc through PyTorch's caching host allocator, then is_pinned, which
# asks cudaPointerGetAttributes), and the training loop copies it to the GPU without blocking.
# On a CUDA 12 PyTorch the pin-memory thread died of a segmentation fault: the shim wrote CUDA
# 13's larger cudaPointerAttributes over its stack.
import threading

import torch
from torch.utils.data import DataLoader, TensorDataset

pageable = torch.randn(4, 1024)
assert not pageable.is_pinned()

# A thread that pins before the main thread has touched the GPU (the pin-memory thread's case).
pinned_in_thread = []
worker = threading.Thread(target=lambda: pinned_in_thread.append(pageable.pin_memory()))
worker.start()
worker.join()
assert len(pinned_in_thread) == 1 and pinned_in_thread[0].is_pinned()
assert not pageable.is_pinned()  # pin_memory() copies; the source stays pageable

data = TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)))
loader = DataLoader(data, batch_size=16, num_workers=2, pin_memory=True)
batches = 0
for images, labels in loader:
    assert images.is_pinned() and labels.is_pinned()
    images = images.to("cuda", non_blocking=True)
    labels = labels.to("cuda", non_blocking=True)
    assert images.is_cuda and images.shape == (16, 3, 32, 32)
    batches += 1
assert batches == 4, batches
torch.cuda.synchronize()
print("pinned loader ok")
