# A training loop fed by a DataLoader whose worker processes are its bottleneck (docs/time.md,
# "Time carried by pipes"): each sample costs 25 ms of a worker's CPU time, a batch of 4 costs
# 100 ms, and 2 workers deliver a batch every 50 ms, while the GPU's work per step is a few
# microseconds. In measured mode (phantora run's default) the loop therefore takes 50 ms a step
# once the workers' first batches are in, as on a real host of this machine's speed; in model
# mode CPU time is free, in the workers too, and a step is its GPU work and its calls' costs.
# Until the pipes between the processes carried their writers' clocks, measured mode also gave
# the model-mode figure: the workers' work took none of the job's time.
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset

SAMPLE_CPU_S = 0.025
BATCH = 4
WORKERS = 2


class CostlySamples(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        start = time.thread_time()
        while time.thread_time() - start < SAMPLE_CPU_S:
            pass
        return torch.full((64,), float(i))


model = torch.nn.Linear(64, 64).cuda()
loader = DataLoader(CostlySamples(), batch_size=BATCH, num_workers=WORKERS, pin_memory=True)
stamps = []
for step, batch in enumerate(loader):
    model(batch.cuda(non_blocking=True)).sum().backward()
    torch.cuda.synchronize()
    stamps.append(time.perf_counter())
    if step == 22:
        break

# From step 2 on the workers' batches come at their pace: batch k is ready at about
# (k // 2 + 1) x 100 ms. Steps 2 to 22: 20 steps in 10 workers' batch times.
per_step_ms = (stamps[22] - stamps[2]) / 20 * 1000.0
loader_ms = SAMPLE_CPU_S * BATCH / WORKERS * 1000.0
mode = os.environ.get("PHANTORA_CPU_TIME", "measured")
print(f"cpu time {mode}: {per_step_ms:.2f} ms per step (the workers' pace: {loader_ms:.0f} ms)")
if mode == "measured":
    # Python's collate and pickling in the workers add a little to their 100 ms a batch.
    assert loader_ms * 0.97 <= per_step_ms <= loader_ms * 1.25, per_step_ms
else:
    assert per_step_ms < 1.0, per_step_ms
print("loader-bound loop ok")
