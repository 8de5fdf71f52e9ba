#!/usr/bin/env python3
"""scripts/step_breakdown.py on a trace written by hand: GPU 0 runs 2 marker kernels per step for
4 steps, then 2 more (a validation pass); each step holds a 10 us GEMM, a 5 us Triton kernel, a
2 us copy and a 1 us other kernel besides its markers (3 us each), 100 us apart; the Triton and
the other kernel are priced by the default model (args.source), the rest by models. With --steps
2 --skip 2 the window is the last two whole steps before the validation: per step 10 / 6 / 5 / 2 /
1 us, 6 us of it default-priced, 100 us marker to marker. GPU 1's spans, which must not count,
are all 1000 us.
Usage: check.py REPO_ROOT"""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
events = []


def span(name, ts, dur, gpu=0, cat="kernel", source="modelled"):
    events.append({"ph": "X", "pid": gpu, "tid": 1, "name": name, "cat": cat, "ts": ts,
                   "dur": dur, "args": {"gpu": gpu, "source": source}})


for step in range(5):  # 4 training steps, then the validation pass's markers
    t = 100.0 * step
    for i in range(2):
        span("_ZN13pytorch_flash16flash_fwd_kernelI", t + 40 * i, 3)
        span("_ZN13pytorch_flash16flash_fwd_kernelI", t + 40 * i, 1000, gpu=1)
    if step < 4:
        span("gemm:m=8,n=8,k=8", t + 10, 10)
        span("triton_poi_fused_0", t + 25, 5, source="default")
        span("memcpy", t + 60, 2, cat="memcpy")
        span("at_native_reduce_kernel", t + 70, 1, source="default")
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "trace.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)
    p = subprocess.run([sys.executable, os.path.join(root, "scripts", "step_breakdown.py"), path,
                        "--per-step", "2", "--steps", "2", "--skip", "2", "--json"],
                       capture_output=True, text=True)
print(p.stdout, p.stderr)
want = {"GEMMs": 0.01, "attention": 0.006, "inductor/Triton": 0.005, "copies and memsets": 0.002,
        "other kernels": 0.001}
got = json.loads(p.stdout) if p.returncode == 0 else {}
ok = (abs(got.get("step_ms", 0) - 0.1) < 1e-9 and
      abs(got.get("default_ms", 0) - 0.006) < 1e-9 and
      all(abs(got["families_ms"].get(k, -1) - v) < 1e-9 for k, v in want.items()))
sys.exit(0 if ok else f"step_breakdown: want {want}, 0.006 ms default-priced and 0.1 ms per "
         f"step, got {got}")
