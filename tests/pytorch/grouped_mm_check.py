#!/usr/bin/env python3
"""Checks the trace of tests/pytorch/grouped_mm.py (RUN_DIR, its --out directory): each of its
three torch._grouped_mm calls (forward, the input's and the weights' gradients) is priced as the
GEMM its set-up launch describes, 8 experts of 16384 / 8 = 2048 tokens each, DIM 512,
HIDDEN 1536, bf16:

  forward         8 x (2048 x HIDDEN x DIM)     tokens x weights
  input grad      8 x (2048 x DIM x HIDDEN)     output grad x weights
  weight grad     8 x (DIM, HIDDEN in either order) x 2048: the tokens are the inner dimension

each by hand with the GEMM model (docs/cost-model.md, "GEMM"): with at least one full wave of
128 x 128 tiles there is no K split, so

  time = overhead + max(waves x 2 x 128 x 128 x (K + tile cost) / (main-loop rate / SMs),
                        bytes / (HBM x memory efficiency))

  main-loop rate = peak x efficiency x clock scale x (K_e + tile cost) / K_e

(every tile pays a fixed cost worth `tile_cost_k` of K; the efficiency is a whole GEMM's rate
at K_e = `gemm_efficiency_k`, that cost included)

with the H100's figures from gpus.toml and models.toml; each label states the even split of the
groups it assumed. A CUTLASS grouped kernel left in the trace (priced by the default model), a
wrong shape or another time fails it.

Usage: grouped_mm_check.py RUN_DIR
"""
import math
import sys

from kernels_data import kernels_data
from trace_events import gpu_spans

TOKENS, EXPERTS, DIM, HIDDEN = 16384, 8, 512, 1536
PER_EXPERT = TOKENS // EXPERTS


def gemm_us(m, n, k, batch):
    h100 = kernels_data("gpus")["gpu"]["h100"]
    gpu, sms = h100["perf"], h100["device"]["multiprocessor_count"]
    models = kernels_data("models")
    g, eff = models["gemm"], models["gpu"]["h100"]
    tiles = batch * math.ceil(m / g["tile_m"]) * math.ceil(n / g["tile_n"])
    assert tiles >= sms, "the hand formula below has no K split"
    waves = math.ceil(tiles / sms)
    padded_k = math.ceil(k / g["tile_k"]) * g["tile_k"]
    tile_cost, k_e = g["tile_cost_k"], eff["gemm_efficiency_k"]
    rate = gpu["bf16_tflops"] * 1e12 * eff["gemm_efficiency"] * (
        gpu["sustained_clock_mhz"] / eff["gemm_clock_mhz"]) * (k_e + tile_cost) / k_e
    compute = waves * 2 * g["tile_m"] * g["tile_n"] * (padded_k + tile_cost) / (rate / sms)
    memory = batch * (m * k + k * n + m * n) * 2 / (gpu["hbm_gbytes_per_s"] * 1e9 *
                                                    eff["memory_efficiency"])
    return g["overhead_us"] + max(compute, memory) * 1e6


# How the trace labels a grouped GEMM priced from an even split of its groups.
ASSUMED = " [torch._grouped_mm: group sizes assumed even]"


def shape(name):
    fields = dict(f.split("=") for f in name[len("gemm:"):].split(" [")[0].split(","))
    return int(fields["m"]), int(fields["n"]), int(fields["k"]), int(fields["batch"])


def main():
    spans = gpu_spans(sys.argv[1])
    grouped = [e for e in spans if "GroupProblemShape" in e["name"]]
    gemms = [e for e in spans if e["name"].startswith("gemm:") and shape(e["name"])[3] == EXPERTS]
    failures = []
    if grouped:
        failures.append(f"{len(grouped)} CUTLASS grouped kernels priced as kernels of their own")
    expected = [
        ("forward", lambda m, n, k: (m, n, k) == (PER_EXPERT, HIDDEN, DIM)),
        ("input grad", lambda m, n, k: (m, n, k) == (PER_EXPERT, DIM, HIDDEN)),
        ("weight grad", lambda m, n, k: k == PER_EXPERT and {m, n} == {DIM, HIDDEN}),
    ]
    for what, fits in expected:
        found = [e for e in gemms if fits(*shape(e["name"])[:3])]
        if len(found) != 1:
            failures.append(f"{what}: {len(found)} GEMMs of its shape, expected 1")
            continue
        e = found[0]
        m, n, k, batch = shape(e["name"])
        want = gemm_us(m, n, k, batch)
        print(f"{what}: {e['name']} {e['dur']:.3f} us, source {e['args'].get('source')}; "
              f"by hand {want:.3f} us")
        if not e["name"].endswith(ASSUMED):
            failures.append(f"{what}: the label does not state the even split it assumed")
        if e["args"].get("source") != "modelled":
            failures.append(f"{what}: priced by {e['args'].get('source')}")
        if abs(e["dur"] - want) > 0.01:
            failures.append(f"{what}: {e['dur']:.3f} us, by hand {want:.3f} us")
    if len(gemms) != 3:
        failures.append(f"{len(gemms)} GEMMs of {EXPERTS} groups, expected 3")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("grouped GEMMs priced as the GEMMs their set-up launches describe")


if __name__ == "__main__":
    main()
