# inductor's pointwise and reduction Triton kernels (torch.compile), each a function whose bytes
# are known by hand: inductor_check.py then reads the run's trace and checks that phantora's
# start-up hook described them (phantora_inductor_launches.py), so that the bandwidth model, not
# the default, prices them. Shapes: N x N bf16 tensors, N = 4096 (32 MiB each).
import torch

N = 4096


@torch.compile
def scale_add(x, y):
    return x * y + 1.0  # one pointwise kernel: reads x and y, writes the result


@torch.compile
def row_sum_of_squares(x):
    return (x.float() ** 2).sum(dim=-1)  # one reduction: reads x, writes N floats


@torch.compile
def add_bias(x, b):
    return x + b  # pointwise with a broadcast N-element input


@torch.compile
def scaled_left_quarter(x):
    return x[:, : N // 4] * 2.0  # pointwise over a slice: inductor passes x whole


x = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
y = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
for _ in range(2):  # the second call of each runs the compiled kernel alone
    torch.cuda.synchronize()
    scale_add(x, y)
    row_sum_of_squares(x)
    add_bias(x, b)
    scaled_left_quarter(x)
torch.cuda.synchronize()
print("inductor kernels ok")
