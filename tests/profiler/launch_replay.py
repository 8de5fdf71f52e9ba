#!/usr/bin/env python3
"""Recorded launches replayed: `phantora db profile -- <job>` against the stand-in GPU.

The job (programs/custom_kernels.cu) launches kernels no model knows: axpy(int n, float a,
const float* x, float* y) twice with the same arguments, scale(Span{float* data, long n},
float a) with its pointer 4096 bytes into y, and, through the driver, the cubin's
triton_like(float* x, int n) with x + 16 floats, then its big_param(Big{float* p; char[25600]},
int n) with p = y + 32 floats and n = 10. x and y are 262144-byte cudaMalloc
allocations. The simulated run prices them by the default and records each distinct launch
once; profile then loads each kernel's saved image and launches it with the recorded
arguments, every device address moved to a scratch buffer of the allocation's size at the same
offset. The stand-in spells each launch with its argument bytes (an address inside one of its
allocations as [@size+offset]), so the expected spellings below are the job's arguments
written out by hand: 65536 = 0x10000, 2.0f = 0x40000000, 3.0f = 0x40400000, 1024 = 0x400,
1000 = 0x3e8, little-endian.

With 1 warm-up, 3 timed launches and no sequences, each row's mean is its table's durations
(7, 9, 11 -> 9 for axpy; 20 for scale; 5 for triton_like; 2 for big_param; CUDA events keep them as
float milliseconds, so to 1e-3 us), and a second run prices the job's
five launches at 2 x 9 + 20 + 5 + 2 = 45 us, all measured. Then the same with scale faulting as an
illegal address would (a sticky error): status 6, scale listed as lost, and a second profile that
skips it and measures the others.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys

AXPY = "_Z4axpyifPKfPf"
SCALE = "_Z5scale4Spanf"
TRITON = "triton_like"
AXPY_CALL = (f"cuLaunchKernel {AXPY} grid=256,1,1 block=256,1,1 smem=0 "
             "args=00000100;00000040;[@262144+0];[@262144+0]")
SCALE_CALL = (f"cuLaunchKernel {SCALE} grid=8,1,1 block=128,1,1 smem=0 "
              "args=[@262144+4096]0004000000000000;00004040")
TRITON_CALL = (f"cuLaunchKernel {TRITON} grid=4,1,1 block=128,1,1 smem=0 "
               "args=[@262144+64];e8030000")
BIG = "big_param"
BIG_CALL = (f"cuLaunchKernel {BIG} grid=1,1,1 block=32,1,1 smem=0 "
            "args=[@262144+128]" + "00" * 25600 + ";0a000000")

failures = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def run(args, env=None):
    p = subprocess.run(args, env=env, capture_output=True, text=True)
    print(f"$ {' '.join(args)}\n  -> status {p.returncode}")
    if p.returncode != 0:
        print(p.stdout[-4000:], p.stderr[-4000:])
    return p


def main():
    ap = argparse.ArgumentParser()
    for name in ("phantora", "standin", "program", "cubin", "work"):
        ap.add_argument("--" + name, required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    db = os.path.join(a.work, "kernels.db")
    times = os.path.join(a.work, "times.txt")
    params = os.path.join(a.work, "params.txt")
    log = os.path.join(a.work, "calls.log")
    for f in (db, db + "-wal", db + "-shm", log):
        if os.path.exists(f):
            os.remove(f)
    with open(times, "w") as f:
        f.write(f"{AXPY_CALL} | 7 9 11 7\n{SCALE_CALL} | 20\n{TRITON_CALL} | 5\n{BIG_CALL} | 2\n"
                "cudaMemsetAsync bytes=4 | 1\n")
    with open(params, "w") as f:  # what cuFuncGetParamInfo reports for each kernel
        f.write(f"{AXPY} | 4 4 8 8\n{SCALE} | 16 4\n{TRITON} | 8 4\n{BIG} | 25608 4\n")
    env = dict(os.environ, PHANTORA_STANDIN_GPU_TIMES=times, PHANTORA_STANDIN_GPU_LOG=log,
               PHANTORA_STANDIN_GPU_PARAMS=params)

    # Before any GPU: a run that records its launches, and `db missing` saying how each
    # signature it had to model would be measured.
    plain = os.path.join(a.work, "plain.db")
    for f in (plain, plain + "-wal", plain + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    launches = plain + ".profile-run/launches"
    p = run([a.phantora, "run", "--gpu", "h200", "--kernel-db", plain, "--cpu-time", "zero",
             "--out", os.path.join(a.work, "plain-run"), "--", a.program, a.cubin],
            dict(os.environ, PHANTORA_RECORD_LAUNCHES=launches))
    expect(p.returncode == 0, "a run with PHANTORA_RECORD_LAUNCHES exits 0")
    p = run([a.phantora, "db", "missing", plain])
    lines = p.stdout.splitlines()
    by_kernel = {l.split()[-1].split(",")[0]: l.split()[3:5] for l in lines[1:-1]}
    expect(by_kernel == {f"kernel:name={k}": ["recorded", "launch"]
                         for k in (AXPY, SCALE, TRITON, BIG)},
           f"db missing: the four kernels, each measurable by its recorded launch (got {by_kernel})")
    expect(lines and "recorded launch" in lines[-1] and "(100.0 %)" in lines[-1]
           and "library call" not in lines[-1],
           f"db missing: all modelled time measurable by recorded launches (got {lines[-1:]})")

    # --sustain-ms 0: the launches counted below are warm-up and timing only.
    p = run([a.phantora, "db", "profile", "--db", db, "--cuda-library", a.standin,
             "--sustain-ms", "0", "--warmup", "1", "--repetitions", "3", "--sequences", "0", "--",
             a.program, a.cubin], env)
    expect(p.returncode == 0, "db profile -- job exits 0")
    expect("4 distinct" in p.stderr, "four distinct launches recorded (axpy's second is "
           "the first's twin)")
    with open(log) as f:
        calls = [line.rstrip("\n") for line in f]
    for name, call in (("axpy", AXPY_CALL), ("scale", SCALE_CALL), ("triton_like", TRITON_CALL),
                       ("big_param", BIG_CALL)):
        expect(calls.count(call) == 4, f"{name} replayed 1 + 3 times with the job's arguments, "
               f"its pointers moved to scratch buffers (got {calls.count(call)})")
    expect(len(calls) == 16 + 1 + 3, f"nothing else was launched but the round trip's memsets "
           f"(got {len(calls)}: {sorted(set(calls))})")

    con = sqlite3.connect(db)
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT signature, gpu, count, mean_us, source, family FROM entries")}
    con.close()
    want = {
        f"kernel:name={AXPY},grid=256x1x1,block=256x1x1,smem=0": 9,
        f"kernel:name={SCALE},grid=8x1x1,block=128x1x1,smem=0": 20,
        f"kernel:name={TRITON},grid=4x1x1,block=128x1x1,smem=0": 5,
        f"kernel:name={BIG},grid=1x1x1,block=32x1x1,smem=0": 2,
    }
    expect(set(rows) == set(want), f"one row per recorded kernel (got {sorted(rows)})")
    for sig, mean in want.items():
        r = rows.get(sig)
        expect(r is not None and r[0] == "h200" and r[1] == 3 and abs(r[2] - mean) < 1e-3
               and r[3] == "measured" and r[4] == "kernel",
               f"{sig.split(',')[0]}: h200, 3 samples, mean {mean} us, measured (got {r})")

    out = os.path.join(a.work, "run")
    p = run([a.phantora, "run", "--gpu", "h200", "--kernel-db", db, "--cpu-time", "zero",
             "--out", out, "--", a.program, a.cubin])
    expect(p.returncode == 0, "the job priced from the rows exits 0")
    with open(os.path.join(out, "report.json")) as f:
        g = json.load(f)["gpu_time"]
    measured = g["by_source"].get("measured", {"time_s": 0})["time_s"]
    expect(abs(measured - 45e-6) < 1e-9,
           f"2 x 9 + 20 + 5 + 2 = 45 us of GPU time measured (got {measured * 1e6:.6f} us)")
    expect(set(g["by_source"]) == {"measured"},
           f"no share priced by a default (got {sorted(g['by_source'])})")

    # A relaunched kernel that faults (the stand-in plays a sticky error for scale): profile
    # keeps what it measured, names scale in the lost-device list and exits 6; a second profile
    # without the job skips scale and measures the rest from the kept launches.
    fault_db = os.path.join(a.work, "fault.db")
    lost = fault_db + ".profile-lost-device.txt"
    for f in (fault_db, fault_db + "-wal", fault_db + "-shm", lost):
        if os.path.exists(f):
            os.remove(f)
    fault_times = os.path.join(a.work, "fault-times.txt")
    with open(fault_times, "w") as f:
        f.write(f"{AXPY_CALL} | 9\n{SCALE_CALL} | -1\n{TRITON_CALL} | 5\n{BIG_CALL} | 2\n"
                "cudaMemsetAsync bytes=4 | 1\n")
    fault_env = dict(env, PHANTORA_STANDIN_GPU_TIMES=fault_times)
    profile = [a.phantora, "db", "profile", "--db", fault_db, "--cuda-library", a.standin,
               "--sustain-ms", "0", "--warmup", "1", "--repetitions", "3", "--sequences", "0"]
    p = run(profile + ["--", a.program, a.cubin], fault_env)
    scale_sig = f"kernel:name={SCALE},grid=8x1x1,block=128x1x1,smem=0"
    expect(p.returncode == 6 and f"the device was unusable after {scale_sig} failed" in p.stdout,
           f"a faulting relaunch ends the profile with status 6, naming it (got {p.returncode})")
    with open(lost) as f:
        expect(f.read() == scale_sig + "\n", "the faulting signature is listed in " + lost)
    p = run(profile, fault_env)
    expect(p.returncode == 0 and "skipping 1 signatures" in p.stderr,
           f"a second profile skips it and exits 0 (got {p.returncode})")
    con = sqlite3.connect(fault_db)
    measured = {r[0] for r in con.execute("SELECT signature FROM entries")}
    still_missing = {r[0] for r in con.execute("SELECT signature FROM missing")}
    con.close()
    expect(measured == set(want) - {scale_sig} and still_missing == {scale_sig},
           f"the others measured, scale still missing (got {sorted(measured)}, "
           f"missing {sorted(still_missing)})")

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
