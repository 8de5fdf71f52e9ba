"""ResNet-50 v1.5 training throughput on synthetic ImageNet-sized batches, measured the way
NVIDIA's DeepLearningExamples measures it (images per second over the steps after warm-up),
to compare with their published DGX A100 figures (docs/accuracy.md, "Convolutional networks").

ResNet-50 v1.5 (He et al. 2016, with the stride of each downsampling bottleneck on its 3 x 3
convolution, as torchvision's resnet50 and NVIDIA's recipe): a 7 x 7 stem, bottlenecks of
[3, 4, 6, 3] at widths 64 to 512 (x4 out), global average pooling, a 1000-way classifier.
Training as NVIDIA's recipe runs it: SGD with momentum 0.875, weight decay, label smoothing
0.1; --amp adds autocast (fp16) with a loss scaler, and channels-last tensors, as their AMP
configuration has them; without it fp32 tensors in PyTorch's default NCHW run as TF32 (PyTorch's
default for cuDNN), as their TF32 configuration. --memory-format overrides the layout.

  python examples/resnet/train.py [--batch-size 256] [--steps 10] [--warmup 3] [--amp]
                                  [--memory-format nchw|nhwc]
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    def __init__(self, inplanes, width, stride):
        super().__init__()
        out = width * 4
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.downsample = None
        if stride != 1 or inplanes != out:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, out, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(out))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
                                  nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        layers, inplanes = [], 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                layers.append(Bottleneck(inplanes, width, stride if i == 0 else 1))
                inplanes = width * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(2048, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=10, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--amp", action="store_true", help="fp16 autocast, loss scaling, channels-last")
    p.add_argument("--memory-format", choices=("nchw", "nhwc"),
                   help="activation layout (default: nhwc with --amp, else nchw)")
    args = p.parse_args()

    torch.backends.cudnn.benchmark = True
    nhwc = args.memory_format == "nhwc" if args.memory_format else args.amp
    fmt = torch.channels_last if nhwc else torch.contiguous_format
    model = ResNet50().cuda().to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.256, momentum=0.875, weight_decay=3.0517578125e-05)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    images = torch.randn(args.batch_size, 3, 224, 224, device="cuda").to(memory_format=fmt)
    labels = torch.randint(0, 1000, (args.batch_size,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"ResNet-50 v1.5, batch {args.batch_size}, {'AMP' if args.amp else 'TF32'}, "
          f"{'NHWC' if nhwc else 'NCHW'}: "
          f"{elapsed / args.steps * 1e3:.1f} ms/step, "
          f"{args.batch_size * args.steps / elapsed:.0f} img/s, "
          f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
