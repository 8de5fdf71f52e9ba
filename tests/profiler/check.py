#!/usr/bin/env python3
"""`phantora db profile -- <job>` end to end against the stand-in GPU (standin_gpu.cpp).

The job (programs/gemm_copy.cu) makes one pinned 1 MiB host-to-device copy and one bf16
256 x 512 x 128 GEMM. Profiling runs it under the simulator, which records both signatures as
missing; the stand-in then plays them with the durations below, 2 warm-up + 4 timed launches
each, then 2 sequences of 3 launches back to back. Every expected figure is worked out from that
table by hand:

  GEMM  durations cycle 100 100 10 12 11 13: warm-up 100, 100; samples 10 12 11 13, mean 11.5;
        sequences 100+100+10 = 210 and 12+11+13 = 36: 70 and 12 per launch, mean 41
  copy  durations cycle 50 40 44 42 46:      warm-up 50, 40;   samples 44 42 46 50, mean 45.5;
        sequences 40+44+42 = 126 and 46+50+40 = 136: 42 and 45.333 per launch, mean 43.667

A run on an H200 with the database then prices both by their back-to-back times: 41 + 43.667 =
84.667 us of measured GPU time, with the launch latency taken from the launch round trip the
profile measured (6 one-microsecond memsets, 2 of them warm-up); a run on an H100 prices neither
from them (rows of one GPU model never price another) and keeps the default latency.
"""
import argparse
import json
import math
import os
import sqlite3
import subprocess
import sys

GEMM_SIG = ("gemm:m=256,n=512,k=128,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=t,op_b=n,"
            "beta=0,epilogue=none")
GEMM_CALL = ("cublasGemmStridedBatchedEx opa=1 opb=0 m=256 n=512 k=128 lda=128 ldb=128 ldc=256 "
             "stride_a=32768 stride_b=65536 stride_c=131072 batch=1 atype=14 btype=14 ctype=14 "
             "compute=68 beta=0")
COPY_SIG = "copy:kind=h2d,bytes=1048576,host=pinned"
COPY_CALL = "cudaMemcpyAsync kind=1 bytes=1048576 host=pinned"
TRIP_CALL = "cudaMemsetAsync bytes=4"  # the launch round trip's operation

failures = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def run(args, env=None, check_status=None):
    p = subprocess.run(args, env=env, capture_output=True, text=True)
    print(f"$ {' '.join(args)}\n  -> status {p.returncode}")
    if check_status is not None and p.returncode != check_status:
        print(p.stdout[-4000:], p.stderr[-4000:])
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phantora", required=True)
    ap.add_argument("--standin", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    db = os.path.join(a.work, "kernels.db")
    times = os.path.join(a.work, "times.txt")
    log = os.path.join(a.work, "calls.log")
    for f in (db, db + "-wal", db + "-shm", log):
        if os.path.exists(f):
            os.remove(f)
    with open(times, "w") as f:
        f.write(f"{GEMM_CALL} | 100 100 10 12 11 13\n{COPY_CALL} | 50 40 44 42 46\n"
                f"{TRIP_CALL} | 1\n")
    env = dict(os.environ, PHANTORA_STANDIN_GPU_TIMES=times, PHANTORA_STANDIN_GPU_LOG=log)

    # --sustain-ms 0: the table's durations cycle, and the launches counted below are those of
    # warm-up, timing and sequences (profile_test.cpp counts the sustained ones).
    p = run([a.phantora, "db", "profile", "--db", db, "--cuda-library", a.standin,
             "--sustain-ms", "0", "--warmup", "2", "--repetitions", "4", "--sequences", "2",
             "--sequence-length", "3", "--", a.program], env, 0)
    expect(p.returncode == 0, "db profile -- job exits 0")
    expect("recorded as h200" in p.stderr, "the stand-in's 'NVIDIA H200' is recorded as h200")

    with open(log) as f:
        calls = [line.rstrip("\n") for line in f]
    expect(calls.count(GEMM_CALL) == 12, f"GEMM replayed 2 + 4 + 2 x 3 times with cuBLAS "
           f"arguments worked out by hand (got {calls.count(GEMM_CALL)})")
    expect(calls.count(COPY_CALL) == 12,
           f"copy replayed 2 + 4 + 2 x 3 times (got {calls.count(COPY_CALL)})")
    expect(calls.count(TRIP_CALL) == 6,
           f"launch round trip: 2 + 4 memsets (got {calls.count(TRIP_CALL)})")
    # The GEMM's operands are filled with random values first: A (k x m = 128 x 256 bf16) and
    # B (128 x 512), one copy each from the default stream; beta = 0 leaves C unfilled.
    fills = [c for c in calls if c.startswith("scratch fill")]
    expect(sorted(fills) == ["scratch fill kind=1 bytes=131072", "scratch fill kind=1 bytes=65536"],
           f"the GEMM's A and B filled, 64 KiB and 128 KiB (got {fills})")
    expect(len(calls) - len(fills) == 30, f"nothing else was launched (got {len(calls)} calls)")

    con = sqlite3.connect(db)
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT signature, gpu, count, mean_us, min_us, max_us, stddev_us, source, device_name, "
        "library_versions, recorded_at FROM entries")}
    expect(set(rows) == {GEMM_SIG, COPY_SIG}, f"exactly the job's two signatures have rows "
           f"(got {sorted(rows)})")
    if GEMM_SIG in rows and COPY_SIG in rows:
        g, c = rows[GEMM_SIG], rows[COPY_SIG]
        expect(g[0] == "h200" and g[6] == "measured", "GEMM row: h200, measured")
        expect(g[1] == 4 and abs(g[2] - 11.5) < 1e-3 and abs(g[3] - 10) < 1e-3
               and abs(g[4] - 13) < 1e-3 and abs(g[5] - math.sqrt(5 / 3)) < 1e-3,
               f"GEMM row: n 4, mean 11.5, min 10, max 13, sd sqrt(5/3) (got {g[1:6]})")
        expect(c[1] == 4 and abs(c[2] - 45.5) < 1e-3 and abs(c[3] - 42) < 1e-3
               and abs(c[4] - 50) < 1e-3 and abs(c[5] - math.sqrt(35 / 3)) < 1e-3,
               f"copy row: n 4, mean 45.5, min 42, max 50, sd sqrt(35/3) (got {c[1:6]})")
        expect(g[7] == "NVIDIA H200" and g[8] ==
               "cudart=13.0;cublas=13.1.7;sm_clock_mhz=1980;mem_clock_mhz=3201" and g[9],
               f"provenance: device, versions, clocks, time (got {g[7:]})")
    seqs = {r[0]: r[1:] for r in con.execute(
        "SELECT signature, gpu, length, count, mean_us, min_us, max_us FROM sequences")}
    expect(GEMM_SIG in seqs and seqs[GEMM_SIG][:3] == ("h200", 3, 2)
           and abs(seqs[GEMM_SIG][3] - 41) < 1e-3 and abs(seqs[GEMM_SIG][4] - 12) < 1e-3
           and abs(seqs[GEMM_SIG][5] - 70) < 1e-3,
           f"GEMM back to back: length 3, 2 sequences, mean 41, min 12, max 70 "
           f"(got {seqs.get(GEMM_SIG)})")
    expect(COPY_SIG in seqs and abs(seqs[COPY_SIG][3] - 131 / 3) < 1e-3,
           f"copy back to back: mean (42 + 45.333) / 2 = 43.667 (got {seqs.get(COPY_SIG)})")
    trip = list(con.execute("SELECT gpu, name, count, mean_us FROM device_facts"))
    expect(len(trip) == 1 and trip[0][:3] == ("h200", "launch_round_trip", 4) and trip[0][3] >= 0,
           f"the idle GPU's launch round trip stored for h200 from 4 samples (got {trip})")
    missing = list(con.execute("SELECT signature FROM missing WHERE gpu = 'h200'"))
    expect(missing == [], f"measured signatures are no longer missing (left: {missing})")
    con.close()

    # Pricing from the rows.
    def priced(gpu):
        out = os.path.join(a.work, "run-" + gpu)
        p = run([a.phantora, "run", "--gpu", gpu, "--kernel-db", db, "--cpu-time", "zero",
                 "--out", out, "--", a.program], None, 0)
        expect(p.returncode == 0, f"run on {gpu} exits 0")
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        g = report["gpu_time"]
        # report.json leaves out sources with no time
        return (g["by_source"].get("measured", {"time_s": 0})["time_s"], g["by_family"],
                report["launch_latency"])

    t, fam, latency = priced("h200")
    expect(abs(t - (41 + 131 / 3) * 1e-6) < 1e-9,
           f"H200 run: 41 + 43.667 = 84.667 us measured (got {t * 1e6:.4f} us)")
    expect(set(fam) == {"gemm", "copy"} and set(fam["gemm"]) == {"measured"}
           and fam["gemm"]["measured"]["count"] == 1
           and abs(fam["gemm"]["measured"]["time_s"] - 41e-6) < 1e-9
           and set(fam["copy"]) == {"measured"} and fam["copy"]["measured"]["count"] == 1
           and abs(fam["copy"]["measured"]["time_s"] - 131 / 3 * 1e-6) < 1e-9,
           f"H200 by_family: one GEMM measured 41 us, one copy 43.667 us (got {fam})")
    expect(latency["from"] == "kernel database (measured launch round trip)"
           and trip and abs(latency["us"] - trip[0][3]) < 1e-3,
           f"H200 run: launch latency from the database's round trip (got {latency})")
    t, fam, latency = priced("h100")
    expect(latency == {"us": 4.0, "from": "default"},
           f"H100 run: no round trip for this GPU, the default latency (got {latency})")
    expect(t == 0, f"H100 run: nothing priced from the H200's rows (got {t * 1e6:.4f} us)")
    expect(set(fam.get("gemm", {})) == {"modelled"} and set(fam.get("copy", {})) == {"modelled"},
           f"H100 by_family: the GEMM and the copy modelled (got {fam})")

    p = run([a.phantora, "db", "calibrate", db], None, 0)
    lines = p.stdout.splitlines()
    expect(p.returncode == 0, "db calibrate exits 0")
    expect(any(l.split()[:3] == ["h200", "gemm", "11.500"] and GEMM_SIG in l for l in lines),
           "calibrate lists the GEMM row with its measured 11.5 us")
    expect(any(l.split()[:3] == ["h200", "gemm", "1"] for l in lines)
           and any(l.split()[:3] == ["h200", "copy", "1"] for l in lines),
           "calibrate summarises one row each for h200 gemm and copy")

    p = run([a.phantora, "db", "profile", db, "--cuda-library", a.standin, "--gpu", "h100"], env)
    expect(p.returncode == 2 and "disagrees" in p.stderr,
           "--gpu h100 on a device that says it is an H200 is refused (status 2)")
    p = run([a.phantora, "db", "profile", db, "--cuda-library", "/nonexistent/libcuda.so"], env)
    expect(p.returncode == 3 and "/nonexistent/libcuda.so" in p.stderr,
           "no loadable CUDA library: status 3, naming what was tried")

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
