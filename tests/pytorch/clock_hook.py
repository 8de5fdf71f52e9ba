"""The start-up hook: Python's clocks follow the simulated host clock, real sleeps stay real and
cost no simulated time, a user's own sitecustomize still runs, and cuDNN is off."""
import os
import time

import torch

assert os.environ.get("USER_SITECUSTOMIZE_RAN") == "1", "the shadowed sitecustomize did not run"
assert not torch.backends.cudnn.enabled, "cuDNN should be off under phantora"

# A real sleep uses no CPU: in measured mode it adds (almost) nothing to the simulated clock.
wall0, sim0 = time.clock_gettime(time.CLOCK_MONOTONIC), time.perf_counter()
time.sleep(0.5)
wall1, sim1 = time.clock_gettime(time.CLOCK_MONOTONIC), time.perf_counter()
assert wall1 - wall0 >= 0.5
assert sim1 - sim0 < 0.05, f"a 0.5 s sleep advanced the simulated clock by {sim1 - sim0:.3f} s"

# GPU work the host waits for advances it by the simulated duration: 10 bf16 GEMMs of 8192^3,
# back to back, at the best rate measured on an H100 SXM (792.1 TFLOP/s, see matmul.py) take
# 10 x 2*8192^3 / 792.1 TFLOP/s = 13.88 ms; the host's own time before the first launch (real
# CPU time here, --cpu-time measured) adds a little.
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(10):
    x @ x
torch.cuda.synchronize()
elapsed = time.perf_counter() - t0
achievable = 10 * 2 * 8192**3 / 792.1e12
assert 0.99 * achievable <= elapsed < 1.1 * achievable, \
    f"10 GEMMs took {elapsed * 1e3:.3f} ms of simulated time, not {achievable * 1e3:.3f} ms"
# time.time() moves with the same clock.
assert abs((time.time() - time.perf_counter()) - (time.time() - time.perf_counter())) < 1e-3
# The _ns forms agree with the float forms.
assert abs(time.perf_counter_ns() / 1e9 - time.perf_counter()) < 1e-3
print(f"clock hook ok: 10 GEMMs {elapsed * 1e3:.3f} ms simulated")
