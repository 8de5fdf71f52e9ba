#!/usr/bin/env python3
"""Times cuDNN's convolutions pass by pass with CUDA events, on ResNet-50 v1.5's layer shapes at
batch 256: fp16 channels-last (NVIDIA's AMP recipe) and fp32 in NCHW run as TF32 (its TF32
recipe). cuDNN's calls are not kernel launches that `phantora db profile` could relaunch, so,
like scripts/attention_timing.py, the same script gives both sides (docs/cost-model.md,
"Convolution"; docs/accuracy.md, "Convolutional networks"):

  python3 scripts/conv_timing.py                                       # on a GPU: measured
  phantora run --gpu h100 --cpu-time zero -- python3 scripts/conv_timing.py     # the model

Output (stdout), one line per shape, precision and pass: `conv pass=fprop|dgrad|wgrad n=.. c=..
hw=.. k=.. rs=.. stride=.. layout=nhwc|nchw dtype=f16|tf32 time_us=..` (--repetitions calls back
to back between two events, after --warmup untimed ones; scripts/gemm_timing.py's timer)."""
import argparse

import torch
import torch.nn.functional as F

from gemm_timing import back_to_back_us

# (C, H = W, K, R = S, stride): the stem, each stage's bottleneck convolutions and its strided
# 3 x 3 and projection, the last stage's 1 x 1 expansion.
SHAPES = (
    (3, 224, 64, 7, 2),
    (64, 56, 64, 1, 1), (64, 56, 64, 3, 1), (64, 56, 256, 1, 1), (256, 56, 64, 1, 1),
    (128, 56, 128, 3, 2), (256, 56, 512, 1, 2), (128, 28, 128, 3, 1),
    (256, 28, 256, 3, 2), (256, 14, 256, 3, 1), (256, 14, 1024, 1, 1),
    (512, 14, 512, 3, 2), (512, 7, 512, 3, 1), (512, 7, 2048, 1, 1),
)
PASSES = (("dgrad", [True, False, False]), ("wgrad", [False, True, False]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repetitions", type=int, default=20)
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True
    for dtype, layout, name in ((torch.float16, torch.channels_last, "f16"),
                                (torch.float32, torch.contiguous_format, "tf32")):
        for c, hw, k, rs, stride in SHAPES:
            x = torch.randn(args.batch, c, hw, hw, device="cuda", dtype=dtype)
            w = torch.randn(k, c, rs, rs, device="cuda", dtype=dtype)
            x, w = x.to(memory_format=layout), w.to(memory_format=layout)
            pad = rs // 2
            y = F.conv2d(x, w, stride=stride, padding=pad)
            dy = torch.randn_like(y)
            label = (f"n={args.batch} c={c} hw={hw} k={k} rs={rs} stride={stride} "
                     f"layout={'nhwc' if layout is torch.channels_last else 'nchw'} dtype={name}")
            us = back_to_back_us(lambda: F.conv2d(x, w, stride=stride, padding=pad),
                                 args.warmup, args.repetitions)
            print(f"conv pass=fprop {label} time_us={us:.1f}", flush=True)
            for pass_name, mask in PASSES:
                def backward(mask=mask):
                    torch.ops.aten.convolution_backward(dy, x, w, None, [stride, stride],
                                                        [pad, pad], [1, 1], False, [0, 0], 1,
                                                        mask)
                us = back_to_back_us(backward, args.warmup, args.repetitions)
                print(f"conv pass={pass_name} {label} time_us={us:.1f}", flush=True)


if __name__ == "__main__":
    main()
