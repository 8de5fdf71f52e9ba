#!/usr/bin/env python3
"""NCCL under `phantora run`: one scenario per invocation, checked against closed forms.

The reference model is public: nccl-tests' bus bandwidth
(algbw = S / t, busbw = algbw x factor; NVIDIA/nccl-tests doc/PERFORMANCE.md) and NCCL's own
cost model (NVIDIA/nccl src/graph/tuning.cc): time = latency + bytes / bandwidth, with the link
figures NVLink 370.8 GB/s per H100 (18 x 20.6 GB/s, NCCL topo.h) and 48.5 GB/s per ConnectX-7
(SimAI calbusbw.h). Every expectation is written out below with its maths, independently of
netmodel's planner (the same closed forms as tests/netmodel/busbw_test.cpp, which checks the
library; here the whole path is checked: program -> shim -> daemon -> netmodel -> CUDA events).

Usage: check.py --phantora BIN --programs DIR --topologies DIR --work DIR <case>
Python 3.11+ standard library only.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

MIB = 1024 * 1024
GIB = 1024 * MIB
NVLINK = 370.8e9  # B/s per H100, per direction: 18 links x 20.6 GB/s (NCCL topo.h, SM90)
NIC = 48.5e9  # B/s per ConnectX-7 NDR port, effective (SimAI calbusbw.h)
NICS = 8 * NIC  # DGX H100: 8 compute NICs per host, one per GPU (rail-optimised)
BUSBW_TOL = 0.05  # the "within 5 %"

ARGS = None
FAILURES = []


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print(f"FAIL: {message}", file=sys.stderr)
    else:
        print(f"ok: {message}")
    return cond


def within(actual, expected, tol, what):
    ok = actual is not None and expected > 0 and abs(actual - expected) <= tol * expected
    dev = (actual - expected) / expected * 100 if actual is not None else math.nan
    return check(ok, f"{what}: got {actual}, expected {expected:.3f} (+-{tol * 100:.0f}%, "
                 f"off by {dev:+.2f}%)")


class Run:
    def __init__(self, proc, out_dir, wall):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.out_dir = out_dir
        self.wall = wall
        self.report = None
        path = os.path.join(out_dir, "report.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.report = json.load(f)

    def describe(self):
        return f"rc={self.rc}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"

    def lines(self, key):
        """Fields after `key` of every stdout line that starts with it."""
        return [l.split()[1:] for l in self.stdout.splitlines() if l.split()[:1] == [key]]

    def number(self, key):
        v = self.lines(key)
        check(len(v) == 1, f"one '{key}' line in the output (got {len(v)})")
        return float(v[0][0]) if v else None

    def spans(self):
        """trace.json's collective spans."""
        with open(os.path.join(self.out_dir, "trace.json"), encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        return [e for e in events if e.get("ph") == "X" and e.get("cat") == "collective"]


def run(name, command, flags=(), env=None, timeout=300, expect_ok=True):
    """phantora run [flags] -- command, with the job's environment `env` added."""
    work = os.path.join(ARGS.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out")
    full_env = dict(os.environ)
    for k in ("NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"):
        full_env.pop(k, None)
    full_env.update(env or {})
    cmd = [ARGS.phantora, "run", "--out", out, *flags, "--", *command]
    cmd = [c.replace("@WORK@", work) for c in cmd]
    print("$", " ".join(f"{k}={v}" for k, v in (env or {}).items()), " ".join(cmd), flush=True)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        proc = subprocess.CompletedProcess(cmd, -9, e.stdout or "", e.stderr or "")
        if isinstance(proc.stdout, bytes):
            proc.stdout, proc.stderr = proc.stdout.decode(), proc.stderr.decode()
        check(False, f"{name}: phantora run did not end within {timeout} s")
    r = Run(proc, out, time.monotonic() - start)
    print(r.stdout)
    if expect_ok and not check(r.rc == 0, f"{name}: phantora run exits 0"):
        print(r.describe(), file=sys.stderr)
    return r


def prog(name):
    return os.path.join(ARGS.programs, name)


# ---------------------------------------------------------------------------------------------
# Reference closed forms: time in us of one operation of nccl-tests' size S (bytes).
# Notation: n ranks; NCCL's latency = base + steps x per-step latency (tuning.cc, values in the
# reference: base Ring/Tree Simple 8.4, LL 6.6 (Ring) / 6.8 (Tree); per step NVLink Ring Simple
# 3.4, LL 0.6, Tree Simple 4.0, LL 0.6; network Ring Simple 14.0, Tree Simple 14, Tree LL 5.0).
# ---------------------------------------------------------------------------------------------

REFERENCE = {
    # 1 host x 8 H100 -------------------------------------------------------------------------
    # NVLS all-reduce (NCCL's pick on one NVSwitch host for large sizes): each GPU sends its
    # buffer to the switch and receives the reduced shares back, S (1 + 1/n) = 9/8 S per GPU
    # port, at NVLS efficiency 0.85 on Hopper, plus NVLS's 25 us.
    ("all_reduce", 1, "nvls"): lambda s: 25.0 + s * 9 / 8 / (0.85 * NVLINK) * 1e6,
    # Ring Simple all-reduce: 2(n-1) = 14 steps of 3.4 us after the 8.4 us base (the reference's
    # worked example: 56 us), each GPU link carries 2(n-1)/n S = 14/8 S.
    ("all_reduce", 1, "ring"): lambda s: 8.4 + 14 * 3.4 + s * 14 / 8 / NVLINK * 1e6,
    # Ring Simple all-gather / reduce-scatter: n-1 = 7 steps, (n-1)/n S per GPU link.
    ("all_gather", 1, "ring"): lambda s: 8.4 + 7 * 3.4 + s * 7 / 8 / NVLINK * 1e6,
    ("reduce_scatter", 1, "ring"): lambda s: 8.4 + 7 * 3.4 + s * 7 / 8 / NVLINK * 1e6,
    # All-to-all, P = S / n per peer: each GPU sends 7 P over its NVLink port; one Simple step.
    ("alltoall", 1, "p2p"): lambda s: 8.4 + 3.4 + 7 * (s / 8) / NVLINK * 1e6,
    # 4 hosts x 8 H100 (n = 32) ---------------------------------------------------------------
    # Ring Simple all-reduce: 2(n-1) = 62 steps, interSteps = 2(nNodes-1) = 6 over the network
    # (14 us), 56 over NVLink (3.4 us), x1.4 "plateau" for multi-node Ring Simple on SM80+; the
    # NICs bind: 8 per host carry 2(n-1)/n S = 62/32 S.
    ("all_reduce", 4, "ring"): lambda s: (8.4 + 56 * 3.4 + 6 * 14.0) * 1.4 + s * 62 / 32 / NICS * 1e6,
    # Tree Simple all-reduce (NCCL's double binary tree; at 1 GiB NCCL's tree correction factor
    # is 1): each NIC carries 2 S / 8 (up and down) at Tree efficiency 0.92; latency
    # 8.4 + 2((ppn-1) x 4.0 + log2(nNodes) x 14) = 8.4 + 2 (7 x 4.0 + 2 x 14).
    ("all_reduce", 4, "tree"): lambda s: 8.4 + 2 * (7 * 4.0 + 2 * 14.0) + 2 * s / (0.92 * NICS) * 1e6,
    # Ring Simple all-gather / reduce-scatter: n-1 = 31 steps, nNodes-1 = 3 over the network;
    # the NICs carry (n-1)/n S = 31/32 S.
    ("all_gather", 4, "ring"): lambda s: 8.4 + 28 * 3.4 + 3 * 14.0 + s * 31 / 32 / NICS * 1e6,
    ("reduce_scatter", 4, "ring"): lambda s: 8.4 + 28 * 3.4 + 3 * 14.0 + s * 31 / 32 / NICS * 1e6,
    # All-to-all, P = S / 32 per peer: with PXN a NIC carries what its host's 8 GPUs send to
    # the 3 other hosts' GPUs on its rail, 24 P at 48.5 GB/s; one network Simple step (14 us).
    ("alltoall", 4, "p2p"): lambda s: 8.4 + 14.0 + 24 * (s / 32) / NIC * 1e6,
}


def busbw_factor(op, n):
    """nccl-tests PERFORMANCE.md."""
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def reference_busbw(op, hosts, algo, s):
    n = 8 * hosts
    t_us = REFERENCE[(op, hosts, algo)](s)
    return s / (t_us * 1e-6) / 1e9 * busbw_factor(op, n)


def perf_rows(r):
    """nccl_perf's table: {(op, size): (time_us, algbw, busbw)}."""
    rows = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 7 and not line.startswith("#"):
            rows[(f[0], int(f[1]))] = (float(f[4]), float(f[5]), float(f[6]))
    return rows


def nccl_perf(name, hosts, ops, env, sizes="-b 64M -e 1G -f 4", extra_flags=(), gpu="h100"):
    uid = "@WORK@/uid"
    return run(name, [prog("nccl_perf"), *sizes.split(), "-n", "3", "-w", "1", "-o", ",".join(ops),
                      "-u", uid],
               flags=["--hosts", str(hosts), "--gpus-per-host", "8", "--gpu", gpu,
                      "--cpu-time", "zero", *extra_flags], env=env)


RING_SIMPLE = {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}
TREE_SIMPLE = {"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}
SIMPLE = {"NCCL_PROTO": "Simple"}


def check_busbw(r, op, hosts, algo, label, perf_op=None, min_size=64 * MIB):
    rows = perf_rows(r)
    found = [(size, v) for (o, size), v in rows.items() if o == (perf_op or op) and size >= min_size]
    check(len(found) > 0, f"{label}: nccl_perf printed {perf_op or op} rows >= {min_size} B")
    for size, (_, _, busbw) in sorted(found):
        within(busbw, reference_busbw(op, hosts, algo, size), BUSBW_TOL,
               f"{label} {perf_op or op} busbw at {size // MIB} MiB (GB/s)")


def case_busbw(hosts):
    tag = f"{hosts}x8"
    # NCCL's own choice on one host is NVLS for large all-reduces; all-to-all has no tuner.
    r = nccl_perf(f"busbw_{tag}_default", hosts, ["all_reduce", "alltoall", "alltoall_native"], {})
    if hosts == 1:
        check_busbw(r, "all_reduce", 1, "nvls", f"{tag} default")
    check_busbw(r, "alltoall", hosts, "p2p", f"{tag} grouped send/recv")
    check_busbw(r, "alltoall", hosts, "p2p", f"{tag} ncclAlltoAll", perf_op="alltoall_native")
    # NCCL_PROTO=Simple (the reference's ring all-gather/reduce-scatter assume it).
    r = nccl_perf(f"busbw_{tag}_simple", hosts, ["all_gather", "reduce_scatter"], SIMPLE)
    check_busbw(r, "all_gather", hosts, "ring", f"{tag} NCCL_PROTO=Simple")
    check_busbw(r, "reduce_scatter", hosts, "ring", f"{tag} NCCL_PROTO=Simple")
    # NCCL_ALGO=Ring NCCL_PROTO=Simple all-reduce.
    r = nccl_perf(f"busbw_{tag}_ring", hosts, ["all_reduce"], RING_SIMPLE)
    check_busbw(r, "all_reduce", hosts, "ring", f"{tag} NCCL_ALGO=Ring NCCL_PROTO=Simple")
    if hosts == 4:
        # NCCL_ALGO=Tree at 1 GiB, where NCCL's tree correction factor is 1.
        r = nccl_perf(f"busbw_{tag}_tree", hosts, ["all_reduce"], TREE_SIMPLE, sizes="-b 1G -e 1G")
        check_busbw(r, "all_reduce", hosts, "tree", f"{tag} NCCL_ALGO=Tree NCCL_PROTO=Simple",
                    min_size=GIB)
        for span in r.spans()[:1]:
            check(span["args"].get("algorithm") == "Tree" and span["args"].get("protocol") == "Simple",
                  f"trace.json: NCCL_ALGO=Tree/NCCL_PROTO=Simple honoured ({span['args']})")


# Small messages: NCCL's latency model (tuning.cc) with the reference's constants; the
# bandwidth term is < 1 % up to 1 KiB and a few % at 4 KiB.
#  1x8, NCCL's choice: Ring LL, 6.6 + 2(n-1) x 0.6 = 6.6 + 14 x 0.6 = 15.0 us (Tree LL is
#      6.8 + 2 x 7 x 0.6 = 15.2, NVLS 25).
#  1x8, NCCL_ALGO=Ring NCCL_PROTO=Simple: 8.4 + 14 x 3.4 = 56.0 us (the reference's worked
#      example).
#  4x8, NCCL's choice: Tree LL, 6.8 + 2((ppn-1) x 0.6 + log2(nNodes) x 5.0)
#      = 6.8 + 2 (7 x 0.6 + 2 x 5.0) = 35.2 us (Ring LL: 6.6 + 56 x max(0.6, 1.0 net overhead)
#      + 6 x 2.7 = 78.8; Tree LL128 65.5; Ring LL128 144.4).
LATENCY_US = {(1, "default"): 15.0, (1, "ring"): 8.4 + 14 * 3.4,
              (4, "default"): 6.8 + 2 * (7 * 0.6 + 2 * 5.0)}


def check_latency(rows, key, expected, label, op="all_reduce"):
    found = sorted((size, v) for (o, size), v in rows.items() if o == op and size <= 4096)
    check(len(found) >= 3, f"{label}: small {op} rows printed ({len(found)})")
    for size, (t_us, _, _) in found:
        within(t_us, expected, 0.05 if size <= 1024 else 0.10, f"{label} {op} time at {size} B (us)")


def case_payload_sizes():
    # Sizes around the 1 MiB limit up to which collectives carry real data (wire::
    # kMaxPayloadBytes): every size must run, alone and as grouped send/recv all-to-all.
    for hosts in (1, 4):
        r = nccl_perf(f"payload_sizes_{hosts}x8", hosts, ["all_reduce", "alltoall", "alltoall_native"],
                      {}, sizes="-b 256K -e 32M -f 2")
        rows = perf_rows(r)
        for op in ("all_reduce", "alltoall", "alltoall_native"):
            got = sorted(size // 1024 for (o, size) in rows if o == op)
            check(len(got) == 8, f"{hosts}x8 {op}: all 8 sizes 256 KiB..32 MiB ran (KiB: {got})")


def case_latency(hosts):
    tag = f"{hosts}x8"
    # nccl_perf skips sizes under n floats: 32 B is the smallest on 8 ranks, 128 B on 32.
    sizes = "-b 32 -e 4K -f 2"
    r = nccl_perf(f"latency_{tag}_default", hosts, ["all_reduce"], {}, sizes=sizes)
    check_latency(perf_rows(r), None, LATENCY_US[(hosts, "default")], f"{tag} default")
    if hosts == 1:
        r = nccl_perf(f"latency_{tag}_ring", hosts, ["all_reduce"], RING_SIMPLE, sizes=sizes)
        check_latency(perf_rows(r), None, LATENCY_US[(1, "ring")], f"{tag} Ring/Simple")


def two_comms(name, topology, phases, size="1G"):
    return run(name, [prog("two_comms"), "-u", "@WORK@", "-s", size, "-n", "2", "-p", phases],
               flags=["--topology", os.path.join(ARGS.topologies, topology), "--cpu-time", "zero"],
               env=RING_SIMPLE)


def case_contention_nic():
    # shared_nic.toml: 2 hosts x 2 GPUs, one 48.5 GB/s NIC per host. Ring Simple all-reduce of
    # S over 2 ranks (one per host): each edge carries 2(n-1)/n S = S, so each NIC direction
    # moves S: alone t = lat + S / 48.5 GB/s; with the other communicator's ring on the same
    # NICs, max-min gives each half: t = lat + 2 S / 48.5 GB/s. At 1 GiB lat (< 0.1 ms) is
    # under 0.5 % of t.
    r = two_comms("contention_nic", "shared_nic.toml", "alone,both")
    s = GIB
    alone, a, b = r.number("alone_us"), r.number("both_a_us"), r.number("both_b_us")
    within(alone, s / NIC * 1e6, 0.02, "communicator A alone (us): S / 48.5 GB/s")
    within(a, 2 * s / NIC * 1e6, 0.02, "communicator A sharing the NICs (us): 2 S / 48.5 GB/s")
    within(b, 2 * s / NIC * 1e6, 0.02, "communicator B sharing the NICs (us): 2 S / 48.5 GB/s")
    if alone and a:
        within(a / alone, 2.0, BUSBW_TOL, "slow-down of A when B shares its NICs")


def case_contention_spine():
    # spine_Rto1.toml: 2 hosts, each under its own leaf, one spine; an uplink carries the leaf's
    # NIC bandwidth / R. All traffic between the hosts crosses the spine: at 1:1 the NIC binds
    # (t = lat + S / 48.5 GB/s), at 4:1 the uplink does (t = lat + S / (48.5 / 4) GB/s).
    s = GIB
    one = two_comms("contention_spine_1to1", "spine_1to1.toml", "alone").number("alone_us")
    four = two_comms("contention_spine_4to1", "spine_4to1.toml", "alone").number("alone_us")
    within(one, s / NIC * 1e6, 0.02, "1:1 spine, all-reduce (us): S / 48.5 GB/s")
    within(four, 4 * s / NIC * 1e6, 0.02, "4:1 spine, all-reduce (us): 4 S / 48.5 GB/s")
    if one and four:
        within(four / one, 4.0, BUSBW_TOL, "slow-down by the oversubscription ratio")


# 2 DGX A100 (n = 16 GPUs), by hand from the dgx-a100 preset: 8 ConnectX-6 HDR NICs per host at
# 23.5 GB/s effective (SimAI calbusbw.h CX6_BW) = 188 GB/s per host, against 8 x 200 Gb/s =
# 200 GB/s line rate; NVLink 12 x 20.0 = 240 GB/s per GPU (NCCL topo.h SM80_NVLINK_BW).
A100_NICS = 8 * 23.5e9
A100_NVLINK = 240e9


def a100_ring_us(s):
    # Ring Simple: 2(n-1) = 30 steps, interSteps = 2(nNodes-1) = 2 over the network (14 us), 28
    # over NVLink (3.4 us), after the 8.4 us base, x1.4 multi-node plateau (SM80+); each host's
    # NICs carry 2(n-1)/n S = 30/16 S (NVLink, 240 GB/s per GPU, is not the bound). busbw =
    # algbw x 30/16 -> 188 GB/s for large S: 184.8 GB/s at 1 GiB, what the 8 HDR NICs allow.
    return (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4 + s * 30 / 16 / A100_NICS * 1e6


def a100_tree_us(s):
    # Tree Simple as netmodel plans it (docs/netmodel.md), at 1 GiB where NCCL's tree correction
    # is 1: latency 8.4 + 2((ppn-1) x 4.0 + log2(2) x 14) = 92.4 us. Between 2 nodes each NIC
    # carries only S/8 each way (up one tree, down the mirrored one), so the intra-host chain
    # binds: per channel a GPU inside the chain sends up and down, the head and tail one way;
    # over 16 channels each GPU is head twice, tail twice, inside 12 times: 28 x S/16 = 1.75 S
    # on its 240 GB/s NVLink port, at Tree efficiency 0.92. busbw -> 0.92 x 240 / 1.75 x 30/16
    # = 236.6 GB/s; 234.0 at 1 GiB. NCCL's own tuner rates Tree at half its bus bandwidth
    # (tuning.cc), 161 GB/s here, and keeps Ring at this size; netmodel's tuner, which takes the
    # bandwidth from these flows, picks Tree (docs/netmodel.md), so NCCL's default is not
    # checked here.
    return 8.4 + 2 * (7 * 4.0 + 1 * 14.0) + 1.75 * s / (0.92 * A100_NVLINK) * 1e6


def case_dgx_a100_2x8():
    # --gpu a100-80gb must get the DGX A100's network, not the PCIe + 100 GbE fallback (on
    # which a 1 GiB all-reduce's busbw would be about 12 GB/s, one 100 GbE NIC per host).
    def busbw(t_us, s):
        return s / (t_us * 1e-6) / 1e9 * 2 * 15 / 16

    for name, env, expected_us in [("ring", RING_SIMPLE, a100_ring_us),
                                   ("tree", TREE_SIMPLE, a100_tree_us)]:
        r = nccl_perf(f"dgx_a100_2x8_{name}", 2, ["all_reduce"], env, sizes="-b 1G -e 1G",
                      gpu="a100-80gb")
        got = perf_rows(r).get(("all_reduce", GIB))
        check(got is not None, f"A100 2x8 {name}: a 1 GiB all_reduce row")
        if got is None:
            continue
        within(got[2], busbw(expected_us(GIB), GIB), BUSBW_TOL,
               f"A100 2x8 {name} all-reduce busbw at 1 GiB (GB/s)")
        if name != "ring":
            continue
        check(got[2] <= 200.0, f"A100 2x8 ring: busbw {got[2]} under the 8 x 200 Gb/s line rate")
        topo = (r.report or {}).get("topology", {})
        figs = topo.get("figures", {})
        check(topo.get("name") == "dgx-a100", f"report.json topology is dgx-a100 ({topo.get('name')})")
        check(figs.get("intra.bandwidth_gbytes_per_s", {}).get("value") == 240.0 and
              figs.get("nic.bandwidth_gbytes_per_s", {}).get("value") == 23.5 and
              figs.get("nic.per_host", {}).get("value") == 8,
              "report.json: NVLink 240 GB/s, 8 NICs of 23.5 GB/s")
        check("SM80_NVLINK_BW" in figs.get("intra.bandwidth_gbytes_per_s", {}).get("source", ""),
              "report.json: the NVLink figure's source names NCCL's SM80_NVLINK_BW")
        check("topology" in r.stderr and "dgx-a100" in r.stderr and "CX6_BW" in r.stderr,
              "the summary names the topology and its figures' sources")


def case_represent_dp_perf():
    # One host of nccl_perf standing for 4 (--represent-dp 4): every communicator is
    # data-parallel, so each collective runs over 32 GPUs with the whole array of the live one.
    # Times must be those of the reference closed forms for 4 x 8 (NCCL_ALGO=Ring
    # NCCL_PROTO=Simple; all-gather/reduce-scatter with Simple) and equal those of the same
    # program launched on 4 hosts.
    ops = ["all_reduce", "all_gather", "reduce_scatter"]
    rep = nccl_perf("represent_dp_perf_rep", 1, ops, RING_SIMPLE, sizes="-b 256M -e 1G -f 4",
                    extra_flags=["--represent-dp", "4"])
    live = nccl_perf("represent_dp_perf_live", 4, ops, RING_SIMPLE, sizes="-b 256M -e 1G -f 4")
    rep_rows, live_rows = perf_rows(rep), perf_rows(live)
    check(len(rep_rows) == 6 and set(rep_rows) == set(live_rows),
          f"both runs print the same 6 rows ({sorted(rep_rows)})")
    for key in sorted(rep_rows):
        op, size = key
        t_rep = rep_rows[key][0]
        t_ref = REFERENCE[(op, 4, "ring")](size)
        within(t_rep, t_ref, BUSBW_TOL, f"{op} {size // MIB} MiB, 1 host representing 4 (us) "
               "vs the 4x8 closed form")
        if key in live_rows:
            check(abs(t_rep - live_rows[key][0]) <= 1e-3 * live_rows[key][0],
                  f"{op} {size // MIB} MiB: represented {t_rep} us = live 4x8 {live_rows[key][0]} us")
    cl = (rep.report or {}).get("cluster", {})
    check(cl.get("hosts") == 1 and cl.get("represented", {}).get("hosts") == 4 and
          cl["represented"].get("gpus") == 32 and cl["represented"].get("replicas") == 4,
          f"report.json: 1 live host, 4 represented ({cl})")
    check(len((rep.report or {}).get("gpus", [])) == 8, "report.json lists the 8 live GPUs")
    spans = rep.spans() if rep.rc == 0 else []
    check(bool(spans) and all(s["args"].get("represented_ranks") == 32 for s in spans),
          "trace.json: every collective stands for 32 ranks")
    links = open(os.path.join(rep.out_dir, "links.csv"), encoding="utf-8").read()
    check("h3/gpu" in links,
          "links.csv: a represented host's links carried traffic")


def case_represent_dp_groups():
    # 2-D parallel job (dp_groups.cu): tensor-parallel groups of 4 GPUs inside a host, data-
    # parallel groups across hosts. Launched with data-parallel size 1 on one host standing for
    # 2 (--dp-comms size:1: its single-rank communicators are the data-parallel ones), every
    # time equals the job launched on 2 hosts; the tensor-parallel all-reduce is copied into
    # the represented host and the data-parallel collectives span both.
    launch = os.path.join(ARGS.programs, "per_gpu_launch.sh")
    common = ["--gpus-per-host", "4", "--cpu-time", "zero", "--timeout", "60"]
    live = run("represent_dp_groups_live", [launch, prog("dp_groups"), "-u", "@WORK@", "-t", "4"],
               flags=["--hosts", "2", *common], timeout=120)
    rep = run("represent_dp_groups_rep", [launch, prog("dp_groups"), "-u", "@WORK@", "-t", "4"],
              flags=["--hosts", "1", "--represent-dp", "2", "--dp-comms", "size:1", *common],
              timeout=120)

    # The live report's communicators: the world ran nothing, so it is not listed; the two
    # tensor-parallel groups are the hosts' GPUs (colour rank / 4), the four data-parallel ones
    # pair GPU g with g + 4 (colour rank % 4), each with exactly the operations the program ran.
    # Bytes are the call's count times the type size: the whole array for the all-reduce, one
    # rank's share (half, over 2 ranks) for the reduce-scatter and all-gather.
    whole, share = float(256 << 20), float(128 << 20)
    comms = sorted((tuple(c["gpus"]), c["ranks"], c["operations"])
                   for c in live.report["communication"]["communicators"])
    expected = sorted([((0, 1, 2, 3), 4, {"ncclAllReduce": {"count": 1, "bytes": whole}}),
                       ((4, 5, 6, 7), 4, {"ncclAllReduce": {"count": 1, "bytes": whole}})] +
                      [((g, g + 4), 2, {"ncclAllReduce": {"count": 1, "bytes": whole},
                                        "ncclReduceScatter": {"count": 1, "bytes": share},
                                        "ncclAllGather": {"count": 1, "bytes": share}})
                       for g in range(4)])
    check(comms == expected, f"report lists each communicator's GPUs and operations ({comms})")

    def times(r):
        return {(f[0], int(f[1])): (int(f[2]), float(f[3])) for f in r.lines("time")}

    lt, rt = times(live), times(rep)
    check(len(lt) == 32 and len(rt) == 16, f"4 times from each rank ({len(lt)} live, {len(rt)} represented)")
    for (op, rank), (dp, t) in sorted(rt.items()):
        check(dp == 1, f"{op} rank {rank}: launched with data-parallel size 1")
        other = lt.get((op, rank))
        check(other is not None and other[0] == 2 and abs(other[1] - t) <= 1e-3 * other[1],
              f"{op} rank {rank}: represented {t} us = live 2-host {other} us")
    # Without naming the data-parallel communicators, the single-rank ones stay local: the
    # data-parallel collectives cost nothing on the network, which the times show.
    alone = run("represent_dp_groups_all", [launch, prog("dp_groups"), "-u", "@WORK@", "-t", "4"],
                flags=["--hosts", "1", "--represent-dp", "2", "--dp-comms", "size:2", *common],
                timeout=120)
    at = times(alone)
    check(at.get(("dp_allreduce", 0), (0, 1e9))[1] < 0.01 * rt.get(("dp_allreduce", 0), (0, 0))[1],
          f"size:2 leaves the single-rank all-reduce off the network ({at.get(('dp_allreduce', 0))})")


def case_represent_dp_errors():
    cases = [
        (["--hosts", "1", "--represent-dp", "0"], "--represent-dp"),
        (["--hosts", "1", "--represent-dp", "2", "--dp-comms", "sizes:4"], "--dp-comms 'sizes:4'"),
        (["--hosts", "1", "--represent-dp", "2", "--dp-comms", "size:0"], "--dp-comms 'size:0'"),
        (["--represent-dp", "4", "--topology", os.path.join(ARGS.topologies, "spine_1to1.toml")],
         "not a multiple"),
    ]
    for i, (flags, expected) in enumerate(cases):
        r = run(f"represent_dp_error_{i}", [prog("nccl_perf"), "-b", "1K", "-e", "1K"], flags=flags,
                timeout=30, expect_ok=False)
        check(r.rc == 2,
              f"{' '.join(flags)}: refused before anything runs (rc {r.rc})")
        check(expected in r.stderr, f"{' '.join(flags)}: the error names '{expected}' ({r.stderr.strip()})")
        check(r.report is None, f"{' '.join(flags)}: no report for a run that never started")


def case_mismatch(mode):
    # 2 hosts x 1 GPU; collectives #0 and #1 agree, the last rank deviates at #2.
    r = run(f"mismatch_{mode}", [prog("mismatch"), "-u", "@WORK@", "-m", mode],
            flags=["--hosts", "2", "--gpus-per-host", "1", "--timeout", "60"], timeout=90,
            expect_ok=False)
    text = r.stderr + (r.report or {}).get("message", "")
    check(r.rc not in (0, 124, -9), f"mismatch {mode}: the run fails (rc {r.rc}), not a timeout")
    check(r.wall < 10, f"mismatch {mode}: ends within seconds (took {r.wall:.1f} s)")
    check("collective #2" in text, f"mismatch {mode}: the message names collective #2")
    check("rank 0" in text and "rank 1" in text, f"mismatch {mode}: the message names ranks 0 and 1")
    expected = {"op": "ncclAllGather", "count": "count=2048", "dtype": "dtype=",
                "redop": "op=", "root": "root=1"}[mode]
    check(expected in text, f"mismatch {mode}: the message shows the disagreement ({expected})")
    check(r.report is not None and r.report.get("status") == "failed",
          f"mismatch {mode}: report.json status failed")
    print(text)


def case_mismatch_control():
    r = run("mismatch_none", [prog("mismatch"), "-u", "@WORK@", "-m", "none"],
            flags=["--hosts", "2", "--gpus-per-host", "1", "--timeout", "60"], timeout=90)
    check(len(r.lines("rank")) == 2, "control: both ranks finish")


def case_absent():
    # The last rank never calls collective #2; --timeout 5 ends the run (rc 124).
    r = run("absent", [prog("mismatch"), "-u", "@WORK@", "-m", "absent"],
            flags=["--hosts", "2", "--gpus-per-host", "1", "--timeout", "5"], timeout=60,
            expect_ok=False)
    check(r.rc == 124, f"absent rank: --timeout ends the run with 124 (rc {r.rc})")
    check(r.wall < 15, f"absent rank: stopped soon after the 5 s timeout (took {r.wall:.1f} s)")
    check(r.report is not None and r.report.get("status") == "failed", "absent: report.json failed")


def case_crash():
    # The last rank aborts instead of calling collective #2 while rank 0 waits in it. design.md
    # (Faults): a rank that crashes ends the run within seconds with a message, never a hang.
    # No --timeout here: the run must end by itself.
    r = run("rank_crash", [prog("mismatch"), "-u", "@WORK@", "-m", "crash"],
            flags=["--hosts", "2", "--gpus-per-host", "1"], timeout=60, expect_ok=False)
    check(r.rc not in (0, -9), f"crashed rank: the run fails (rc {r.rc})")
    check(r.wall < 15, f"crashed rank: the run ends within seconds (took {r.wall:.1f} s)")
    text = r.stderr + (r.report or {}).get("message", "")
    check("host 1" in text, "crashed rank: the message names host 1")


def case_crash_after_init(mode, ending):
    # 4 hosts x 1 GPU: rank 3 joins the communicator and then ends (aborts, or exits with
    # status 3) while ranks 0-2 wait for it in their first all-reduce. The run must end by
    # itself within 10 s, naming the rank, its host and how it ended (not after the collective
    # timeout of 300 s).
    r = run(f"crash_after_{mode}", [prog("mismatch"), "-u", "@WORK@", "-m", mode],
            flags=["--hosts", "4", "--gpus-per-host", "1"], timeout=60, expect_ok=False)
    text = r.stderr + (r.report or {}).get("message", "")
    print(text)
    check(r.rc not in (0, 124, -9), f"{mode}: the run fails (rc {r.rc})")
    check(r.wall < 10, f"{mode}: the run ends within 10 s (took {r.wall:.1f} s)")
    check("rank 3" in text and "host 3" in text, f"{mode}: the message names rank 3 on host 3")
    check(ending in text, f"{mode}: the message says how it ended ({ending!r})")
    check("collective #0" in text, f"{mode}: the message names the all-reduce waiting for it")
    check(r.report is not None and r.report.get("status") == "failed",
          f"{mode}: report.json status failed")


def case_host_timing():
    # nccl-tests' host-timed column: std::chrono around 20 all-reduces on 8 GPUs driven by one
    # process, waited for by polling each stream with cudaStreamQuery. Host and CUDA-event
    # timings must agree within 2 % from 1 MiB up wherever the GPU bounds the loop: what
    # separates them is the first launch's latency (4 us) and host call costs, spread over 20
    # iterations of >= 25 us each. The zero-mode run must finish (polling is waiting). In
    # measured mode a slow or loaded machine (the sanitizer build, -j2) can make the program's
    # own CPU time per iteration exceed the GPU's at small sizes: the loop is then host-bound,
    # both columns are right and differ by a launch and a poll per 20 iterations, so such a row
    # (its event time above the zero-mode GPU time by more than 1 %) is shown, not asserted;
    # from 16 MiB every row must be GPU-bound and agree.
    gpu_us = {}
    for mode in ("zero", "model", "measured"):
        r = run(f"host_timing_{mode}", [prog("host_timing"), "-b", str(MIB), "-e", str(256 * MIB)],
                flags=["--hosts", "1", "--gpus-per-host", "8", "--gpu", "h100", "--cpu-time", mode],
                timeout=240)
        rows = [tuple(float(x) for x in line.split()) for line in r.stdout.splitlines()
                if len(line.split()) == 3 and line.split()[0].isdigit()]
        check(len(rows) == 5, f"{mode}: 5 sizes from 1 MiB to 256 MiB ({len(rows)} rows)")
        for size, host_us, event_us in rows:
            label = f"{mode}: host-timed all-reduce of {int(size) // MIB} MiB vs CUDA events (us)"
            if mode == "zero":
                gpu_us[size] = event_us
            host_bound = mode != "zero" and event_us > 1.01 * gpu_us.get(size, event_us)
            if host_bound and size < 16 * MIB:
                print(f"host-bound, not asserted: {label}: {host_us} vs {event_us} "
                      f"(GPU alone {gpu_us[size]})")
                continue
            within(host_us, event_us, 0.02, label)


def run_overlap(name, extra):
    """The overlap program on 2 H100s: 20 kernels timed alone and beside a 1 GiB all-reduce.
    Returns (run, sms, alone_us, beside_us, all-reduce spans), or None without a result."""
    r = run(name, [prog("overlap"), "-r", "20", *extra],
            flags=["--hosts", "1", "--gpus-per-host", "2", "--gpu", "h100", "--cpu-time", "zero"],
            timeout=60)
    rows = [line.split() for line in r.stdout.splitlines() if len(line.split()) == 3]
    if not check(len(rows) == 1 and r.report is not None, "one result line and a report"):
        return None
    sms, alone, beside = int(rows[0][0]), float(rows[0][1]), float(rows[0][2])
    return r, sms, alone, beside, [s for s in r.spans() if s["name"] == "ncclAllReduce"]


def check_shared_report(r, alone, beside):
    """report.json's gpu_time.shared_with_nccl: the 20 kernels and the time they added."""
    shared = r.report["gpu_time"]["shared_with_nccl"]
    check(shared["kernels"] == 20, f"report: 20 kernels beside NCCL ({shared['kernels']})")
    within(shared["added_s"] * 1e6, beside - alone, 0.001, "report: time added beside NCCL (us)")


def case_overlap():
    # Kernels beside a collective (docs/cost-model.md, "Sharing the GPU with NCCL"): 20 kernels
    # of one CTA per SM on GPU 0's compute stream, timed with CUDA events alone and then while a
    # 1 GiB all-reduce over both GPUs runs. NCCL holds one SM per channel of the all-reduce's
    # plan (its trace span's `channels`), so the same kernels take SMs / (SMs - channels) times
    # as long (each rounded up to the picosecond); the report counts them and the time added.
    got = run_overlap("overlap", [])
    if got is None:
        return
    r, sms, alone, beside, reduces = got
    check(len(reduces) == 2, f"one all-reduce span per GPU ({len(reduces)})")
    channels = reduces[0]["args"].get("channels", 0) if reduces else 0
    check(0 < channels < sms, f"the all-reduce holds some of the {sms} SMs ({channels} channels)")
    check(min(s["dur"] for s in reduces) > beside, "the all-reduce outlasts the kernels")
    within(beside, alone * sms / (sms - channels), 0.001,
           f"20 kernels beside {channels} channels of {sms} SMs (us)")
    check_shared_report(r, alone, beside)


def case_overlap_hbm():
    # A memory-bound kernel beside a collective shares HBM bandwidth with its copies
    # (docs/cost-model.md, "Sharing the GPU with NCCL"). 20 thin bf16 cuBLAS GEMMs, 8192 x 8192
    # x 64 (A and B 1 MiB each, C 128 MiB: 136,314,880 bytes), timed alone and beside a 1 GiB
    # ring all-reduce over 2 GPUs. By hand: each GPU of a 2-rank ring sends and receives S and
    # reads its own operand for the half it reduces, 2.5 S through HBM over the all-reduce's
    # time alone (its span: nothing else on the network); the H100 preset's kernels reach
    # 0.90 x 3.35 TB/s. A kernel runs at the least of its SM share and the HBM left over what
    # it draws alone.
    got = run_overlap("overlap_hbm", ["-g"])
    if got is None:
        return
    r, sms, alone, beside, reduces = got
    if not check(len(reduces) == 2, f"one all-reduce span per GPU ({len(reduces)})"):
        return
    args = reduces[0]["args"]
    check(args.get("algorithm") == "Ring", f"a ring all-reduce ({args.get('algorithm')})")
    channels = args.get("channels", 0)
    check(min(s["dur"] for s in reduces) > beside, "the all-reduce outlasts the kernels")
    per_kernel_s = alone / 20 * 1e-6
    draws = 136_314_880 / per_kernel_s
    drawn = 2.5 * (1 << 30) / (reduces[0]["dur"] * 1e-6)
    plateau = 0.90 * 3.35e12
    sm_share = (sms - channels) / sms
    hbm_share = (plateau - drawn) / draws
    check(hbm_share < sm_share, f"HBM binds before the SMs ({hbm_share:.4f} < {sm_share:.4f})")
    within(beside, alone / min(sm_share, hbm_share), 0.001,
           f"20 memory-bound GEMMs beside a ring all-reduce drawing {drawn / 1e12:.3f} TB/s (us)")
    check_shared_report(r, alone, beside)


def span_clusters(spans):
    """Collective spans grouped by start time, in order."""
    by_ts = {}
    for s in spans:
        by_ts.setdefault(round(s["ts"], 3), []).append(s)
    return [by_ts[k] for k in sorted(by_ts)]


def case_held_bound():
    # programs/held_bound.cu, zero mode: "spinner" computes for 3 s of real time at clock 0
    # while main waits for a 1 MiB all-reduce over 2 GPUs, which cannot end before the network
    # has been simulated past its start. With PHANTORA_HELD_BOUND_REPORT_MS=1000 the shim says,
    # once, after the request has waited about 1 s, that the bound stands at 0 held by the
    # spinner (running, on the CPU) and that its reader sent no moved bound; the
    # synchronisation returns only once the spinner has ended. A "poller" thread queries a
    # completed event in a loop for 2.5 s meanwhile: the reader, receiving one answer after
    # another, still reports (it used to watch only when the connection fell silent).
    r = run("held_bound", [prog("held_bound")],
            flags=["--hosts", "1", "--gpus-per-host", "2", "--cpu-time", "zero"],
            env={"PHANTORA_HELD_BOUND_REPORT_MS": "1000"}, timeout=60)
    if r.rc != 0:
        return
    tid = int(r.number("spinner_tid"))
    reports = r.stderr.count("has waited")
    check(reports == 1, f"one held-bound report ({reports}):\n{r.stderr[-2000:]}")
    check("bound (the earliest time at which it can still submit work, which the simulation may "
          "not pass) stood at 0.000 ms" in r.stderr, "the report gives the bound, 0 ms")
    check(f"  thread {tid} (spinner, runnable) at 0.000 ms, running without a call the "
          "simulator sees" in r.stderr, f"the report names thread {tid}, the spinner, at 0 ms")
    check("  the reader has sent 0 moved bound(s), none finite" in r.stderr,
          "the report says the reader sent no moved bound (the spinner held it still)")
    check(r.number("sync_waited_real_s") >= 1.5,
          "the synchronisation waited for the spinner (about 3 s of real time)")
    check(r.number("polls") >= 100, f"the poller queried the event back to back "
          f"({r.number('polls'):.0f} answers)")
    check(r.number("done") == 1, "the program ends once the spinner has")


def case_sleep_beside_collective(mode="sync"):
    # programs/sleep_beside_collective.cu, zero mode: thread "ticker" (it made a CUDA call, so its
    # clock bounds the simulation) sleeps 1 ms 20 times while the main thread runs 5 rounds of a
    # 1 GiB all-reduce over 2 GPUs and a synchronisation, each round longer than a sleep. Each
    # sleep holds the process's bound at its wake-up, and the main thread, blocked in the
    # synchronisation, reaches it only as the network is simulated past it: the daemon says how
    # far it got (wire::Progress) and the sleep comes due there, before the round it falls in has
    # ended. So the rounds finished when a tick comes due are those that ended before its time.
    # Before, the two waited for each other until the stall detector took the sleeping ticker out
    # of the bound (20 ms of real time), and the network ran on past its wake-up: its ticks came
    # due rounds late (the tick at 3 ms saw 2 rounds finished, at 5 ms 3, at 9 ms all 5).
    #
    # mode "query": the main thread polls each GPU's stream with cudaStreamQuery instead, as
    # nccl-tests does. A query goes on from its thread's clock whatever the answer, so once the
    # daemon says the answer comes after that clock it is "not ready" at once, and the poll moves
    # the clock to where the daemon got: the same ticks and round ends. Before, the query waited
    # for the round's end and the two waited for each other as above: the ticker came due only
    # after the main thread's last round (every tick saw 5 rounds finished, 3 runs of 3).
    args = [prog("sleep_beside_collective")] + (["query"] if mode == "query" else [])
    r = run(f"sleep_beside_collective_{mode}", args,
            flags=["--hosts", "1", "--gpus-per-host", "2", "--cpu-time", "zero"], timeout=120)
    if r.rc != 0:
        return
    ends = [float(v[0]) for v in r.lines("round_end_ms")]
    ticks = [(float(v[0]), int(v[1])) for v in r.lines("tick")]
    check(len(ends) == 5 and len(ticks) == 20, f"5 rounds and 20 ticks ({len(ends)}, {len(ticks)})")
    lengths = [b - a for a, b in zip([0.0] + ends, ends)]
    check(min(lengths) > 2.0 and max(lengths) - min(lengths) < 1e-3,
          f"the rounds take the same time, each longer than two sleeps ({lengths})")
    # Zero mode: the ticker's clock moves by its sleeps alone, 1 ms each.
    check([round(t, 6) for t, _ in ticks] == [float(i) for i in range(1, 21)],
          f"the ticks come at 1, 2, ..., 20 ms ({[t for t, _ in ticks]})")
    seen = [n for _, n in ticks]
    expected = [sum(1 for e in ends if e < t) for t, _ in ticks]
    check(seen == expected, f"each tick comes due while the round it falls in runs: rounds "
          f"finished at each tick {seen}, expected {expected}")
    check(r.number("woke_early") == 0, "no sleep woke early (none gave up waiting for the rest)")
    # Each round's all-reduce starts where the main thread launches it: a query that went on
    # from a clock the network had already passed would start the next round late (none did
    # before these changes either: the ticker was what came due late).
    late = (r.report or {}).get("communication", {}).get("late_collective_starts")
    check(late == 0, f"no all-reduce started late (late_collective_starts {late})")
    check(r.number("done") == 1, "the program ends")

def case_comm_init_all():
    # One process, 4 GPUs, ncclCommInitAll; every operation timed alone (64 MiB).
    r = run("comm_init_all", [prog("comm_api"), "ops"],
            flags=["--hosts", "1", "--gpus-per-host", "4", "--cpu-time", "zero"], timeout=120)
    names = [("allreduce", "ncclAllReduce"), ("broadcast", "ncclBroadcast"),
             ("reduce", "ncclReduce"), ("allgather", "ncclAllGather"),
             ("sendrecv", "nccl group (2 ops)")]
    if r.rc != 0:
        return
    clusters = span_clusters(r.spans())
    check(len(clusters) == len(names), f"trace.json: {len(names)} collectives ({len(clusters)})")
    s = 64 * MIB
    total_spans = sum(len(c) for c in clusters)
    check(r.report["op_counts"].get("collective") == total_spans,
          f"report.json op_counts.collective = {total_spans} trace spans "
          f"({r.report['op_counts'].get('collective')})")
    for (key, span_name), cluster in zip(names, clusters):
        t = r.number(f"{key}_us")
        check(len(cluster) == 4 and all(c["name"] == span_name for c in cluster),
              f"{key}: 4 spans named {span_name} ({[c['name'] for c in cluster]})")
        dur = max(c["dur"] for c in cluster)
        check(t is not None and abs(t - dur) <= 0.01 + 1e-6 * dur,
              f"{key}: the program's event time {t} us = the trace span {dur} us")
        args = cluster[0]["args"]
        if key == "sendrecv":
            # One flow per GPU over NVLink: S / 370.8 GB/s plus a Simple step.
            within(t, 8.4 + 3.4 + s / NVLINK * 1e6, 0.05, "send/recv ring 64 MiB (us)")
            continue
        check(all(k in args for k in ("algorithm", "protocol", "busbw_GBps")),
              f"{key}: span args carry algorithm/protocol/busbw ({args})")
        n, op_s = 4, s if key != "allgather" else s // 4 * 4
        factor = {"allreduce": 2 * (n - 1) / n, "allgather": (n - 1) / n}.get(key, 1.0)
        if "busbw_GBps" in args and t:
            within(args["busbw_GBps"], op_s / (t * 1e-6) / 1e9 * factor, 0.01,
                   f"{key}: span busbw = S / t x factor")
        if key in ("broadcast", "reduce"):
            # A chain from/to the root: every edge carries S over NVLink; the root's position
            # must not matter: S / 370.8 GB/s plus at most ~60 us of latency.
            check(t is not None and s / NVLINK * 1e6 <= t <= s / NVLINK * 1e6 + 60,
                  f"{key} with root: {t} us within [S/NVLink, +60 us]")


def check_split(r, label):
    got = {int(f[0]): (int(f[1]), int(f[2])) for f in r.lines("split")}
    # colour = rank % 2 (rank 3: NOCOLOR), key = -rank: colour 0 = {2, 0} in that order.
    want = {0: (1, 2), 1: (0, 1), 2: (0, 2), 3: (-1, 0)}
    check(got == want, f"{label}: new ranks and sizes {got} = {want}")


def case_comm_split():
    r = run("comm_split", [os.path.join(ARGS.programs, "per_gpu_launch.sh"), prog("split_ranks"),
                           "-u", "@WORK@"],
            flags=["--hosts", "1", "--gpus-per-host", "4", "--cpu-time", "zero"], timeout=120)
    check_split(r, "split, one process per GPU")
    ar = {int(f[0]): (int(f[1]), float(f[2])) for f in r.lines("split_allreduce")}
    check(sorted(ar) == [0, 1], f"each colour all-reduced ({ar})")
    if r.rc == 0 and 0 in ar:
        spans = [s for s in r.spans() if s["args"].get("ranks") == 2]
        check(len(spans) == 2, f"two spans of the 2-rank communicator ({len(spans)})")
        if spans:
            check(abs(spans[0]["dur"] - ar[0][1]) <= 0.01,
                  f"split all-reduce: event time {ar[0][1]} = span {spans[0]['dur']}")


def case_comm_split_grouped():
    # One process splits all 4 ranks inside ncclGroupStart/End (as NCCL requires).
    r = run("comm_split_grouped", [prog("comm_api"), "split_group"],
            flags=["--hosts", "1", "--gpus-per-host", "4", "--cpu-time", "zero", "--timeout", "20"],
            timeout=60)
    check_split(r, "grouped split in one process")


def case_done_means():
    # rank_bench (one process per GPU, bf16, grouped send/recv all-to-all) on 4 x 8 H100.
    launch = os.path.join(ARGS.programs, "per_gpu_launch.sh")
    flags = ["--hosts", "4", "--gpus-per-host", "8", "--gpu", "h100", "--cpu-time", "zero"]
    r = run("done_means_large", [launch, prog("rank_bench"), "-u", "@WORK@", "-b", "64M", "-e", "1G",
                                 "-n", "2", "-w", "1"], flags=flags, env=RING_SIMPLE, timeout=600)
    names = {"allreduce": "all_reduce", "allgather": "all_gather",
             "reducescatter": "reduce_scatter", "alltoall": "alltoall"}
    results = r.lines("result")
    check(len(results) == 20, f"20 results (4 ops x 5 sizes), got {len(results)}")
    for op, size, t, algbw, busbw in results:
        key = names[op]
        within(float(busbw), reference_busbw(key, 4, "p2p" if key == "alltoall" else "ring",
                                             float(size)),
               BUSBW_TOL, f"rank_bench 4x8 {op} busbw at {int(size) // MIB} MiB (GB/s)")
    r = run("done_means_small", [launch, prog("rank_bench"), "-u", "@WORK@", "-b", "8", "-e", "4K",
                                 "-o", "allreduce", "-n", "3", "-w", "1"], flags=flags, timeout=600)
    results = r.lines("result")
    check(len(results) == 10, f"10 small all-reduce results, got {len(results)}")
    for op, size, t, _, _ in results:
        within(float(t), LATENCY_US[(4, "default")], 0.05 if int(size) <= 1024 else 0.10,
               f"rank_bench 4x8 all-reduce at {size} B (us): Tree LL latency")


CASES = {
    "busbw_1x8": lambda: case_busbw(1),
    "busbw_4x8": lambda: case_busbw(4),
    "latency_1x8": lambda: case_latency(1),
    "payload_sizes": case_payload_sizes,
    "latency_4x8": lambda: case_latency(4),
    "contention_nic": case_contention_nic,
    "contention_spine": case_contention_spine,
    **{f"mismatch_{m}": (lambda m=m: case_mismatch(m))
       for m in ("op", "count", "dtype", "redop", "root")},
    "mismatch_none": case_mismatch_control,
    "represent_dp_perf": case_represent_dp_perf,
    "dgx_a100_2x8": case_dgx_a100_2x8,
    "represent_dp_groups": case_represent_dp_groups,
    "represent_dp_errors": case_represent_dp_errors,
    "absent_timeout": case_absent,
    "rank_crash": case_crash,
    "crash_after_init": lambda: case_crash_after_init("init_crash", "killed by SIGABRT"),
    "exit_after_init": lambda: case_crash_after_init("init_exit", "exited with status 3"),
    "host_timing": case_host_timing,
    "overlap": case_overlap,
    "overlap_hbm": case_overlap_hbm,
    "held_bound": case_held_bound,
    "sleep_beside_collective": case_sleep_beside_collective,
    "query_beside_sleep": lambda: case_sleep_beside_collective("query"),
    "comm_init_all": case_comm_init_all,
    "comm_split": case_comm_split,
    "comm_split_grouped": case_comm_split_grouped,
    "done_means_4x8": case_done_means,
}


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--phantora", required=True)
    p.add_argument("--programs", required=True)
    p.add_argument("--topologies", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("case", choices=sorted(CASES))
    ARGS = p.parse_args()
    os.makedirs(ARGS.work, exist_ok=True)
    CASES[ARGS.case]()
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed in {ARGS.case}", file=sys.stderr)
        return 1
    print(f"{ARGS.case}: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
