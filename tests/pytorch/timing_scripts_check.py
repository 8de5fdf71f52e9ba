#!/usr/bin/env python3
"""Runs one of the device check's timing scripts under `phantora run` (the command after --,
--cpu-time zero, so back-to-back launches are timed by the GPU alone) and checks what it prints
against the models by hand, on h100:

gemm (scripts/gemm_timing.py):
  4096^3 bf16, op n/n: 8 waves of 128 x 128 tiles, each 4096 + 207 of K (the tile's fixed
  cost) at the main loop's rate, 989.4 TFLOPS x 0.763 x (6144 + 207) / 6144, over 132 SMs =
  190.8 us, plus 4 us of overhead = 194.8 us (GemmModel.LargeBf16CubeOnH100ByHand); and each
  shape reaches cuBLAS in the orientation its signature names (the report's GEMM signatures
  carry the same m, n, k and op_a / op_b), so that the GPU's times and the model's prices are
  of the same products.
memory (scripts/memory_timing.py, 64 MiB bf16 tensors):
  fill: 3 us + 64 MiB / (3350 GB/s x 0.90) = 25.26 us; add: 3 us + 3 x 64 MiB / (...) = 69.77 us
  (the memory-bound model); copy (a device-to-device cudaMemcpyAsync): 2 us + 2 x 64 MiB /
  (3350 GB/s x 0.90) = 46.52 us (the copy model, docs/kernels.md: the same achieved HBM rate).
attention (scripts/attention_timing.py, 64 x 6 heads x 1024 tokens x 128, causal): each forward
  is 4 us + 64 x 6 x work(s0) x 4 x 128 FLOPs / (989.4 TFLOPS x plateau x 1575 / 1830) (the h100
  preset's sustained clock over the figures' 1830 MHz), work(s0) = 128^2 x 8 x 9 / 2 + 1024 x s0
  loop steps of the causal CTAs, with flash's plateau and s0 (FA2's) and cuDNN's
  (models.toml); and each forward + backward takes longer than its forward.

conv (scripts/conv_timing.py, batch 256): one line per shape, precision and pass (14 x 2 x 3);
  ResNet-50's layer-4 3 x 3 (x [256, 512, 7, 7], w [512, 512, 3, 3]) forward in fp16
  channels-last is the GEMM 12,544 x 512 x 4,608: 98 x 4 = 392 tiles of 128 x 128 on 132 SMs,
  3 waves, each tile 2 x 128 x 128 x (4,608 + 207) FLOPs at the main loop's rate (as gemm's)
  = 80.1 us, plus 4 us = 84.1 us; in TF32 NCHW the same GEMM at the TF32 peak (494.7 of 989.4)
  plus the three transposes: 3 x 3 us + 2 x (2 x 256 x 512 x 49 + 512 x 512 x 9) x 4 bytes at
  3350 GB/s x 0.90 (docs/cost-model.md, "Convolution").

Usage: timing_scripts_check.py gemm|memory|attention|conv RUN_DIR -- phantora run ... --out RUN_DIR -- python ...
"""
import json
import os
import re
import subprocess
import sys

from kernels_data import kernels_data

GEMM = re.compile(r"^gemm m=(\d+) n=(\d+) k=(\d+) op_a=([nt]) op_b=([nt]) time_us=([0-9.]+) "
                  r"tflops=([0-9.]+)$", re.M)
MEMORY = re.compile(r"^mem kernel=(\w+) bytes_per_tensor=(\d+) moved=(\d+) time_us=([0-9.]+) "
                    r"tbps=([0-9.]+)$", re.M)
ATTENTION = re.compile(r"^attn backend=(\w+) pass=(\S+) b=(\d+) h=(\d+) s=(\d+) d=(\d+) "
                       r"causal=1 time_us=([0-9.]+)$", re.M)
CONV = re.compile(r"^conv pass=(\w+) n=(\d+) c=(\d+) hw=(\d+) k=(\d+) rs=(\d+) stride=(\d+) "
                  r"layout=(\w+) dtype=(\w+) time_us=([0-9.]+)$", re.M)
HBM = 3350e9  # h100 (gpus.toml)


def check_gemm(log, report, expect):
    rows = GEMM.findall(log)
    shapes = [(int(m), int(n), int(k), a, b) for m, n, k, a, b, _, _ in rows]
    expect(shapes == [(4096, 4096, 4096, "n", "n"), (8192, 2304, 768, "t", "n")],
           f"one line per signature, in order (got {shapes})")
    if rows:
        us = float(rows[0][5])
        expect(abs(us - 194.8) < 0.1, f"4096^3 on h100: 194.8 us by hand (got {us})")
        expect(abs(float(rows[0][6]) - 2 * 4096**3 / us / 1e6) < 0.1, "TFLOP/s = 2mnk / time")
    kernels = [k["kernel"] for k in report["top_kernels"]]
    for m, n, k, a, b in shapes:
        prefix = f"gemm:m={m},n={n},k={k},"
        expect(any(s.startswith(prefix) and f"op_a={a},op_b={b}," in s for s in kernels),
               f"{prefix} op_a={a} op_b={b} reaches cuBLAS as its signature says")


def check_memory(log, report, expect):
    mib64 = 64 << 20
    by_hand = {"fill": 3 + mib64 / (HBM * 0.90) * 1e6, "add": 3 + 3 * mib64 / (HBM * 0.90) * 1e6,
               "copy": 2 + 2 * mib64 / (HBM * 0.90) * 1e6}
    rows = {name: (int(size), int(moved), float(us)) for name, size, moved, us, _ in
            MEMORY.findall(log)}
    expect(sorted(rows) == ["add", "copy", "fill"], f"fill, copy and add (got {sorted(rows)})")
    for name, us in by_hand.items():
        size, moved, got = rows.get(name, (0, 0, 0.0))
        expect(size == mib64 and abs(got - us) < 0.01, f"{name} of 64 MiB: {us:.2f} us (got {got})")
        expect(moved == {"fill": 1, "copy": 2, "add": 3}[name] * mib64, f"{name}: bytes moved")


def check_attention(log, report, expect):
    models, gpus = kernels_data("models"), kernels_data("gpus")
    attention, h100 = models["attention"], models["gpu"]["h100"]
    scale = gpus["gpu"]["h100"]["perf"]["sustained_clock_mhz"] / h100["attention_clock_mhz"]
    rows = {(backend, what): float(us) for backend, what, _, _, _, _, us in ATTENTION.findall(log)}
    expect(sorted(rows) == [("cudnn", "fwd"), ("cudnn", "fwd+bwd"), ("flash", "fwd"),
                            ("flash", "fwd+bwd")], f"both backends, both passes (got {sorted(rows)})")
    constants = {"flash": (attention["fa2_forward_s0"], h100["fa2_forward"]),
                 "cudnn": (attention["cudnn_forward_s0"], h100["cudnn_forward"])}
    for backend, (s0, plateau) in constants.items():
        work = 128 * 128 * 8 * 9 / 2 + 1024 * s0
        us = 4 + 64 * 6 * work * 4 * 128 / (989.4e12 * plateau * scale) * 1e6
        got = rows.get((backend, "fwd"), 0.0)
        expect(abs(got - us) < 0.1, f"{backend} forward: {us:.1f} us by hand (got {got})")
        expect(rows.get((backend, "fwd+bwd"), 0.0) > got, f"{backend}: forward + backward longer")


def check_conv(log, report, expect):
    rows = {(p, int(c), int(hw), int(k), int(rs), int(st), lay, dt): float(us)
            for p, _, c, hw, k, rs, st, lay, dt, us in CONV.findall(log)}
    expect(len(rows) == 14 * 2 * 3, f"14 shapes x 2 precisions x 3 passes (got {len(rows)})")
    main_loop = 989.4e12 * 0.763 * (6144 + 207) / 6144  # analytical_model_test.cpp's
    f16_us = 4 + 3 * 132 * 2 * 128 * 128 * (4608 + 207) / main_loop * 1e6
    tensors = (2 * 256 * 512 * 49 + 512 * 512 * 9) * 4
    tf32_us = (4 + 3 * 132 * 2 * 128 * 128 * (4608 + 207) / (main_loop * 494.7 / 989.4) * 1e6
               + 3 * 3 + 2 * tensors / (HBM * 0.90) * 1e6)
    for key, us in ((("fprop", 512, 7, 512, 3, 1, "nhwc", "f16"), f16_us),
                    (("fprop", 512, 7, 512, 3, 1, "nchw", "tf32"), tf32_us)):
        got = rows.get(key, 0.0)
        expect(abs(got - us) < 0.1, f"{key}: {us:.1f} us by hand (got {got})")
    expect(report["gpu_time"].get("defaulted_kernels", []) == [], "no kernel priced by default")


def main():
    kind, run_dir = sys.argv[1], sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(p.stdout[-3000:], p.stderr[-3000:])
    failures = []

    def expect(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            failures.append(what)

    expect(p.returncode == 0, "phantora run exits 0")
    with open(os.path.join(run_dir, "job.log")) as f:
        log = f.read()
    with open(os.path.join(run_dir, "report.json")) as f:
        report = json.load(f)
    checks = {"gemm": check_gemm, "memory": check_memory, "attention": check_attention,
              "conv": check_conv}
    checks[kind](log, report, expect)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
