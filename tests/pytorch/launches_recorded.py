#!/usr/bin/env python3
"""What `phantora db profile` records of a stock PyTorch job, checked without a GPU.

Runs the example GPT (gpt-tiny, 2 steps, one simulated H200) under `phantora run` with
PHANTORA_RECORD_LAUNCHES beside its kernel database, as `db profile -- COMMAND` does, with
TORCH_CUDNN_SDPA_DEPRIORITIZED=1: torch 2.15 would run cuDNN's attention on an H200, whose calls
execute a cuDNN graph rather than launch a kernel and are not what this test checks (`db missing`
lists them under "nothing"; scripts/attention_timing.py times them on a GPU). Then:
- `db missing` puts every signature the run modelled under a way to measure it (a library call
  for GEMMs and copies, a recorded launch for the rest): none under "nothing";
- the recorded images are fat binaries (PyTorch's kernels come through nvcc's registration);
- flash attention's forward kernel and an elementwise kernel were recorded with device
  addresses found inside their by-value structs (Flash_fwd_params; TensorIterator's data
  array), each inside an allocation of the run.

- every recorded parameter holds at least as many bytes as the kernel's own sm_90 cubin says
  the parameter has, and each record has exactly as many parameters: the cubin is read from the
  saved fat binary (its entries are zstd-compressed ELF files; the parameter table is the
  `.nv.info.<kernel>` section's KPARAM_INFO attributes), independently of how the shim sized
  them (the demangled name's parameter types, and windows up to the next parameter).

Usage: launches_recorded.py PHANTORA PYTHON GPT_SCRIPT WORK_DIR
"""
import glob
import os
import shutil
import struct
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
                   env=dict(os.environ, PHANTORA_RECORD_LAUNCHES=launches,
                            TORCH_CUDNN_SDPA_DEPRIORITIZED="1"),
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
                record = {"kernel": parts[1], "image": parts[2], "params": [], "pointers": [],
                          "allocations": []}
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


def sm90_cubin(path):
    """The sm_90 ELF of a fat binary: u32 magic, u16 version, u16 header size, u64 size, then
    entries of (u16 kind: 2 is ELF, u16, u32 header size, u64 payload size, ..., u32 arch at
    0x1c, u64 stored size at 0x10), a compressed payload starting with zstd's magic."""
    d = open(path, "rb").read()
    _, _, head, size = struct.unpack_from("<IHHQ", d, 0)
    at = head
    while at < head + size:
        kind, _, entry_head, payload = struct.unpack_from("<HHIQ", d, at)
        stored = struct.unpack_from("<Q", d, at + 0x10)[0]
        arch = struct.unpack_from("<I", d, at + 0x1c)[0]
        if kind == 2 and arch == 90:
            body = d[at + entry_head:at + entry_head + stored]
            if body[:4] == b"\x7fELF":
                return body
            return subprocess.run(["zstd", "-d", "-c"], input=body, capture_output=True,
                                  check=True).stdout
        at += entry_head + payload
    return None


def cubin_param_sizes(elf, kernel):
    """Sizes by ordinal from KPARAM_INFO (0x17: size in the top 14 bits of the last u32; 0x45:
    the whole u32) in section .nv.info.<kernel>; None without the section."""
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    entsize, count, names = struct.unpack_from("<HHH", elf, 0x3a)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * entsize) for i in range(count)]
    strtab = sections[names][4]
    want = (".nv.info." + kernel).encode()
    for sec in sections:
        name = elf[strtab + sec[0]:elf.index(b"\0", strtab + sec[0])]
        if name != want:
            continue
        table, at, sizes = elf[sec[4]:sec[4] + sec[5]], 0, {}
        while at < len(table):
            fmt, attr = table[at], table[at + 1]
            if fmt == 4:
                length = struct.unpack_from("<H", table, at + 2)[0]
                if attr in (0x17, 0x45) and length == 12:
                    ordinal, packed = struct.unpack_from("<H2xI", table, at + 8)
                    sizes[ordinal] = packed >> 18 if attr == 0x17 else packed
                at += 4 + length
            else:
                at += 4 if fmt in (2, 3) else 2
        return [sizes[k] for k in sorted(sizes)]
    return None


if shutil.which("zstd") is None:
    expect(False, "zstd is needed to read the fat binaries' cubins (scripts/setup.sh installs it)")
else:
    cubins = {}
    short = []
    for r in records:
        if r["image"] not in cubins:
            cubins[r["image"]] = sm90_cubin(os.path.join(launches, "images", r["image"]))
        elf = cubins[r["image"]]
        sizes = cubin_param_sizes(elf, r["kernel"]) if elf else None
        got = [len(p) // 2 for p in r["params"]]
        if sizes is None or len(sizes) != len(got) or any(g < n for g, n in zip(got, sizes)):
            short.append(f"{r['kernel'][:90]}: cubin {sizes}, recorded {got}")
    expect(not short, f"every recorded parameter covers the cubin's size, {len(records)} records "
           f"({len(short)} do not: {short[:3]})")
print(f"{len(records)} launches recorded; {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
