# cuDNN's convolutions on the virtual GPU (docs/pytorch.md, "cuDNN"): PyTorch sends each pass of
# a convolution to cuDNN as a graph of one operation, and the simulator prices it as the implicit
# GEMM cuDNN's kernels compute (docs/cost-model.md, "Convolution"). Each pass below is
# compute-bound, so it must take exactly as long as torch.mm of that GEMM's shape (the GEMM
# model prices both from the same tiles and waves; the GEMM's own operands are the larger, and
# still below its compute): forward N·P·Q x K x C·R·S, data gradient N·H·W x C x K·R·S over the
# strides' product, filter gradient K x C·R·S x N·P·Q. A pass decoded with a wrong shape, stride
# or pass, or priced by default, fails it. Then a small CNN with batch norm, max and average
# pooling and an LSTM head runs a training step as a program would (RNNs stay on PyTorch's
# kernels).
import torch
import torch.nn.functional as F
from kernels_data import kernels_data

assert torch.backends.cudnn.enabled, "phantora's start-up hook leaves cuDNN on"
bf16 = dict(device="cuda", dtype=torch.bfloat16)


lead = torch.randn(8192, 8192, **bf16)


def timed(fn):
    fn()  # once untimed: allocations and plans
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # A long GEMM ahead of the start event keeps the GPU busy while the host submits the timed
    # call (PyTorch's cuDNN path spends tens of microseconds of host time per call): the
    # events then time the GPU's work alone.
    torch.mm(lead, lead)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000.0  # us


failures = []


def same(what, conv_us, mm_us, expected="its GEMM"):
    print(f"{what}: convolution {conv_us:.3f} us, {expected} {mm_us:.3f} us", flush=True)
    if abs(conv_us - mm_us) > 0.02 + 1e-3 * mm_us:
        failures.append(f"{what}: {conv_us:.3f} us against {mm_us:.3f} us")


def mm_us(m, n, k):
    a, b = torch.randn(m, k, **bf16), torch.randn(k, n, **bf16)
    return timed(lambda: torch.mm(a, b))


def pass_us(x, w, stride, mask):
    go = torch.randn_like(F.conv2d(x, w, stride=stride, padding=1))
    return timed(lambda: torch.ops.aten.convolution_backward(
        go, x, w, None, [stride, stride], [1, 1], [1, 1], False, [0, 0], 1, mask))


# ResNet-50's layer4 3 x 3: x [64, 512, 14, 14], w [512, 512, 3, 3], padding 1, channels-last
# (what tensor-core kernels read; NCHW below).
cl = torch.channels_last
x = torch.randn(64, 512, 14, 14, **bf16).to(memory_format=cl)
w = torch.randn(512, 512, 3, 3, **bf16).to(memory_format=cl)
same("forward", timed(lambda: F.conv2d(x, w, padding=1)), mm_us(64 * 14 * 14, 512, 512 * 9))
same("data gradient", pass_us(x, w, 1, [True, False, False]), mm_us(64 * 14 * 14, 512, 512 * 9))
same("filter gradient", pass_us(x, w, 1, [False, True, False]), mm_us(512, 512 * 9, 64 * 14 * 14))
# Stride 2: x [32, 512, 28, 28] -> [32, 512, 14, 14]; each input pixel takes 512·9/4 taps.
x2 = torch.randn(32, 512, 28, 28, **bf16).to(memory_format=cl)
same("strided data gradient", pass_us(x2, w, 2, [True, False, False]),
     mm_us(32 * 28 * 28, 512, 512 * 9 // 4))

# In PyTorch's default NCHW, cuDNN transposes x and w to channels-last and y back: three
# memory-bound kernels, each reading and writing its tensor once (docs/cost-model.md,
# "Convolution"), priced at the H100's HBM rate and the memory-bound floor.
gpus, models = kernels_data("gpus")["gpu"]["h100"], kernels_data("models")
rate = gpus["perf"]["hbm_gbytes_per_s"] * 1e9 * models["gpu"]["h100"]["memory_efficiency"]
tensors = (2 * 64 * 512 * 14 * 14 + 512 * 512 * 9) * 2
xf, wf = x.contiguous(), w.contiguous()
same("forward in NCHW", timed(lambda: F.conv2d(xf, wf, padding=1)),
     timed(lambda: F.conv2d(x, w, padding=1)) + 3 * models["memory_bound"]["floor_us"]
     + 2 * tensors / rate * 1e6, "channels-last and the transposes")

# A training step of a small CNN, as a program writes one (autocast, channels_last, cuDNN's
# benchmark mode timing its plans), with an LSTM over the feature map's rows.
torch.backends.cudnn.benchmark = True


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), torch.nn.BatchNorm2d(64),
            torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1),
            torch.nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False), torch.nn.BatchNorm2d(64),
            torch.nn.ReLU(), torch.nn.Conv2d(64, 128, 1), torch.nn.AvgPool2d(2))
        self.rows = torch.nn.LSTM(128, 64, batch_first=True)
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        f = self.features(x).mean(dim=3).transpose(1, 2)  # [batch, rows, 128]
        out, _ = self.rows(f)
        return self.head(out[:, -1])


net = Net().cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
images = torch.randn(16, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
labels = torch.randint(0, 10, (16,), device="cuda")
for _ in range(2):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(net(images), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
torch.cuda.synchronize()
print("a CNN training step ran", flush=True)

for f in failures:
    print("FAIL:", f)
raise SystemExit(1 if failures else 0)
