#!/usr/bin/env python3
"""Checks the GEMM model against a published table of measured GEMM throughput: OpenXLA's
default matmul performance table (`xla/service/gpu/model/matmul_interpolator_data.h` in
openxla/xla, also `third_party/xla/...` in tensorflow/tensorflow), which XLA's GPU cost model
interpolates. XLA's `matmul_perf_table_gen` tool made it: each batched dot
[b, m, k] x [b, k, n] -> [b, m, n] compiled by XLA (autotuned) and run on the GPU, the median of
its kernel times, stored as FLOP/s = 2 b m n k / time.

The table is not part of this repository: download the header from the public repository and
give its path. This script turns the entries of one GPU architecture and dtype into kernel
database rows (source `imported`), imports them into a scratch database and runs
`phantora db calibrate --source imported`, which sets each measured time beside what the cost
models charge for the same signature; then it summarises the ratios by problem size.

  python3 scripts/published_gemm_table.py --table matmul_interpolator_data.h \\
      --phantora build/tools/phantora --gpu h100

The model is not fitted to these rows (docs/accuracy.md, "GEMMs against a published table")."""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

# XLA's dtype keys and the signature's element types and compute type (docs/kernels-db.md,
# "Signatures"). XLA runs f32 dots on TF32 tensor cores by default on Ampere and later: the
# table's f32 figures (401 TFLOP/s at 4096^3 on sm_90) are far above the 67 TFLOP/s of H100's
# FP32 cores.
DTYPES = {"bf16xbf16->bf16": ("bf16", "bf16", "bf16", "f32"),
          "f32xf32->f32": ("f32", "f32", "f32", "tf32")}

HEADER = ("gpu,signature,count,mean_us,min_us,max_us,stddev_us,source,device_name,"
          "driver_version,library_versions,recorded_at")


def parse_table(text):
    """{architecture key: [(b, m, n, k, {dtype key: FLOP/s})]} from the header's text proto."""
    tables = {}
    # Each architecture's block starts with `key: "sm_NN"` and runs to the next one.
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'key:\s*"(sm_\d+)"', text)]
    for i, (at, arch) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        block = text[at:end]
        entries = []
        for e in re.finditer(r"entries\s*\{\s*b:\s*(\d+)\s*m:\s*(\d+)\s*n:\s*(\d+)\s*k:\s*(\d+)"
                             r"((?:\s*flops\s*\{[^}]*\})+)", block):
            # Keys are lower case in some versions of the table, upper case in others.
            flops = {f.group(1).lower(): float(f.group(2)) for f in re.finditer(
                r'flops\s*\{\s*key:\s*"([^"]+)"\s*value:\s*([0-9.eE+]+)\s*\}', e.group(5))}
            entries.append((int(e.group(1)), int(e.group(2)), int(e.group(3)), int(e.group(4)),
                            flops))
        tables[arch] = entries
    return tables


def signature(b, m, n, k, dtype):
    """The cuBLAS call of XLA's row-major dot: out[b, m, n] = lhs[b, m, k] rhs[b, k, n] is, in
    column-major terms, out^T (n x m) = rhs^T (n x k) lhs^T (k x m) with no transposes."""
    a, bt, c, compute = DTYPES[dtype]
    return (f"gemm:m={n},n={m},k={k},batch={b},a={a},b={bt},c={c},compute={compute},"
            f"op_a=n,op_b=n,beta=0,epilogue=none")


def rows(entries, dtype, gpu, arch):
    """Kernel database rows: the time of 2 b m n k FLOPs at the table's rate, in µs."""
    out = []
    for b, m, n, k, flops in entries:
        rate = flops.get(dtype)
        if not rate:
            continue
        us = 2.0 * b * m * n * k / rate * 1e6
        out.append([gpu, signature(b, m, n, k, dtype), 1, repr(us), repr(us), repr(us), "0",
                    "imported", f"OpenXLA matmul table ({arch})", "", "openxla default table",
                    ""])
    return out


def write_csv(path, table_rows):
    with open(path, "w", newline="") as f:
        f.write(HEADER + "\n")
        csv.writer(f, lineterminator="\n").writerows(table_rows)


def calibrate(phantora, db, gpu):
    """(signature, measured µs, predicted µs) of every compared row."""
    p = subprocess.run([phantora, "db", "calibrate", db, "--gpu", gpu, "--source", "imported"],
                       capture_output=True, text=True, check=True)
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[1] == "gemm" and f[5].startswith("gemm:") and f[4] != "-":
            out.append((f[5], float(f[2]), float(f[3])))
    return out


def flops_of(sig):
    d = dict(kv.split("=") for kv in sig[len("gemm:"):].split(","))
    return 2 * int(d["batch"]) * int(d["m"]) * int(d["n"]) * int(d["k"])


def summarise(compared):
    def line(name, group):
        if not group:
            return
        ratios = [p / m for _, m, p in group]
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        mae = sum(abs(r - 1) for r in ratios) / len(ratios)
        within = sum(abs(r - 1) <= 0.2 for r in ratios)
        print(f"{name:<28} {len(group):>5} {geo:>8.3f} {min(ratios):>7.3f} {max(ratios):>7.3f} "
              f"{100 * mae:>7.1f} % {within:>4}/{len(group)}")

    print(f"{'FLOPs of the GEMM':<28} {'rows':>5} {'geomean':>8} {'min':>7} {'max':>7} "
          f"{'mean |r-1|':>9} {'within 20 %':>11}")
    bands = [(0, 1e9, "< 1 GFLOP"), (1e9, 1e10, "1-10 GFLOP"), (1e10, 1e11, "10-100 GFLOP"),
             (1e11, 1e13, ">= 100 GFLOP")]
    for lo, hi, name in bands:
        line(name, [c for c in compared if lo <= flops_of(c[0]) < hi])
    line("all", compared)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", required=True, help="matmul_interpolator_data.h from openxla/xla")
    ap.add_argument("--arch", default="sm_90", help="the table's architecture key (sm_90: H100)")
    ap.add_argument("--dtype", default="bf16xbf16->bf16", choices=sorted(DTYPES))
    ap.add_argument("--gpu", default="h100", help="the Phantora GPU preset to price them on")
    ap.add_argument("--phantora", help="the phantora binary; without it only --csv is written")
    ap.add_argument("--csv", help="also keep the rows as a CSV for `phantora db import`")
    ap.add_argument("--rows", action="store_true", help="print every compared row")
    a = ap.parse_args()

    try:
        with open(a.table) as f:
            tables = parse_table(f.read())
    except OSError as e:
        sys.exit(f"published_gemm_table: cannot read --table: {e}")
    if a.arch not in tables:
        sys.exit(f"published_gemm_table: {a.table} has no '{a.arch}' entries "
                 f"(it has: {', '.join(sorted(tables)) or 'none'})")
    table_rows = rows(tables[a.arch], a.dtype, a.gpu, a.arch)
    if not table_rows:
        sys.exit(f"published_gemm_table: no '{a.dtype}' figures under '{a.arch}'")
    if a.csv:
        write_csv(a.csv, table_rows)
    if not a.phantora:
        print(f"{len(table_rows)} rows" + (f" written to {a.csv}" if a.csv else ""))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "table.csv")
        db = os.path.join(tmp, "table.db")
        write_csv(path, table_rows)
        subprocess.run([a.phantora, "db", "import", db, path], check=True,
                       stdout=subprocess.DEVNULL)
        compared = calibrate(a.phantora, db, a.gpu)
    if a.rows:
        for sig, m, p in sorted(compared, key=lambda c: flops_of(c[0])):
            print(f"{m:>10.2f} {p:>10.2f} {p / m:>7.3f}  {sig}")
    print(f"{a.arch} {a.dtype} on '{a.gpu}': predicted / published time per GEMM")
    summarise(compared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
