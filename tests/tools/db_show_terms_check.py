#!/usr/bin/env python3
"""`phantora db show` prints what the GEMM model's price is made of, checked by hand
(docs/cost-model.md, "GEMM"; the same figures as GemmModel.SplitKTakesTheFastestSliceCountByHand).

  768 x 768 x 8192 bf16 on h100: 36 tiles of 128 x 128, at most floor(132 / 36) = 3 slices.
  Each slice 2 * 128^2 * (8192 / 3 + 207) FLOPs at an SM's share of the main loop's rate,
  989.4 T * 0.763 * (6144 + 207) / 6144 / 132: 16.283 us of compute. Its reduction kernel:
  3 us + (3 fp32 partials of 768^2 * 4 B read + C, 768^2 * 2 B, written) / (3350 GB/s * 0.90)
  = 5.739 us. One wave. Total 4 + 16.283 + 5.739 = 26.022 us.
  4096^3 bf16: 1024 tiles in 8 waves, K not split, no reduction.
  50257 x 65536 x 768 bf16, A transposed (modded-nanogpt's 2024-10-10 output layer, forward):
  C's columns are 50,257 x 2 B long, 2-byte aligned, so the main loop runs at 0.686 of its rate:
  393 x 512 = 201,216 tiles in 1525 waves, each 2 * 128^2 * (768 + 207) FLOPs at an SM's share
  of 989.4 T * 0.763 * 6351 / 6144 * 0.686.
`phantora db estimate` prints the same price and terms with no database (the 768 x 768 x 8192
GEMM: 26.022 us), prices a copy as a run does (5 us + 1 MB over PCIe at 50 GB/s: 25 us),
refuses a kernel known only by name (its price depends on its launch) and a signature that is
not canonical, each with a message and a non-zero exit; `db show` of a signature without a row
names it.
"""
import subprocess
import sys
import tempfile
import os

phantora = sys.argv[1]
failures = []
rows = {
    "gemm:m=768,n=768,k=8192,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=t,op_b=n,beta=0,"
    "epilogue=none": 26.0,
    "gemm:m=4096,n=4096,k=4096,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=n,op_b=n,beta=0,"
    "epilogue=none": 200.0,
    "gemm:m=50257,n=65536,k=768,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=t,op_b=n,beta=0,"
    "epilogue=none": 12000.0,
}
with tempfile.TemporaryDirectory() as tmp:
    csv_path = os.path.join(tmp, "rows.csv")
    with open(csv_path, "w") as f:
        f.write("gpu,signature,count,mean_us,min_us,max_us,stddev_us,source,device_name,"
                "driver_version,library_versions,recorded_at\n")
        for sig, us in rows.items():
            f.write(f'h100,"{sig}",1,{us},{us},{us},0,imported,check,,,\n')
    db = os.path.join(tmp, "check.db")
    subprocess.run([phantora, "db", "import", db, csv_path], check=True, capture_output=True)

    def show(sig):
        out = subprocess.run([phantora, "db", "show", db, sig, "--gpu", "h100"],
                             check=True, capture_output=True, text=True).stdout
        terms = [line for line in out.splitlines() if line.strip().startswith("model terms")]
        model = [line for line in out.splitlines() if line.strip().startswith("model ")]
        return (terms[0] if terms else ""), (model[0] if model else "")

    split, split_model = show(list(rows)[0])
    for want in ("compute 16.283", "1 wave(s) of 128 x 128 tiles", "K in 3 slice(s)",
                 "their reduction 5.739"):
        if want not in split:
            failures.append(f"768 x 768 x 8192: '{want}' not in '{split}'")
    if "26.022 us" not in split_model:
        failures.append(f"768 x 768 x 8192: total 26.022 us not in '{split_model}'")
    cube, _ = show(list(rows)[1])
    for want in ("8 wave(s) of 128 x 128 tiles", "K in 1 slice(s)"):
        if want not in cube:
            failures.append(f"4096^3: '{want}' not in '{cube}'")
    if "reduction" in cube:
        failures.append(f"4096^3: an unsplit GEMM has no reduction: '{cube}'")
    if "aligned" in cube:
        failures.append(f"4096^3: aligned rows print no alignment: '{cube}'")
    lm_head, _ = show(list(rows)[2])
    main_loop_per_sm = 989.4e12 * 0.763 * (6144 + 207) / 6144 * 0.686 / 132
    compute_us = 1525 * 2 * 128**2 * (768 + 207) / main_loop_per_sm * 1e6
    for want in (f"compute {compute_us:.3f}", "1525 wave(s) of 128 x 128 tiles",
                 "columns 2-byte aligned, main loop at 0.686 of the aligned rate"):
        if want not in lm_head:
            failures.append(f"50257 x 65536 x 768: '{want}' not in '{lm_head}'")
    out = subprocess.run([phantora, "db", "show", db, list(rows)[0].replace("k=8192", "k=8200"),
                          "--gpu", "h100"], capture_output=True, text=True)
    if out.returncode == 0 or "phantora db estimate" not in out.stderr:
        failures.append(f"db show of a missing row: exit {out.returncode}, '{out.stderr}'")

est = subprocess.run([phantora, "db", "estimate", list(rows)[0], "--gpu", "h100"],
                     capture_output=True, text=True)
for want in ("model            26.022 us", "compute 16.283", "K in 3 slice(s)",
             "their reduction 5.739"):
    if est.returncode != 0 or want not in est.stdout:
        failures.append(f"db estimate: '{want}' not in '{est.stdout}' (exit {est.returncode})")
# A copy is priced as a run prices it: 5 us of latency + 1,000,000 B over PCIe Gen5 at 50 GB/s.
copy = subprocess.run([phantora, "db", "estimate", "copy:kind=h2d,bytes=1000000,host=pinned",
                       "--gpu", "h100"], capture_output=True, text=True)
if copy.returncode != 0 or "model            25.000 us" not in copy.stdout:
    failures.append(f"db estimate of a copy: '{copy.stdout}{copy.stderr}'")
for sig, why in (("kernel:name=_Z4busyPfi,grid=1x1x1,block=32x1x1,smem=0", "depends on its launch"),
                 ("gemm:m=8192,n=8192,k=8192", "not a canonical signature")):
    bad = subprocess.run([phantora, "db", "estimate", sig, "--gpu", "h100"], capture_output=True,
                         text=True)
    if bad.returncode == 0 or why not in bad.stderr:
        failures.append(f"db estimate {sig}: exit {bad.returncode}, '{bad.stderr}'")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
