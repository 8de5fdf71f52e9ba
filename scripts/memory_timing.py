#!/usr/bin/env python3
"""Times PyTorch's memory-bound kernels by size with CUDA events: a fill (writes the tensor), a
copy (reads one, writes another) and an add (reads two, writes one), bf16, from 1 MiB to 2 GiB
per tensor. The achieved bandwidth by size is what the memory-bound model's curve states
(docs/cost-model.md, "Memory-bound kernels"); like scripts/gemm_timing.py the same script gives
both sides:

  python3 scripts/memory_timing.py                                  # on a GPU: measured
  phantora run --gpu h200 --cpu-time zero -- python3 scripts/memory_timing.py   # the model

Each size and kernel: --warmup untimed launches, then --repetitions back to back between two
events (scripts/gemm_timing.py's timer). Output (stdout), one line per kernel and size:
`mem kernel=fill bytes_per_tensor=.. moved=.. time_us=.. tbps=..` (moved: bytes read and
written)."""
import argparse

import torch

from gemm_timing import back_to_back_us

# (name, tensors read, tensors written)
KERNELS = (("fill", 0, 1), ("copy", 1, 1), ("add", 2, 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-mib", type=int, default=1)
    ap.add_argument("--max-mib", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repetitions", type=int, default=20)
    a = ap.parse_args()
    print(f"memory_timing: {torch.cuda.get_device_name()}, bf16")
    mib = a.min_mib
    while mib <= a.max_mib:
        n = mib * (1 << 20) // 2  # bf16 elements per tensor
        x, y, z = (torch.empty(n, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        launches = {"fill": lambda: x.fill_(1.0), "copy": lambda: y.copy_(x),
                    "add": lambda: torch.add(x, y, out=z)}
        for name, reads, writes in KERNELS:
            us = back_to_back_us(launches[name], a.warmup, a.repetitions)
            moved = (reads + writes) * 2 * n
            print(f"mem kernel={name} bytes_per_tensor={2 * n} moved={moved} time_us={us:.2f} "
                  f"tbps={moved / us / 1e6:.3f}", flush=True)
        del x, y, z
        mib *= 2


if __name__ == "__main__":
    main()
