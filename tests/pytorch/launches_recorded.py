#!/usr/bin/env python3
"""What `phantora db profile` records of a stock PyTorch job, checked without a GPU.

Runs the example GPT (gpt-tiny, 2 steps, one simulated H200) under `phantora run` with
PHANTORA_RECORD_LAUNCHES beside its kernel database, as `db profile -- COMMAND` does, then:
- `db missing` puts every signature the run modelled under a way to measure it (a library call
  for GEMMs and copies, a recorded launch for the rest): none under "nothing";
- the recorded images are fat binaries (PyTorch's kernels come through nvcc's registration);
- flash attention's forward kernel and an elementwise kernel were recorded with device
  addresses found inside their by-value structs (Flash_fwd_params; TensorIterator's data
  array), each inside an allocation of the run.

Usage: launches_recorded.py PHANTORA PYTHON GPT_SCRIPT WORK_DIR
"""
import glob
import os
import shutil
import subprocess
import sys

phantora, python, gpt, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
db = os.path.join(work, "k.db")
launches = db + ".profile-run/launches"
failures = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


p = subprocess.run([phantora, "run", "--quiet", "--gpu", "h200", "--kernel-db", db, "--out",
                    os.path.join(work, "run"), "--", python, gpt, "--model", "gpt-tiny",
                    "--parallel", "none", "--steps", "2"],
                   env=dict(os.environ, PHANTORA_RECORD_LAUNCHES=launches),
                   capture_output=True, text=True, timeout=600)
expect(p.returncode == 0, f"the GPT ran under the simulator (status {p.returncode})")
if p.returncode != 0:
    print(p.stdout[-3000:], p.stderr[-3000:])
    sys.exit(1)

p = subprocess.run([phantora, "db", "missing", db], capture_output=True, text=True)
lines = p.stdout.splitlines()
summary = lines[-1] if lines else ""
print(summary)
ways = [l.split()[3] for l in lines[1:-1]]
expect(lines and lines[0].split()[3:5] == ["measured", "by"], "db missing has the column")
expect("nothing" not in ways and ways.count("recorded") > 10,
       f"every modelled signature measurable, most by a recorded launch "
       f"({ways.count('recorded')} recorded, {ways.count('library')} library calls, "
       f"{ways.count('nothing')} nothing)")
expect("recorded launch" in summary and "nothing" not in summary, "the summary says the same")

images = glob.glob(os.path.join(launches, "images", "*"))
magics = {open(f, "rb").read(4) for f in images}
expect(images and magics == {bytes.fromhex("50ed55ba")},
       f"{len(images)} images saved, all fat binaries (got magics {magics})")

records = []
for path in glob.glob(os.path.join(launches, "launches-*.txt")):
    with open(path) as f:
        record = None
        for line in f:
            parts = line.split()
            if parts[0] == "launch":
                record = {"kernel": parts[1], "params": [], "pointers": [], "allocations": []}
            elif parts[0] == "param":
                record["params"].append(parts[2])
            elif parts[0] == "pointer":
                record["pointers"].append([int(x) for x in parts[1:]])
            elif parts[0] == "allocation":
                record["allocations"].append(int(parts[1]))
            elif parts[0] == "end":
                records.append(record)


def struct_pointers(name_part):
    """Records of kernels whose name has `name_part`, with an address inside a parameter of
    more than 8 bytes (a struct passed by value), within its allocation."""
    out = []
    for r in records:
        if name_part not in r["kernel"]:
            continue
        inside = [q for q in r["pointers"]
                  if len(r["params"][q[0]]) // 2 > 8 and q[3] < r["allocations"][q[2]]]
        if inside:
            out.append(r)
    return out


expect(struct_pointers("flash_fwd"),
       "flash attention's forward kernel: addresses found in its params struct")
expect(struct_pointers("elementwise_kernel"),
       "an elementwise kernel: addresses found in TensorIterator's data array")
print(f"{len(records)} launches recorded; {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
