#!/usr/bin/env python3
"""Times scaled-dot-product attention through each SDPA backend with CUDA events, forward and
forward + backward, on modded-nanogpt's attention from its record #8 on (64 sequences of 1,024
tokens, 6 heads of 128, causal, bf16): those records chose cuDNN's attention for being "~4ms
faster than Flash" per step, where the model makes it 1.6 x faster (docs/accuracy.md,
"modded-nanogpt"). cuDNN's calls are not kernel launches that `phantora db profile` could
relaunch, so, like scripts/gemm_timing.py, the same script gives both sides:

  python3 scripts/attention_timing.py                                  # on a GPU: measured
  phantora run --gpu h100 --cpu-time zero -- python3 scripts/attention_timing.py   # the model

Output (stdout), one line per backend and pass: `attn backend=.. pass=fwd|fwd+bwd b=.. h=..
s=.. d=.. causal=1 time_us=..` (--repetitions calls back to back between two events, after
--warmup untimed ones; scripts/gemm_timing.py's timer)."""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from gemm_timing import back_to_back_us

BACKENDS = (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repetitions", type=int, default=20)
    args = ap.parse_args()
    shape = (args.batch, args.heads, args.tokens, args.head_dim)
    q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    grad = torch.ones(*shape, device="cuda", dtype=torch.bfloat16)
    for name, backend in BACKENDS:
        with sdpa_kernel(backend):
            def forward():
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)

            def forward_backward():  # the gradients returned, not accumulated into .grad
                torch.autograd.grad(forward(), (q, k, v), grad)

            for label, launch in (("fwd", forward), ("fwd+bwd", forward_backward)):
                us = back_to_back_us(launch, args.warmup, args.repetitions)
                print(f"attn backend={name} pass={label} b={args.batch} h={args.heads} "
                      f"s={args.tokens} d={args.head_dim} causal=1 time_us={us:.1f}", flush=True)


if __name__ == "__main__":
    main()
