"""A plain training loop as many scripts write it: a DataLoader with worker processes that spend
CPU on each sample, a tqdm progress bar, a small MLP on one GPU. It prints the step time it
measures (the median and the slowest step) and where, on the program's clock, the loop ended,
which is the sum of its steps when host time is free (`--cpu-time model`).

    phantora run --hosts 1 --gpus-per-host 1 --cpu-time model -- python \
        examples/dataloader_progress.py --steps 500

needs torch and tqdm. Used for docs/reliability.md, finding 16: tqdm's monitor thread sleeps
10 s at a time, and its sleep must not come due while the main thread waits for the workers.
"""
import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class Samples(Dataset):
    """Random samples, each after some CPU work (a data pipeline's decoding)."""

    def __len__(self):
        return 10**6

    def __getitem__(self, i):
        sum(range(20000))
        g = torch.Generator().manual_seed(i)
        return torch.randn(1024, generator=g), torch.randint(0, 10, (), generator=g)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters())
    loader = DataLoader(Samples(), batch_size=256, num_workers=args.workers)
    start = last = time.perf_counter()
    times = []
    bar = tqdm(loader, total=args.steps, mininterval=0.5)
    for step, (x, y) in enumerate(bar):
        if step == args.steps:
            break
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        loss.backward()
        opt.step()
        opt.zero_grad()
        loss.item()
        now = time.perf_counter()
        times.append((now - last) * 1e3)
        last = now
    loop_end = time.perf_counter() - start
    bar.close()
    times.sort()
    print(f"steps {len(times)}: median {times[len(times) // 2]:.3f} ms, slowest {times[-1]:.3f} ms, "
          f"sum {sum(times) / 1e3:.3f} s; the loop ended at {loop_end:.3f} s")


if __name__ == "__main__":
    main()
