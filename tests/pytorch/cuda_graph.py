# A CUDA graph captured and replayed through torch.cuda.graph (phantora run --gpu h100): the
# replay runs the kernels the eager loop runs, so on a saturated stream it takes the eager
# loop's GPU time, and no less than the matrix products take at the H100's bf16 peak. On a
# CUDA 12 PyTorch the capture asks cudaStreamGetCaptureInfo_v2, CUDA 12's name.
import torch

n, reps = 8192, 5  # GPU-bound: host time between launches stays hidden
x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
w = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)


def step():
    return (x @ w).relu()


side = torch.cuda.Stream()  # warm-up on a side stream, as torch.cuda.graph's docs ask
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        step()
torch.cuda.current_stream().wait_stream(side)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    out = step()
assert out.shape == (n, n)


def timed(body):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        body()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)  # ms


eager_ms = timed(step)
graph_ms = timed(graph.replay)
peak_ms = reps * 2 * n**3 / 989.4e12 * 1e3
assert graph_ms > peak_ms, (graph_ms, peak_ms)
assert abs(graph_ms - eager_ms) <= 0.02 * eager_ms, (graph_ms, eager_ms)
print(f"cuda graph ok: {reps} replays {graph_ms:.3f} ms, eager {eager_ms:.3f} ms")
