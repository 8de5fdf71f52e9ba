#!/usr/bin/env python3
"""Derives the GEMM model's per-tile cost (models.toml [gemm] tile_cost_k) from GEMM times
measured on a real GPU by scripts/gemm_timing.py.

The model (docs/cost-model.md, "GEMM") runs a GEMM in whole waves of 128 x 128 output tiles
over the SMs; a tile's main loop takes one step per 64 of K, and every tile also pays a fixed
cost (filling the pipeline before its first step, writing its outputs after its last). Over
shapes that fill at least one wave (no split-K) the time of one launch is then

    time = overhead + waves x (steps x a + b)

with `overhead` the model's own per-launch cost (models.toml [gemm] overhead_us, held fixed),
a the time of one step and b the fixed cost of one tile, both at the clock the GPU ran at; the
tile's shape and step (tile_m, tile_n, tile_k) are the model's too, read from the same file.
This fits a and b by least squares on relative errors and prints b in steps of the main loop,
as K elements (64 b / a): the form the model takes, which does not depend on the clock.

Shapes left out: those of 1024^3 and fewer FLOPs (back to back, torch.matmul's host time per
call is longer than the product: they measure the host) and those with fewer tiles than SMs
(split-K). --exclude drops further shapes by m,n,k, with the reason stated in the docs.

  python3 scripts/fit_gemm_tile_cost.py docs/measurements/h200-2026-12-04/gemm-timing.txt \
      --sms 132 --exclude 3072,768,8192
"""
import argparse
import math
import os
import re
import sys
import tomllib

LINE = re.compile(r"gemm m=(\d+) n=(\d+) k=(\d+) .*time_us=([\d.]+)")
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels-db", "data",
                      "models.toml")


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                rows.append((int(m[1]), int(m[2]), int(m[3]), float(m[4])))
    return rows


def fit(points, overhead_us):
    """Least squares of (time - overhead) / time = (waves*steps*a + waves*b) / time."""
    # Normal equations of the 2 x 2 system in (a, b), each row weighted by 1 / time.
    saa = sab = sbb = sya = syb = 0.0
    for waves, steps, t in points:
        xa, xb, y = waves * steps / t, waves / t, (t - overhead_us) / t
        saa += xa * xa
        sab += xa * xb
        sbb += xb * xb
        sya += xa * y
        syb += xb * y
    det = saa * sbb - sab * sab
    if det == 0:
        sys.exit("fit_gemm_tile_cost: the shapes do not separate the step from the tile cost "
                 "(need at least two values of K)")
    return (sya * sbb - syb * sab) / det, (saa * syb - sab * sya) / det


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("timing", help="output of scripts/gemm_timing.py on a GPU")
    p.add_argument("--sms", type=int, required=True, help="the GPU's SM count")
    p.add_argument("--models", default=MODELS,
                   help="the model constants whose [gemm] tile and overhead the fit holds")
    p.add_argument("--exclude", action="append", default=[], metavar="M,N,K",
                   help="leave out this shape (repeatable)")
    args = p.parse_args()

    with open(args.models, "rb") as f:
        gemm = tomllib.load(f)["gemm"]
    overhead_us, step = gemm["overhead_us"], gemm["tile_k"]

    excluded = {tuple(int(v) for v in e.split(",")) for e in args.exclude}
    used = []
    for m, n, k, t in read(args.timing):
        tiles = math.ceil(m / gemm["tile_m"]) * math.ceil(n / gemm["tile_n"])
        if 2 * m * n * k <= 2 * 1024**3 or tiles < args.sms or (m, n, k) in excluded:
            continue
        used.append((m, n, k, math.ceil(tiles / args.sms), math.ceil(k / step), t))
    if len(used) < 2:
        sys.exit(f"fit_gemm_tile_cost: {len(used)} usable shapes in {args.timing}")

    a, b = fit([(waves, steps, t) for _, _, _, waves, steps, t in used], overhead_us)
    print(f"shapes fitted: {len(used)}")
    print(f"step ({step} of K, one tile):  {a:.4f} us")
    print(f"tile fixed cost:           {b:.4f} us = {b / a:.2f} steps")
    print(f"tile_cost_k = {round(step * b / a)}")
    print("m n k waves steps measured_us fitted_us fitted/measured")
    for m, n, k, waves, steps, t in used:
        f = overhead_us + waves * (steps * a + b)
        print(f"{m} {n} {k} {waves} {steps} {t:.2f} {f:.2f} {f / t:.3f}")


if __name__ == "__main__":
    main()
