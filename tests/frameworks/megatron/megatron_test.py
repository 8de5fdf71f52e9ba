"""Megatron-Core (examples/megatron/train.py) under `phantora run`: each parallelism runs and
shows up as the collectives it implies, counted per communicator (report.json's
communication.communicators) and checked against counts derived by hand from Megatron-Core's
code; the printed iteration times are the report's.

Usage: megatron_test.py PHANTORA PYTHON OUT_ROOT [case...]   (default: every case)
"""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TRAIN = os.path.join(ROOT, "examples", "megatron", "train.py")
STEPS = 2
LAYERS = 4  # the tiny models' layer count
ITER_RE = re.compile(r"elapsed time per iteration \(ms\): ([0-9.]+)")


class Comm:
    """One entry of report.json's communication.communicators[]."""

    def __init__(self, entry):
        self.id, self.ranks, self.gpus = entry["id"], entry["ranks"], set(entry["gpus"])
        self.operations = entry["operations"]

    def ops(self, kind):
        return self.operations.get(kind, {}).get("count", 0)

    def __repr__(self):
        return f"communicator {self.id} gpus {sorted(self.gpus)}"


def communicators(r):
    return [Comm(c) for c in r.communicators()]


def gemm_count(r, prefix):
    """GEMM spans in trace.json whose name (`gemm:m=..,n=..,k=..,...`) starts with prefix."""
    trace = json.load(open(os.path.join(r.out_dir, "trace.json"), encoding="utf-8"))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return sum(1 for e in events if e.get("ph") == "X" and e.get("name", "").startswith(prefix))


def groups(comms, gpu_sets):
    """For each GPU set, one Comm adding up every communicator over exactly those GPUs:
    torch and Megatron create several over the same members (a tensor-parallel group, the
    model-parallel group when PP and CP are 1, torch's per-pair point-to-point ones), and what
    matters is the traffic among those GPUs."""
    found = []
    for gpus in gpu_sets:
        match = [c for c in comms if c.gpus == set(gpus)]
        if not check(len(match) >= 1, f"a communicator of GPUs {sorted(gpus)} exists"):
            continue
        merged = collections.defaultdict(lambda: {"count": 0, "bytes": 0.0})
        for c in match:
            for kind, t in c.operations.items():
                merged[kind]["count"] += t["count"]
                merged[kind]["bytes"] += t["bytes"]
        found.append(Comm({"id": "+".join(str(c.id) for c in match), "ranks": len(gpus),
                           "gpus": sorted(gpus), "operations": dict(merged)}))
    return found


def job(phantora, python, out_root, name, hosts, gpus, args, port):
    cmd = [python, "-m", "torch.distributed.run", "--nnodes", str(hosts), "--nproc-per-node",
           str(gpus), "--rdzv-backend", "c10d", "--rdzv-endpoint", f"localhost:{port}", TRAIN,
           "--steps", str(STEPS), *args]
    r = harness.run(phantora, name, out_root, hosts, gpus, cmd, timeout=400)
    printed = [float(x) for x in ITER_RE.findall(r.log)]
    check(len(printed) == STEPS, f"{name}: {STEPS} iteration lines printed (got {len(printed)})")
    harness.check_steps(r, printed, tolerance=5e-3)  # printed with 2 decimals
    harness.check_steps_fit(r, printed)
    return r, communicators(r)


def case_tp_sp_distopt(phantora, python, out_root):
    """2 hosts x 2 GPUs: TP 2 with sequence parallelism inside a host, DP 2 across hosts with
    the distributed optimizer, overlapped grad reduce and param gather."""
    mb = 2  # global batch 1 x dp 2 x 2 -> 2 microbatches per rank
    r, comms = job(phantora, python, out_root, "tp_sp_distopt", 2, 2,
                   ["--tp", "2", "--sp", "--dist-opt", "--overlap-grad-reduce",
                    "--overlap-param-gather"], 29930)
    # Order tp-cp-ep-dp-pp: TP groups are consecutive ranks, DP groups stride 2.
    for c in groups(comms, [{0, 1}, {2, 3}]):
        # Per layer and microbatch, sequence parallelism does: forward all-gather before QKV
        # and FC1, reduce-scatter after the output projection and FC2 (2 AG + 2 RS); backward,
        # each column-parallel linear all-gathers its input again for the weight gradient and
        # reduce-scatters its input gradient (2 AG + 2 RS), each row-parallel one all-gathers
        # its output gradient (2 AG): 6 AG + 4 RS per layer per microbatch.
        # Outside the layers, per microbatch: the vocab-parallel embedding sums its shards
        # with a reduce-scatter into the sequence-parallel region (AG backward), the output
        # layer is column parallel (AG forward, AG + RS backward): 3 AG + 2 RS.
        ag, rs = c.ops("ncclAllGather"), c.ops("ncclReduceScatter")
        want_ag, want_rs = (6 * LAYERS + 3) * mb * STEPS, (4 * LAYERS + 2) * mb * STEPS
        check(ag == want_ag, f"TP {c}: {ag} all-gathers, {want_ag} expected")
        check(rs == want_rs, f"TP {c}: {rs} reduce-scatters, {want_rs} expected")
        check(c.ops("ncclAllReduce") >= mb * STEPS,
              f"TP {c}: vocab-parallel cross-entropy all-reduces ({c.ops('ncclAllReduce')})")
    for c in groups(comms, [{0, 2}, {1, 3}]):
        # The distributed optimizer: the gradient buffer (one bucket: 3.6 M parameters per
        # TP rank, under the 40 M-element default bucket) is reduce-scattered once per
        # iteration, and the parameter shards all-gathered once per iteration: overlapped, so
        # dispatched from the first forward's pre-hook (param_and_grad_buffer.py
        # finish_param_sync), in the first iteration too.
        rs, ag = c.ops("ncclReduceScatter"), c.ops("ncclAllGather")
        check(rs == STEPS, f"DP {c}: {rs} gradient reduce-scatters, {STEPS} expected")
        check(ag == STEPS, f"DP {c}: {ag} parameter all-gathers, {STEPS} expected")
        check(c.ops("ncclAllReduce") == 0 or rs > 0, f"DP {c}: no plain DDP all-reduce of grads")


def pp_sends(comms, pp_groups, transfers):
    """Point-to-point operations between each pair of stages, `transfers` each (a send and
    its receive are one operation)."""
    for c in groups(comms, pp_groups):
        n = c.ops("ncclSend") + c.ops("ncclRecv")
        check(n == transfers, f"PP {c}: {n} send/recv operations, {transfers} expected")


def case_pp_interleaved(phantora, python, out_root):
    """2 hosts x 2 GPUs: PP 2 with 2 virtual stages per rank (interleaved 1F1B), DP 2, shapes
    exchanged between stages before every transfer (--variable-seq-lengths)."""
    r, comms = job(phantora, python, out_root, "pp_interleaved", 2, 2,
                   ["--pp", "2", "--vpp", "2", "--variable-seq-lengths"], 29932)
    mb = 4  # global batch 1 x dp 2 x pp 2 x 2 = 8 -> 4 microbatches per DP rank
    # PP groups are the outermost dimension: ranks {0, 2} and {1, 3}. A microbatch crosses 3
    # chunk boundaries forward (s0c0 -> s1c0 -> s0c1 -> s1c1) and 3 backward, each a tensor
    # preceded by its shape: 2 x 6 transfers per microbatch.
    pp_sends(comms, [{0, 2}, {1, 3}], 2 * 6 * mb * STEPS)


def case_pp_1f1b_cp(phantora, python, out_root):
    """2 hosts x 2 GPUs: PP 2 (1F1B, no interleaving) across hosts, CP 2 inside a host,
    fp16 with Megatron's dynamic loss scaler."""
    r, comms = job(phantora, python, out_root, "pp_1f1b_cp", 2, 2,
                   ["--pp", "2", "--cp", "2", "--fp16"], 29934)
    mb = 4  # global batch 1 x dp 1 x pp 2 x 2 = 4 microbatches
    # One stage boundary: one activation forward, one gradient backward per microbatch.
    pp_sends(comms, [{0, 2}, {1, 3}], 2 * mb * STEPS)
    layers_per_stage = LAYERS // 2
    for c in groups(comms, [{0, 1}, {2, 3}]):
        # SDPAttention all-gathers K and V once per layer and microbatch (forward) and
        # reduce-scatters their gradient (backward).
        rs = c.ops("ncclReduceScatter")
        check(rs == layers_per_stage * mb * STEPS,
              f"CP {c}: {rs} K/V gradient reduce-scatters, {layers_per_stage * mb * STEPS} "
              "expected")
        ag = c.ops("ncclAllGather")
        check(ag == layers_per_stage * mb * STEPS,
              f"CP {c}: {ag} K/V all-gathers, {layers_per_stage * mb * STEPS} expected")
    scales = re.findall(r"loss scale ([0-9.]+) \| grad norm [0-9.]+ \| skipped (\d)", r.log)
    check(scales and all(float(s) == 65536.0 and k == "0" for s, k in scales),
          f"fp16: loss scale stays at its initial 2^16, no step skipped ({scales})")


def case_moe_ep(phantora, python, out_root):
    """1 host x 4 GPUs: 8 experts top-2, EP 4 (2 experts per GPU), all-to-all dispatcher with
    capacity factor 1 and padding (balanced split), DP 4 with the distributed optimizer."""
    r, comms = job(phantora, python, out_root, "moe_ep", 1, 4,
                   ["--model", "tiny-moe", "--ep", "4", "--dist-opt"], 29936)
    mb = 2  # global batch 1 x dp 4 x 2 = 8 -> 2 microbatches per rank
    ep = [c for c in comms if c.gpus == {0, 1, 2, 3} and c.ops("ncclAlltoAll")]
    if check(len(ep) == 1, "one 4-GPU communicator carries all-to-alls (the EP group)"):
        # Per MoE layer and microbatch: dispatch tokens and their routing probabilities, and
        # combine (3 all-to-alls forward), each one's gradient backward (3 more).
        n = ep[0].ops("ncclAlltoAll")
        check(n == 6 * LAYERS * mb * STEPS,
              f"EP {ep[0]}: {n} all-to-alls, {6 * LAYERS * mb * STEPS} expected")
    # Distributed optimizer, one bucket per parameter class (5 M dense parameters, 3.1 M expert
    # ones per GPU, both under the 40 M-element default): the dense gradients are
    # reduce-scattered over the 4-GPU DP group once per iteration, the expert gradients over
    # the expert-data-parallel group, DP / EP = 1 GPU, once per iteration.
    for c in groups(comms, [{0, 1, 2, 3}]):
        rs = c.ops("ncclReduceScatter")
        check(rs == STEPS, f"DP {c}: {rs} dense-gradient reduce-scatters, {STEPS} expected")
    for c in groups(comms, [{0}, {1}, {2}, {3}]):
        rs = c.ops("ncclReduceScatter")
        check(rs == STEPS, f"expert DP {c}: {rs} expert-gradient reduce-scatters, {STEPS} "
              "expected")
    # The balanced split reaches the experts: capacity = ceil(512 tokens x top-2 / 8 experts x
    # 1.0) = 128 tokens from each of the 4 EP ranks, so each local expert's FC1 (gated: 2 x ffn
    # 512 = 1024 outputs, hidden 256 inputs) multiplies 4 x 128 = 512 tokens: cuBLAS shape
    # m=1024, n=512, k=256, once per expert (2 per GPU), layer and microbatch, on 4 GPUs.
    fc1 = gemm_count(r, "gemm:m=1024,n=512,k=256,")
    want = 4 * 2 * LAYERS * mb * STEPS
    check(fc1 == want, f"expert FC1 GEMMs over 512 tokens: {fc1}, {want} expected")
    lines = re.findall(r"skipped (\d)", r.log)
    check(lines and all(k == "0" for k in lines), "no iteration skipped")


CASES = {
    "tp_sp_distopt": case_tp_sp_distopt,
    "pp_interleaved": case_pp_interleaved,
    "pp_1f1b_cp": case_pp_1f1b_cp,
    "moe_ep": case_moe_ep,
}


def main():
    phantora, python, out_root = sys.argv[1:4]
    for name in sys.argv[4:] or CASES:
        print(f"== {name}", flush=True)
        CASES[name](phantora, python, out_root)
    harness.finish()


if __name__ == "__main__":
    main()
