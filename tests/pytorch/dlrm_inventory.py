#!/usr/bin/env python3
"""examples/dlrm.py under phantora on 2 hosts x 2 H100, both sharding schemes: the collectives of
a step against TorchRec's communication per iteration for each sharding (Luo et al., "Disaggregated
Multi-Tower", MLSys 2024, arXiv 2403.00877; docs/studies/dmt.md).

N = 4 GPUs, L = 2 per host, H = 2 hosts, B = 2048 samples per GPU, F = 26 features with 214 ids
per sample (MLPerf multi-hot), D = 128, c = 4; int64 ids and lengths, fp32 embeddings.

Table-wise, per step: one equal all-to-all of per-peer id counts (ncclAlltoAll), and four
unequal all-to-alls as grouped ncclSend/ncclRecv, each rank sending to all N peers (lengths,
values, pooled embeddings forward, their gradients backward): 16 sends. Bytes sent:
  lengths  N·B·F·8, values N·B·214·8, pooled N·B·F·D·4 forward and again backward.
DMT, per step: ids to the towers' hosts (unequal all-to-all over the cross groups: N·H sends,
N·B·214·8 bytes), one intra-host ncclAlltoAll, ncclReduceScatter and (backward) ncclAllGather per
host, and the compressed embeddings' all-to-all over the cross groups forward and backward
(2·N·H sends of H·B·(F_t·D/c)·4 bytes per rank; over a host's L ranks and both towers that sums
to L·H·B·(F·D/c)·4 = N·B·F·D/c·4 each way). The cross-host bytes of the embeddings fall by c.

Usage: dlrm_inventory.py PHANTORA TORCHRUN DLRM_PY OUT_DIR PORT
"""
import json
import os
import subprocess
import sys

phantora, torchrun, dlrm, out, port = sys.argv[1:6]
HOSTS, L, STEPS = 2, 2, 3
N, H, B, F, IDS, D, C = HOSTS * L, HOSTS, 2048, 26, 214, 128, 4
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(sharding, port_offset):
    run_dir = os.path.join(out, sharding)
    cmd = [phantora, "run", "--quiet", "--hosts", str(HOSTS), "--gpus-per-host", str(L), "--gpu",
           "h100", "--cpu-time", "model", "--timeout", "600", "--out", run_dir, "--",
           torchrun, "--nnodes", str(HOSTS), "--nproc-per-node", str(L), "--rdzv-backend", "c10d",
           "--rdzv-endpoint", f"localhost:{int(port) + port_offset}", dlrm, "--sharding", sharding,
           "--steps", str(STEPS), "--batch-size", str(B), "--compression", str(C)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    print(proc.stdout[-3000:])
    print(proc.stderr[-3000:])
    check(proc.returncode == 0, f"{sharding}: the run succeeds (exit {proc.returncode})")
    with open(os.path.join(run_dir, "report.json"), encoding="utf-8") as f:
        return json.load(f)


tw = run("table-wise", 0)
ops = tw["communication"]["operations"]
check(ops["ncclAlltoAll"]["count"] == STEPS, f"table-wise: one ncclAlltoAll per step ({ops['ncclAlltoAll']})")
check(ops["ncclSend"]["count"] == STEPS * 4 * N * N,
      f"table-wise: 4 unequal all-to-alls x {N} ranks x {N} peers per step ({ops['ncclSend']['count']})")
expected = STEPS * (N * B * F * 8 + N * B * IDS * 8 + 2 * N * B * F * D * 4)
check(ops["ncclSend"]["bytes"] == expected,
      f"table-wise: bytes sent {ops['ncclSend']['bytes']:.0f} = {expected}")
check(tw["steps"]["count"] == STEPS, "table-wise: the script's step times reach the report")

dmt = run("dmt", 1)
ops = dmt["communication"]["operations"]
for kind in ("ncclAlltoAll", "ncclReduceScatter", "ncclAllGather"):
    check(ops[kind]["count"] == STEPS * H, f"dmt: {kind} once per host per step ({ops[kind]['count']})")
check(ops["ncclSend"]["count"] == STEPS * 3 * N * H,
      f"dmt: 3 unequal all-to-alls over the cross groups x {N} ranks x {H} peers per step "
      f"({ops['ncclSend']['count']})")
expected = STEPS * (N * B * IDS * 8 + 2 * N * B * (F * D // C) * 4)
check(ops["ncclSend"]["bytes"] == expected,
      f"dmt: bytes sent {ops['ncclSend']['bytes']:.0f} = {expected}")
# The embeddings' all-to-all: N·B·F·D·4 per direction table-wise, N·B·F·D/c·4 with DMT.
check(C * (N * B * F * D // C) * 4 == N * B * F * D * 4, "dmt: embedding bytes fall by c")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("dlrm inventory: all checks passed")
