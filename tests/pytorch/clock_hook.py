"""Python's clocks are the thread's simulated host clock (the shim interposes the C library's
clocks), a sleep takes the simulated time it asks for, the CPU-time clocks stay real, a user's own
sitecustomize still runs, and cuDNN stays on (the hook keeps only RNNs and CTC loss off it)."""
import os
import time

import torch

assert os.environ.get("USER_SITECUSTOMIZE_RAN") == "1", "the shadowed sitecustomize did not run"
assert torch.backends.cudnn.enabled, "cuDNN should stay on under phantora"
assert getattr(torch.nn.LSTM.forward, "__phantora_without_cudnn__", False), \
    "the hook should keep LSTM off cuDNN"

# A sleep moves the simulated clock by what it slept (and its real 0.5 s pass too); the CPU
# spent meanwhile (measured mode) adds a little. time.monotonic and time.perf_counter agree.
cpu0, sim0, mono0 = time.process_time(), time.perf_counter(), time.monotonic()
wall0 = time.time()
time.sleep(0.5)
sim1, mono1, wall1 = time.perf_counter(), time.monotonic(), time.time()
assert 0.5 <= sim1 - sim0 < 0.55, f"a 0.5 s sleep advanced the simulated clock by {sim1 - sim0:.3f} s"
assert abs((mono1 - mono0) - (sim1 - sim0)) < 1e-3, "monotonic and perf_counter disagree"
assert abs((wall1 - wall0) - (sim1 - sim0)) < 1e-3, "time.time does not move with the host clock"
# A deadline loop of short sleeps ends at its deadline.
deadline = time.monotonic() + 0.05
naps = 0
while time.monotonic() < deadline:
    time.sleep(0.01)
    naps += 1
assert naps == 5, f"5 naps of 10 ms reach a 50 ms deadline, took {naps}"
# The CPU-time clock is the process's real CPU time: a sleep uses none.
assert time.process_time() - cpu0 < 0.2, "process_time is real CPU time"

# GPU work the host waits for advances it by the simulated duration: 10 bf16 GEMMs of 8192^3,
# back to back, each priced as matmul.py works out (755 TFLOP/s sustained at K = 6144, 32 whole
# waves for 31.03 waves' work, each tile's fixed cost of 207 of K, 4 us of overhead: 1.494 ms)
# take 14.94 ms; the host's own time before the first launch (real CPU time here, --cpu-time
# measured) adds a little.
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(10):
    x @ x
torch.cuda.synchronize()
elapsed = time.perf_counter() - t0
achievable = 10 * (2 * 8192**3 / 755e12 * 32 / (4096 / 132) * (8192 + 207) / 8192
                   * 6144 / (6144 + 207) + 4e-6)
assert 0.99 * achievable <= elapsed < 1.1 * achievable, \
    f"10 GEMMs took {elapsed * 1e3:.3f} ms of simulated time, not {achievable * 1e3:.3f} ms"
# time.time() moves with the same clock.
assert abs((time.time() - time.perf_counter()) - (time.time() - time.perf_counter())) < 1e-3
# The _ns forms agree with the float forms.
assert abs(time.perf_counter_ns() / 1e9 - time.perf_counter()) < 1e-3
print(f"clock hook ok: 10 GEMMs {elapsed * 1e3:.3f} ms simulated")
