"""MoE routing where a framework reads per-expert token counts on the host (imported by
sitecustomize.py when the framework's module is).

Kernels do not run under phantora, so a router's token counts per expert — a sum over the routing
map, computed on the GPU — are unknown; read on the host they are 0, and an expert-parallel
all-to-all sized from them cannot work (TorchTitan's stops: "split_with_sizes expects split_sizes
to sum exactly to ..."). Where a framework does this, the hook supplies the counts instead, made
on the host and copied to the GPU (a small host-to-device copy keeps its bytes in the simulator),
so that every rank's splits, all-to-alls and expert GEMMs are sized consistently:

  PHANTORA_MOE_IMBALANCE = 0 (default)  every expert gets T x K / E of the T x K routed token
                                         slots (the remainder one each to the first experts);
  PHANTORA_MOE_IMBALANCE = s > 0         shares proportional to 1 / (rank + 1) ** s, the hottest
                                         expert rotating by one per MoE layer.

`phantora run --moe-imbalance S` sets it. Frameworks handled: TorchTitan's
AllToAllTokenDispatcher (docs/frameworks/torchtitan.md).
"""
import functools
import os
import sys


def expert_counts(slots, experts, imbalance=0.0, rotate=0):
    """`slots` routed token slots over `experts`, summing exactly to `slots`: equal shares when
    `imbalance` is 0, else shares proportional to 1 / (rank + 1) ** imbalance with the expert of
    rank 0 at index `rotate`. Largest-remainder rounding keeps the total exact."""
    if experts <= 0 or slots < 0:
        raise ValueError(f"expert_counts: {slots} slots over {experts} experts")
    if imbalance < 0:
        raise ValueError(f"expert_counts: imbalance must be >= 0, got {imbalance}")
    weights = [1.0 / (r + 1) ** imbalance for r in range(experts)]
    total = sum(weights)
    exact = [slots * w / total for w in weights]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(experts), key=lambda r: (-(exact[r] - counts[r]), r))
    for r in by_remainder[: slots - sum(counts)]:
        counts[r] += 1
    out = [0] * experts  # rank r's count goes to expert (rotate + r) mod E
    for r, c in enumerate(counts):
        out[(rotate + r) % experts] = c
    return out


def imbalance_from_environment():
    text = os.environ.get("PHANTORA_MOE_IMBALANCE", "") or "0"
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0:
        raise ValueError(f"PHANTORA_MOE_IMBALANCE={text!r}: expected a number >= 0")
    return value


def patch_torchtitan(module):
    """Wraps TorchTitan's AllToAllTokenDispatcher.dispatch (models/common/token_dispatcher.py):
    with an EP mesh, its `num_local_tokens_per_expert_E` argument is replaced by host-made
    counts over its T x K routed slots; the rest (reordering, the count and token all-to-alls,
    combine) is TorchTitan's."""
    cls = getattr(module, "AllToAllTokenDispatcher", None)
    original = getattr(cls, "dispatch", None)
    if original is None or getattr(original, "_phantora_routing", False):
        if original is None:
            print("phantora: TorchTitan's AllToAllTokenDispatcher.dispatch was not found; expert "
                  "parallelism will see zero routing counts", file=sys.stderr)
        return
    imbalance = imbalance_from_environment()
    import torch

    layer_of = {}  # one rotation of the skew per dispatcher (per MoE layer), in creation order

    @functools.wraps(original)
    def dispatch(self, x_TD, topk_scores_TK, topk_expert_ids_TK, num_local_tokens_per_expert_E,
                 *args, **kwargs):
        if getattr(self, "ep_mesh", None) is not None:
            if not layer_of and os.environ.get("RANK", "0") == "0":
                how = "balanced" if imbalance == 0 else f"Zipf-like skew s={imbalance:g}"
                print(f"phantora: expert-parallel routing counts are supplied by the simulator "
                      f"({how}; --moe-imbalance), not computed from the router", file=sys.stderr)
            rotate = layer_of.setdefault(id(self), len(layer_of))
            counts = expert_counts(topk_expert_ids_TK.numel(),
                                   num_local_tokens_per_expert_E.numel(), imbalance, rotate)
            num_local_tokens_per_expert_E = torch.tensor(
                counts, dtype=num_local_tokens_per_expert_E.dtype,
                device=num_local_tokens_per_expert_E.device)
        return original(self, x_TD, topk_scores_TK, topk_expert_ids_TK,
                        num_local_tokens_per_expert_E, *args, **kwargs)

    dispatch._phantora_routing = True
    cls.dispatch = dispatch
