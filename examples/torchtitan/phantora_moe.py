"""Expert-parallel MoE routing for TorchTitan under phantora: per-expert token counts made on the
host, balanced or with a set imbalance.

Under phantora kernels do not run, so the router's token counts per expert (a sum over the
routing map, computed on the GPU) are unknown; read on the host they are 0, and TorchTitan's
expert-parallel all-to-all dispatcher stops when it splits the routed tokens by them. This module
is a TorchTitan *override* (TorchTitan's own extension point, `--override.imports`; the framework
stays unmodified) that replaces the all-to-all dispatcher's config with one whose dispatcher
takes its counts from the host instead:

  balanced (default)  every expert gets T x K / E of the T x K routed token slots (the remainder
                      one each to the first experts): what an ideal load balancer reaches;
  imbalance=s > 0     expert i (in a rotation that moves by one per MoE layer, so the hot expert
                      is not always on the same rank) gets a share proportional to 1 / (i+1)^s —
                      a Zipf-like skew; s = 1 puts ~37 % of 8 experts' tokens on the busiest one.

The counts are copied to the GPU (a small host-to-device copy keeps its bytes in the simulator),
so the count all-to-all carries them and every rank's splits and grouped expert GEMMs are sized
consistently. Everything else of the dispatcher (token reordering, the data all-to-alls, combine)
is TorchTitan's.

Usage (examples/torchtitan/run.sh sets PYTHONPATH to this directory for the debug-moe-ep preset):
  --override.imports phantora_moe.routed_counts
  --override.imports 'phantora_moe.routed_counts={"imbalance": 1.0}'
"""
from __future__ import annotations

import dataclasses
import itertools

import torch
from torchtitan.config import override
from torchtitan.models.common.token_dispatcher import AllToAllTokenDispatcher


def expert_counts(slots: int, experts: int, imbalance: float = 0.0, rotate: int = 0) -> list[int]:
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
    # rank r's count goes to expert (rotate + r) mod E
    out = [0] * experts
    for r, c in enumerate(counts):
        out[(rotate + r) % experts] = c
    return out


class HostCountedTokenDispatcher(AllToAllTokenDispatcher):
    """TorchTitan's all-to-all dispatcher with the per-expert counts computed on the host."""

    @dataclasses.dataclass(kw_only=True, slots=True)
    class Config(AllToAllTokenDispatcher.Config):
        imbalance: float = 0.0

    # One dispatcher per MoE layer: each takes the next rotation of the skew.
    _layers = itertools.count()

    def __init__(self, config: Config):
        super().__init__(config)
        self.imbalance = config.imbalance
        self.rotate = next(HostCountedTokenDispatcher._layers)

    def dispatch(self, x_TD, topk_scores_TK, topk_expert_ids_TK, num_local_tokens_per_expert_E):
        if self.ep_mesh is not None:
            slots = topk_expert_ids_TK.numel()  # T x K: the rows the dispatcher reorders
            experts = num_local_tokens_per_expert_E.numel()
            counts = expert_counts(slots, experts, self.imbalance, self.rotate)
            num_local_tokens_per_expert_E = torch.tensor(
                counts, dtype=num_local_tokens_per_expert_E.dtype,
                device=num_local_tokens_per_expert_E.device)
        return super().dispatch(x_TD, topk_scores_TK, topk_expert_ids_TK,
                                num_local_tokens_per_expert_E)


@override(target=AllToAllTokenDispatcher.Config, exact=True,
          description="phantora: per-expert token counts from the host (balanced or skewed)")
def routed_counts(cfg: AllToAllTokenDispatcher.Config, *, imbalance: float = 0.0):
    fields = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
    return HostCountedTokenDispatcher.Config(**fields, imbalance=float(imbalance))
