"""TorchTitan (unmodified) training its DeepSeek V3 debug MoE with expert parallelism under
`phantora run`, the per-expert token counts supplied by phantora's start-up hook
(tools/python/phantora_moe_routing.py: kernels do not run, so the router's counts are not
computed).

    moe_ep_job.py --phantora BIN --python VENV_PYTHON --work DIR --port P CASE

Cases (2 hosts x 2 H100, EP 2 inside each host, FSDP2 over all 4, 3 steps):
  balanced   every expert gets T x K / E routed token slots
  skewed     phantora run --moe-imbalance 1: Zipf-like shares

What is checked, each against a hand derivation:
- expert_counts() on small cases worked by hand (exact totals, the largest-remainder rounding,
  the rotation);
- the run completes and TorchTitan logs every step;
- the EP all-to-alls: exactly two communicators carry ncclSend, the two GPUs of each host; per
  MoE layer and step each rank sends 2 count messages (E / EP int64 = 32 B each, to itself and
  to its peer) and 8 token messages (dispatch and combine forward, their gradients backward,
  to itself and to its peer), the token messages sized from the counts: rows x dim x 2 bytes;
- nothing else sends point-to-point;
- the step times derived from TorchTitan's tps fit in the simulated run.
"""
import json
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
import titan_common  # noqa: E402

sys.path.insert(0, os.path.join(titan_common.REPO, "tools", "python"))
from phantora_moe_routing import expert_counts  # noqa: E402

# deepseek_v3_debugmodel (torchtitan.models.deepseek_v3.config_registry): dim 256, 6 layers of
# which the first is dense (5 MoE layers), 8 routed experts, top 3; local batch 8 x 2048 tokens.
DIM, MOE_LAYERS, EXPERTS, TOP_K = 256, 5, 8, 3
STEPS, LOCAL_BATCH, SEQ, EP = 3, 8, 2048, 2
SLOTS = LOCAL_BATCH * SEQ * TOP_K  # routed token slots per rank and layer: 49,152

CASES = {"balanced": 0.0, "skewed": 1.0}
STEP_LINE = re.compile(r"step:\s*(\d+)\s+loss:.*?tps:\s*([0-9,]+)")


def check_expert_counts(expert_counts):
    harness.check(expert_counts(SLOTS, EXPERTS) == [6144] * 8, "balanced: 49,152 / 8 = 6,144 each")
    harness.check(expert_counts(10, 4) == [3, 3, 2, 2], "balanced with a remainder: 10 over 4")
    # Shares 1, 1/2, 1/3, 1/4 of 25/12: exact 4.8, 2.4, 1.6, 1.2; floors 4, 2, 1, 1 (8); the two
    # largest remainders (.8, .6) get the 2 left: 5, 2, 2, 1. Rotated by one: 1, 5, 2, 2.
    harness.check(expert_counts(10, 4, 1.0) == [5, 2, 2, 1], "Zipf s=1: 10 over 4 by hand")
    harness.check(expert_counts(10, 4, 1.0, rotate=1) == [1, 5, 2, 2], "rotated by one")


def main():
    args = titan_common.arguments(CASES)
    imbalance = CASES[args.case]
    check_expert_counts(expert_counts)

    assets = titan_common.make_assets(args.python, args.work)
    name = f"moe_ep_{args.case}"
    out = os.path.join(args.work, name)
    command = [*titan_common.torchrun(args.python, 2, 2, args.port),
               "--module", "deepseek_v3", "--config", "deepseek_v3_debugmodel",
               "--hf-assets-path", os.path.join(assets, "tokenizer"),
               "--dataloader.dataset", "c4_test",
               "--dataloader.dataset-path", os.path.join(assets, "c4_test"),
               "--training.steps", str(STEPS), "--training.local-batch-size", str(LOCAL_BATCH),
               "--training.seq-len", str(SEQ), "--checkpoint.no-enable",
               "--profiler.no-enable-profiling", "--metrics.no-enable-tensorboard",
               "--metrics.log-freq", "1", "--metrics.disable-color-printing",
               "--training.disable-cuda-graphs", "--dump-folder", os.path.join(out, "dump"),
               "--parallelism.expert-parallel-degree", str(EP), "activation-checkpoint:none"]
    r = harness.run(args.phantora, name, args.work, 2, 2, command, env=titan_common.environment(),
                    timeout=780, extra=["--moe-imbalance", str(imbalance)])
    harness.check(r.report["status"] == "ok", f"status ok ({r.report['status']})")
    steps = sorted({int(m.group(1)) for m in STEP_LINE.finditer(r.log)})
    harness.check(steps == list(range(1, STEPS + 1)), f"TorchTitan logged steps 1..{STEPS} ({steps})")

    # --- the EP all-to-alls ----------------------------------------------------------------------
    comms = r.communicators()
    senders = [c for c in comms if "ncclSend" in c["operations"]]
    harness.check(sorted(sorted(c["gpus"]) for c in senders) == [[0, 1], [2, 3]],
                  f"ncclSend only on the two intra-host EP pairs: {[c['gpus'] for c in senders]}")
    # Count messages: E / EP int64 counts to each of the EP ranks (itself included).
    count_bytes = (EXPERTS // EP) * 8
    # Token messages: rank s sends to rank d the rows of d's experts: sum of the counts of
    # experts d*E/EP .. (d+1)*E/EP - 1; each of dispatch, combine and their two gradients moves
    # the same rows between the same pair (combine and the gradients in the other direction,
    # which for two identical senders is the same multiset of sizes).
    row_bytes = DIM * 2
    want_bytes = 0
    for layer in range(MOE_LAYERS):
        counts = expert_counts(SLOTS, EXPERTS, imbalance, layer)
        for dst in range(EP):
            rows = sum(counts[dst * EXPERTS // EP:(dst + 1) * EXPERTS // EP])
            want_bytes += EP * 4 * rows * row_bytes  # from each of the EP senders, 4 passes
        want_bytes += EP * EP * count_bytes
    want_bytes *= STEPS
    want_count = EP * MOE_LAYERS * STEPS * (EP + 4 * EP)
    for c in senders:
        send = c["operations"]["ncclSend"]
        harness.check(send["count"] == want_count and int(send["bytes"]) == want_bytes,
                      f"EP pair {c['gpus']}: {send['count']} sends, {int(send['bytes'])} B "
                      f"(expected {want_count} = {EP} ranks x {MOE_LAYERS} MoE layers x {STEPS} "
                      f"steps x ({EP} count + {4 * EP} token messages), {want_bytes} B)")
    # Message by message, from trace.json's group spans (`ops`, each from one rank's side): the
    # sizes above as a multiset per EP communicator, which tells the skew's uneven splits apart.
    want_sizes = Counter()
    for layer in range(MOE_LAYERS):
        counts = expert_counts(SLOTS, EXPERTS, imbalance, layer)
        for dst in range(EP):
            rows = sum(counts[dst * EXPERTS // EP:(dst + 1) * EXPERTS // EP])
            want_sizes[rows * row_bytes] += EP * 4 * STEPS
    want_sizes[count_bytes] += EP * EP * MOE_LAYERS * STEPS
    with open(os.path.join(r.out_dir, "trace.json"), encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    for c in senders:
        got = Counter(o["bytes"] for e in events if e.get("ph") == "X"
                      for o in e.get("args", {}).get("ops", [])
                      if o["op"] == "ncclSend" and o["communicator"] == c["id"])
        harness.check(got == want_sizes,
                      f"EP pair {c['gpus']}: send sizes {sorted(got.items())} = expected "
                      f"{sorted(want_sizes.items())}")

    # --- step times --------------------------------------------------------------------------
    # Every rank logs every step; the first line of each step stands for it.
    tps = {}
    for m in STEP_LINE.finditer(r.log):
        tps.setdefault(int(m.group(1)), int(m.group(2).replace(",", "")))
    printed_ms = [LOCAL_BATCH * SEQ / tps[s] * 1e3 for s in sorted(tps)]
    harness.check_steps_fit(r, printed_ms)
    harness.finish()


if __name__ == "__main__":
    main()
