"""DeepSpeed ZeRO under `phantora run` (docs/frameworks/deepspeed.md): trains the tiny Hugging Face
Llama of examples/deepspeed/train.py with ZeRO stage 1, 2 or 3 on 2 simulated hosts x 2 GPUs,
then checks from the run's collectives that DeepSpeed did what the stage means, with counts and
sizes derived here by hand from the model's shape, and that the step times it printed are the
report's.

    zero.py PHANTORA PYTHON OUT_ROOT --stage {1,2,3} [--launcher {torchrun,deepspeed}]

What DeepSpeed 0.19 issues (stage_1_and_2.py, stage3.py), for P parameters, N data-parallel
ranks, S optimizer steps, one gradient bucket (reduce_bucket_size > P) and bf16:
- ZeRO-1 and ZeRO-2: per step one all-reduce of the whole bf16 gradient bucket (2P bytes; ZeRO-2
  too: with use_multi_rank_bucket_allreduce, its default, it all-reduces the bucket and each rank
  keeps its own partition instead of reducing to each owner), then, after each rank's optimizer
  updated its 1/N of the parameters, one all-gather of the bf16 parameters (2P/N bytes each);
  no reduce-scatter.
- ZeRO-3 (small-zero3.json: every parameter partitioned, no prefetch): per step one
  reduce-scatter of the gradient bucket (2P/N bytes each rank receives); a parameter all-gather
  per module with parameters (each of the tiny Llama's modules has exactly one: 9 per decoder
  layer, plus embedding, final norm and head, so M = 9L + 3 parameters), once per parameter when
  the optimizer sets up its gradient hooks, twice per module in the first step (forward, then
  again in backward: the module trace that lets DeepSpeed keep parameters alive is recorded
  during that step) and once in each later step: M (S + 2) all-gathers, moving
  2P/N bytes (S + 2) in all.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLE = os.path.join(REPO, "examples", "deepspeed")
HOSTS, GPUS_PER_HOST, STEPS = 2, 2, 3
N = HOSTS * GPUS_PER_HOST

# The "tiny" model of train.py, restated: layers, hidden, heads, KV heads, FFN, vocab.
L, H, HEADS, KV, FFN, V = 2, 256, 4, 2, 688, 4096
HEAD_DIM = H // HEADS
# Per decoder layer: q, k, v, o projections, gate/up/down, two RMSNorm weights.
LAYER_PARAMS = [H * HEADS * HEAD_DIM, H * KV * HEAD_DIM, H * KV * HEAD_DIM, HEADS * HEAD_DIM * H,
                H * FFN, H * FFN, FFN * H, H, H]
PARAMS = [V * H] + LAYER_PARAMS * L + [H, V * H]  # embedding, layers, final norm, lm_head
P = sum(PARAMS)
M = len(PARAMS)
BF16 = 2


def collectives(r):
    """{op: [(count, bytes)] per communicator} on the communicators of all N ranks, from
    report.json's communication.communicators."""
    ops = {}
    for c in r.communicators():
        if c["ranks"] == N:
            for kind, v in c["operations"].items():
                ops.setdefault(kind, []).append((v["count"], v["bytes"]))
    return ops


NCCL_NAMES = {"all_reduce": "ncclAllReduce", "all_gather": "ncclAllGather",
              "reduce_scatter": "ncclReduceScatter", "broadcast": "ncclBroadcast"}


def totals(ops, kind):
    """(count, bytes) of `kind` operations (all_reduce, all_gather, reduce_scatter)."""
    entries = ops.get(NCCL_NAMES[kind], [])
    return sum(c for c, _ in entries), sum(b for _, b in entries)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("phantora")
    p.add_argument("python")
    p.add_argument("out_root")
    p.add_argument("--stage", type=int, required=True, choices=(1, 2, 3))
    p.add_argument("--launcher", default="torchrun", choices=("torchrun", "deepspeed"))
    p.add_argument("--port", type=int, default=29911)
    args = p.parse_args()

    config = "small-zero3.json" if args.stage == 3 else f"zero{args.stage}.json"
    script = [os.path.join(EXAMPLE, "train.py"), "--model", "tiny", "--steps", str(STEPS),
              "--config", os.path.join(EXAMPLE, "configs", config)]
    env = {}
    if args.launcher == "torchrun":
        command = [args.python, "-m", "torch.distributed.run", "--nnodes", str(HOSTS),
                   "--nproc-per-node", str(GPUS_PER_HOST), "--rdzv-backend", "c10d",
                   "--rdzv-endpoint", f"localhost:{args.port}", *script]
    else:
        command = [os.path.join(EXAMPLE, "ds-launch.sh"), *script]
        env = {"DEEPSPEED": os.path.join(os.path.dirname(args.python), "deepspeed"),
               "DS_MASTER_PORT": str(args.port)}
    name = f"zero{args.stage}-{args.launcher}"
    r = harness.run(args.phantora, name, args.out_root, HOSTS, GPUS_PER_HOST, command, env=env,
                    timeout=360)

    banner = re.search(r"ZeRO stage (\d) \| (\d+) GPUs .* optimizer (\w+) over (\w+)", r.log)
    harness.check(banner is not None, "the script printed its set-up line")
    if banner:
        want_opt = "DeepSpeedZeroOptimizer_Stage3" if args.stage == 3 else "DeepSpeedZeroOptimizer"
        harness.check(int(banner.group(1)) == args.stage and int(banner.group(2)) == N,
                      f"DeepSpeed ran ZeRO stage {banner.group(1)} on {banner.group(2)} GPUs")
        harness.check(banner.group(3) == want_opt and banner.group(4) == "AdamW",
                      f"optimizer {banner.group(3)} over {banner.group(4)} "
                      f"(want {want_opt} over torch AdamW: torch_adam)")
    harness.check(len(r.report["ranks"]) == N and all(x["end"] == "exited" for x in r.report["ranks"]),
                  f"{N} ranks used a GPU and exited")

    ops = collectives(r)
    print(f"collectives on the {N}-rank communicators: "
          + ", ".join(f"{k} x{sum(c for c, _ in v)} {sum(b for _, b in v):.0f} bytes"
                     for k, v in sorted(ops.items())), flush=True)
    ar_n, ar_b = totals(ops, "all_reduce")
    ag_n, ag_b = totals(ops, "all_gather")
    rs_n, rs_b = totals(ops, "reduce_scatter")
    bc_n, bc_b = totals(ops, "broadcast")
    if args.stage in (1, 2):
        # deepspeed.initialize broadcasts every parameter from rank 0 (_broadcast_model).
        harness.check(bc_n == M and bc_b == BF16 * P,
                      f"one broadcast per parameter at start: {bc_n} moving {bc_b:.0f} bytes "
                      f"(want {M}, {BF16 * P})")
        # Per step: the gradient bucket (bf16), the overflow flag has_overflow() reduces (one
        # uint8) and the squared gradient norm (one fp32).
        harness.check(ar_n == 3 * STEPS and ar_b == STEPS * (BF16 * P + 1 + 4),
                      f"all-reduces of the gradient bucket ({BF16 * P} bytes), overflow flag and "
                      f"norm per step: {ar_n} moving {ar_b:.0f} bytes "
                      f"(want {3 * STEPS}, {STEPS * (BF16 * P + 1 + 4)})")
        harness.check(rs_n == 0, f"no reduce-scatter ({rs_n})")
        harness.check(ag_n == STEPS and ag_b == STEPS * BF16 * P // N,
                      f"one parameter all-gather of {BF16 * P // N} bytes per rank per step: "
                      f"{ag_n} moving {ag_b:.0f} (want {STEPS}, {STEPS * BF16 * P // N})")
    else:
        harness.check(rs_n == STEPS and rs_b == STEPS * BF16 * P // N,
                      f"one gradient reduce-scatter of {BF16 * P // N} bytes per rank per step: "
                      f"{rs_n} moving {rs_b:.0f} (want {STEPS}, {STEPS * BF16 * P // N})")
        harness.check(ag_n == M * (STEPS + 2) and ag_b == (STEPS + 2) * BF16 * P // N,
                      f"parameter all-gathers: {ag_n} moving {ag_b:.0f} bytes "
                      f"(want M (S + 2) = {M * (STEPS + 2)}, {(STEPS + 2) * BF16 * P // N})")
        harness.check(ar_b <= 8 * ar_n,
                      f"no gradient all-reduce: {ar_n} all-reduce(s) of at most 8 bytes "
                      f"({ar_b:.0f} bytes in all)")

    printed = [float(x) for x in re.findall(r"^step \d+/\d+ \|.*\| step time ([\d.]+) ms",
                                            r.log, re.M)]
    harness.check(len(printed) == STEPS, f"the script printed {STEPS} step times ({printed})")
    harness.check_steps(r, printed, tolerance=5e-3)
    harness.check_steps_fit(r, printed)
    harness.finish()


if __name__ == "__main__":
    main()
