"""GPT / Llama training on Megatron-Core (PyPI `megatron-core`), written for `phantora run`
but nothing in it is Phantora-specific: it runs the same on a real cluster.

The PyPI wheel ships `megatron.core` only (no `megatron.training`), so this is a small training
loop on megatron.core: parallel_state, GPTModel with the local (non-Transformer-Engine) layer
spec, the pipeline schedules of get_forward_backward_func, DistributedDataParallel with the
distributed optimizer, and mock data. Parallelism: tensor (+ sequence), pipeline (1F1B and
interleaved), data (distributed optimizer, overlapped grad reduce / param gather), context, and
expert parallelism for mixture-of-experts models. docs/frameworks/megatron.md has the commands.

Two modules of our own go into Megatron's layer spec, because the local spec's versions refuse
what we need without Apex or Transformer Engine:
- Norm: torch's RMSNorm/LayerNorm whose weights carry Megatron's `sequence_parallel` attribute
  (Megatron's WrappedTorchNorm asserts sequence parallelism off; Apex's FusedLayerNorm is the
  local spec's only SP-capable norm).
- SDPAttention: torch's scaled_dot_product_attention (flash attention) instead of the local
  DotProductAttention, which materialises the [s, s] score matrix and asserts context
  parallelism off. With context parallelism it all-gathers K and V over the CP group
  (Transformer Engine's cp_comm_type="all_gather" scheme) on Megatron's load-balanced sequence
  split.

Per iteration the last rank prints Megatron-LM's line `elapsed time per iteration (ms): X`.
"""
import argparse
import os
import time

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

import megatron.core.jit

# Megatron decorates some helpers with `jit_fuser` (torch.compile) when their module is imported
# (megatron/core/jit.py). This makes it a no-op for the modules imported from here on (the
# experts' GLU, attention, activations); those megatron.core's own import already loaded
# (fusions, router expert bias, flex dispatcher) are not called with the flags set below.
megatron.core.jit.disable_jit_fuser()

from megatron.core import parallel_state as mpu  # noqa: E402
from megatron.core.distributed import (  # noqa: E402
    DistributedDataParallel,
    DistributedDataParallelConfig,
    finalize_model_grads,
)
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec  # noqa: E402
from megatron.core.models.gpt.gpt_model import GPTModel  # noqa: E402
from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer  # noqa: E402
from megatron.core.pipeline_parallel import get_forward_backward_func  # noqa: E402
from megatron.core.tensor_parallel import gather_from_sequence_parallel_region  # noqa: E402
from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed  # noqa: E402
from megatron.core.transformer.enums import AttnMaskType  # noqa: E402
from megatron.core.transformer.module import MegatronModule  # noqa: E402
from megatron.core.transformer.transformer_block import (  # noqa: E402
    TransformerBlockSubmodules,
    get_num_layers_to_build,
)
from megatron.core.transformer.transformer_config import TransformerConfig  # noqa: E402
from megatron.core.utils import get_batch_on_this_cp_rank  # noqa: E402
import megatron.core.transformer.moe.moe_utils as moe_utils  # noqa: E402

# megatron-core 0.16.0/0.16.1 bug, real hardware too: without Transformer Engine the router's
# gating GEMM reads `te_general_gemm`, which moe_utils.py defines only when TE imports
# (NameError). None is the value its own check (`te_general_gemm is not None`) expects.
if not hasattr(moe_utils, "te_general_gemm"):
    moe_utils.te_general_gemm = None

# name: layers, hidden, heads, query groups, ffn, vocab, seq, experts, top-k
MODELS = {
    "tiny": dict(layers=4, hidden=256, heads=8, groups=4, ffn=704, vocab=8192, seq=512),
    "tiny-moe": dict(layers=4, hidden=256, heads=8, groups=4, ffn=512, vocab=8192, seq=512,
                     experts=8, topk=2),
    # Llama 3 (Meta's model cards / params.json): RoPE base 500000, SwiGLU, RMSNorm, GQA 8.
    "llama3-8b": dict(layers=32, hidden=4096, heads=32, groups=8, ffn=14336, vocab=128256,
                      seq=8192),
    "llama3-70b": dict(layers=80, hidden=8192, heads=64, groups=8, ffn=28672, vocab=128256,
                       seq=8192),
    # Mixtral 8x7B (its config.json): 8 experts, top-2, 32k vocabulary.
    "mixtral-8x7b": dict(layers=32, hidden=4096, heads=32, groups=8, ffn=14336, vocab=32000,
                         seq=4096, experts=8, topk=2),
}

# Dense bf16 tensor-core peak per GPU, TFLOP/s (vendor data sheets, SXM parts), for MFU.
PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "B200": 2250.0, "A100": 312.0}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), default="tiny")
    p.add_argument("--num-layers", type=int, help="override the model's layer count")
    p.add_argument("--seq-length", type=int, help="override the model's sequence length")
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel size")
    p.add_argument("--sp", action="store_true", help="sequence parallelism (needs --tp > 1)")
    p.add_argument("--pp", type=int, default=1, help="pipeline-parallel size")
    p.add_argument("--vpp", type=int, help="virtual stages per pipeline rank (interleaved 1F1B)")
    p.add_argument("--cp", type=int, default=1, help="context-parallel size")
    p.add_argument("--ep", type=int, default=1, help="expert-parallel size (MoE models)")
    p.add_argument("--micro-batch-size", type=int, default=1)
    p.add_argument("--global-batch-size", type=int,
                   help="default: micro-batch size x data-parallel size x max(pp, 1) x 2")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--dist-opt", action="store_true", help="distributed optimizer (ZeRO-1)")
    p.add_argument("--overlap-grad-reduce", action="store_true")
    p.add_argument("--overlap-param-gather", action="store_true",
                   help="overlap the distributed optimizer's parameter all-gather with forward")
    p.add_argument("--bucket-size", type=int, help="DDP bucket size in elements")
    p.add_argument("--fp16", action="store_true",
                   help="fp16 with Megatron's dynamic loss scaler (default: bf16)")
    p.add_argument("--clip-grad", type=float, default=1.0, help="0 turns clipping off")
    p.add_argument("--recompute", action="store_true", help="full activation recomputation")
    p.add_argument("--variable-seq-lengths", action="store_true",
                   help="pipeline stages exchange tensor shapes before each transfer")
    p.add_argument("--moe-dispatcher", choices=["alltoall", "allgather"], default="alltoall")
    p.add_argument("--moe-capacity-factor", type=float, default=1.0,
                   help="expert capacity factor; with padding (the default) every expert gets "
                        "exactly capacity tokens: a balanced split that needs no routing values")
    p.add_argument("--moe-dropless", action="store_true",
                   help="no capacity, no padding: split sizes come from the router's output")
    return p.parse_args()


class Norm:
    """Megatron builds norms as `cls(config=..., hidden_size=..., eps=...)`."""

    def __new__(cls, config, hidden_size, eps=1e-5, **_):
        kind = torch.nn.RMSNorm if config.normalization == "RMSNorm" else torch.nn.LayerNorm
        norm = kind(hidden_size, eps=eps, device=torch.cuda.current_device(),
                    dtype=config.params_dtype)
        # finalize_model_grads all-reduces these grads over TP (each TP rank saw its own
        # sequence shard), exactly as for Apex's FusedLayerNorm.
        for param in norm.parameters():
            setattr(param, "sequence_parallel", config.sequence_parallel)
        return norm


class SDPAttention(MegatronModule):
    """Core attention by torch's scaled_dot_product_attention. Takes Megatron's layout
    (q [sq, b, heads, d], k/v [sk, b, groups, d]) and returns [sq, b, heads * d]."""

    def __init__(self, config, layer_number, attn_mask_type, attention_type,
                 attention_dropout=None, softmax_scale=None, cp_comm_type=None,
                 pg_collection=None):
        super().__init__(config=config)
        assert attn_mask_type == AttnMaskType.causal, "SDPAttention is causal only"
        self.cp_size = config.context_parallel_size
        self.cp_group = mpu.get_context_parallel_group() if self.cp_size > 1 else None
        self.cp_rank = mpu.get_context_parallel_rank() if self.cp_size > 1 else 0

    def forward(self, query, key, value, attention_mask, attn_mask_type=None,
                attention_bias=None, packed_seq_params=None):
        sq, b, heads, d = query.shape
        q = query.permute(1, 2, 0, 3)  # [b, heads, sq, d]
        if self.cp_size == 1:
            out = F.scaled_dot_product_attention(
                q, key.permute(1, 2, 0, 3), value.permute(1, 2, 0, 3), is_causal=True,
                enable_gqa=True)
        else:
            out = self._context_parallel(q, key, value)
        return out.permute(2, 0, 1, 3).reshape(sq, b, heads * d)

    def _context_parallel(self, q, key, value):
        # Megatron's CP split: the sequence in 2*cp chunks, rank r holding chunks r and
        # 2cp-1-r (get_batch_on_this_cp_rank). All-gather K and V (backward: reduce-scatter)
        # gives, per rank in rank order, its two chunks; put them back in sequence order.
        cp, r = self.cp_size, self.cp_rank
        kv = torch.cat([key, value], dim=-1)
        kv = gather_from_sequence_parallel_region(kv, tensor_parallel_output_grad=True,
                                                  group=self.cp_group)
        chunk = key.shape[0] // 2
        parts = kv.split(chunk, dim=0)  # rank i's chunks at 2i (chunk i), 2i+1 (2cp-1-i)
        order = [None] * (2 * cp)
        for i in range(cp):
            order[i], order[2 * cp - 1 - i] = parts[2 * i], parts[2 * i + 1]
        kv = torch.cat(order, dim=0).permute(1, 2, 0, 3)  # [b, groups, s, 2d]
        k, v = kv.split(key.shape[-1], dim=-1)
        outs = []
        for local, global_chunk in ((0, r), (1, 2 * cp - 1 - r)):
            qc = q[:, :, local * chunk:(local + 1) * chunk]
            end = (global_chunk + 1) * chunk  # keys up to the end of this query chunk
            mask = causal_lower_right(chunk, end)
            outs.append(F.scaled_dot_product_attention(
                qc, k[:, :, :end], v[:, :, :end], attn_mask=mask, enable_gqa=True))
        return torch.cat(outs, dim=2)


def transformer_config(args, m):
    dtype = torch.float16 if args.fp16 else torch.bfloat16
    moe = {}
    if m.get("experts"):
        moe = dict(
            num_moe_experts=m["experts"], moe_router_topk=m["topk"],
            moe_router_load_balancing_type="aux_loss", moe_aux_loss_coeff=1e-2,
            moe_permute_fusion=False,
        )
        if not args.moe_dropless:
            moe.update(moe_expert_capacity_factor=args.moe_capacity_factor,
                       moe_pad_expert_input_to_capacity=True)
    recompute = {}
    if args.recompute:
        recompute = dict(recompute_granularity="full", recompute_method="uniform",
                         recompute_num_layers=1)
    return TransformerConfig(
        num_layers=args.num_layers or m["layers"],
        hidden_size=m["hidden"],
        num_attention_heads=m["heads"],
        num_query_groups=m["groups"],
        ffn_hidden_size=m["ffn"],
        normalization="RMSNorm",
        gated_linear_unit=True,
        activation_func=F.silu,
        add_bias_linear=False,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        init_method_std=0.02,
        bf16=not args.fp16,
        fp16=args.fp16,
        params_dtype=dtype,
        pipeline_dtype=dtype,
        tensor_model_parallel_size=args.tp,
        sequence_parallel=args.sp,
        pipeline_model_parallel_size=args.pp,
        virtual_pipeline_model_parallel_size=args.vpp,
        context_parallel_size=args.cp,
        expert_model_parallel_size=args.ep,
        variable_seq_lengths=args.variable_seq_lengths,
        # Checked even without experts (allgather refuses variable sequence lengths).
        moe_token_dispatcher_type=args.moe_dispatcher,
        # Fusions that need Apex / Transformer Engine / torch.compile: PyTorch paths instead.
        bias_activation_fusion=False,
        bias_dropout_fusion=False,
        masked_softmax_fusion=False,
        apply_rope_fusion=False,
        gradient_accumulation_fusion=False,
        persist_layer_norm=False,
        cross_entropy_loss_fusion=False,
        deallocate_pipeline_outputs=True,
        **moe,
        **recompute,
    )


def build_model(args, m, config):
    # Experts: SequentialMLP, one GEMM per local expert (grouped GEMM needs Transformer Engine
    # or the compiled grouped_gemm extension).
    spec = get_gpt_layer_local_spec(num_experts=m.get("experts"), normalization="RMSNorm")
    spec.submodules.input_layernorm = Norm
    spec.submodules.pre_mlp_layernorm = Norm
    spec.submodules.self_attention.submodules.core_attention = SDPAttention
    chunks = []
    for vp in range(args.vpp or 1):
        vp_stage = vp if args.vpp else None
        block = TransformerBlockSubmodules(
            layer_specs=[spec] * get_num_layers_to_build(config, vp_stage=vp_stage),
            layer_norm=Norm)
        model = GPTModel(
            config=config, transformer_layer_spec=block, vocab_size=m["vocab"],
            max_sequence_length=args.seq_length or m["seq"],
            pre_process=mpu.is_pipeline_first_stage(ignore_virtual=False, vp_stage=vp_stage),
            post_process=mpu.is_pipeline_last_stage(ignore_virtual=False, vp_stage=vp_stage),
            parallel_output=True, share_embeddings_and_output_weights=False,
            position_embedding_type="rope", rotary_base=500000, vp_stage=vp_stage)
        chunks.append(model)
    return chunks


def count_params(chunks):
    """(total, expert) parameters of this rank's model chunks."""
    total = expert = 0
    for c in chunks:
        for p in c.parameters():
            total += p.numel()
            if not getattr(p, "allreduce", True):
                expert += p.numel()
    return total, expert


def flops_per_iteration(m, layers, seq, global_batch):
    """Model FLOPs of one training iteration (forward + backward = 3 x forward), counted the
    way Megatron-LM counts them (full, not causal-halved, attention; no recomputation)."""
    h, f, v, heads, groups = m["hidden"], m["ffn"], m["vocab"], m["heads"], m["groups"]
    kv = h * groups // heads
    attn_proj = 2 * h * (h + 2 * kv) + 2 * h * h  # QKV + output projection
    mlp = 2 * 3 * h * f * m.get("topk", 1)  # SwiGLU: 3 matrices, top-k experts per token
    attn_scores = 2 * 2 * seq * h  # QK^T and AV per token
    per_token = layers * (attn_proj + mlp + attn_scores) + 2 * h * v
    return 3 * per_token * seq * global_batch


def mock_batches(args, m, seq):
    """Synthetic tokens made on the GPU (what Megatron's MockGPTDataset feeds, minus disk)."""
    device = torch.cuda.current_device()
    mbs = args.micro_batch_size
    tokens = torch.randint(0, m["vocab"], (mbs, seq), device=device)
    batch = {
        "tokens": tokens,
        "labels": torch.roll(tokens, -1, dims=1),
        "loss_mask": torch.ones(mbs, seq, device=device),
        "position_ids": torch.arange(seq, device=device).unsqueeze(0).expand(mbs, -1),
    }
    batch = get_batch_on_this_cp_rank(batch)
    while True:
        yield batch


def forward_step(data_iterator, model):
    batch = next(data_iterator)
    output = model(batch["tokens"], batch["position_ids"], None, labels=batch["labels"])
    loss_mask = batch["loss_mask"]

    def loss_func(output_tensor):
        # Mean over this rank's tokens. Context-parallel ranks hold equal shares of the
        # sequence, and DDP averages gradients over the data- x context-parallel group, as
        # Megatron-LM does; only the reported value is averaged across CP.
        losses = output_tensor.float().view(-1)
        mask = loss_mask.reshape(-1)
        loss = torch.sum(losses * mask) / mask.sum()
        report = loss.detach().clone()
        if mpu.get_context_parallel_world_size() > 1:
            torch.distributed.all_reduce(report, group=mpu.get_context_parallel_group())
            report /= mpu.get_context_parallel_world_size()
        return loss, {"lm loss": report}

    return output, loss_func


def main():
    args = parse_args()
    m = MODELS[args.model]
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    torch.distributed.init_process_group("nccl")
    world = torch.distributed.get_world_size()
    rank = torch.distributed.get_rank()
    mpu.initialize_model_parallel(
        tensor_model_parallel_size=args.tp, pipeline_model_parallel_size=args.pp,
        virtual_pipeline_model_parallel_size=args.vpp, context_parallel_size=args.cp,
        expert_model_parallel_size=args.ep, create_gloo_process_groups=False)
    model_parallel_cuda_manual_seed(1234)
    dp = mpu.get_data_parallel_world_size()
    seq = args.seq_length or m["seq"]
    gbs = args.global_batch_size or args.micro_batch_size * dp * max(args.pp, 1) * 2
    microbatches = gbs // (args.micro_batch_size * dp)
    assert microbatches * args.micro_batch_size * dp == gbs, "global batch not divisible"

    config = transformer_config(args, m)
    chunks = build_model(args, m, config)
    for chunk in chunks:  # as Megatron-LM's get_model: modules built on the host move over
        chunk.cuda(torch.cuda.current_device())
    ddp_config = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True, overlap_grad_reduce=args.overlap_grad_reduce,
        overlap_param_gather=args.overlap_param_gather,
        use_distributed_optimizer=args.dist_opt, bucket_size=args.bucket_size,
        check_for_nan_in_grad=True)
    model = [DistributedDataParallel(config=config, ddp_config=ddp_config, module=c,
                                     disable_bucketing=(i > 0))
             for i, c in enumerate(chunks)]
    for chunk in model:
        chunk.broadcast_params()

    # What Megatron-LM's training loop hands the schedules (megatron/training/training.py).
    config.no_sync_func = [c.no_sync for c in model]
    config.grad_sync_func = [c.start_grad_sync for c in model] if args.overlap_grad_reduce else None
    config.param_sync_func = None
    if len(model) == 1:
        config.no_sync_func = config.no_sync_func[0]
        if config.grad_sync_func:
            config.grad_sync_func = config.grad_sync_func[0]
    config.finalize_model_grads_func = finalize_model_grads

    optimizer = get_megatron_optimizer(
        OptimizerConfig(optimizer="adam", lr=3e-4, weight_decay=0.1, adam_beta1=0.9,
                        adam_beta2=0.95, bf16=not args.fp16, fp16=args.fp16,
                        params_dtype=config.params_dtype, initial_loss_scale=2.0 ** 16,
                        use_distributed_optimizer=args.dist_opt, clip_grad=args.clip_grad),
        model, use_gloo_process_groups=False)

    total, expert = count_params(chunks)
    layers = config.num_layers
    flops = flops_per_iteration(m, layers, seq, gbs)
    peak = next((v for k, v in PEAK_TFLOPS.items() if k in torch.cuda.get_device_name()), None)
    last = rank == world - 1
    if last:
        print(f"megatron-core: model {args.model} layers {layers} seq {seq} | world {world} "
              f"tp {args.tp} sp {args.sp} pp {args.pp} vpp {args.vpp} cp {args.cp} "
              f"ep {args.ep} dp {dp} | global batch {gbs} micro-batch {args.micro_batch_size} "
              f"microbatches {microbatches} | params on last rank {total / 1e6:.1f} M "
              f"(experts {expert / 1e6:.1f} M)", flush=True)

    data = [mock_batches(args, m, seq) for _ in model]
    data = data[0] if len(data) == 1 else data
    forward_backward = get_forward_backward_func()
    times = []
    for it in range(1, args.steps + 1):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for chunk in model:
            chunk.zero_grad_buffer()
        optimizer.zero_grad()
        losses = forward_backward(
            forward_step_func=forward_step, data_iterator=data,
            model=model if len(model) > 1 else model[0], num_microbatches=microbatches,
            seq_length=seq, micro_batch_size=args.micro_batch_size,  # schedules divide by cp
            decoder_seq_length=seq, forward_only=False)
        update_ok, grad_norm, _ = optimizer.step()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        if last:
            loss = (torch.stack([x["lm loss"] for x in losses]).mean().item()
                    if losses else float("nan"))
            tflops = flops / elapsed / world / 1e12
            mfu = f"{100 * tflops / peak:.1f}%" if peak else "n/a"
            scale = optimizer.get_loss_scale().item()
            print(f" iteration {it:>4}/{args.steps} | consumed samples {it * gbs} | "
                  f"elapsed time per iteration (ms): {elapsed * 1e3:.2f} | "
                  f"throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | MFU {mfu} | "
                  f"tokens/s/GPU {gbs * seq / elapsed / world:.0f} | lm loss {loss:.6E} | "
                  f"loss scale {scale:.1f} | grad norm {grad_norm or 0.0:.3f} | "
                  f"skipped {0 if update_ok else 1}", flush=True)
    if last:
        mem = torch.cuda.max_memory_allocated() / 2**30
        steady = times[1:] or times
        print(f"megatron-core: mean of iterations 2-{len(times)}: "
              f"{1e3 * sum(steady) / len(steady):.2f} ms | peak memory on last rank "
              f"{mem:.2f} GiB", flush=True)
    torch.distributed.barrier()
    mpu.destroy_model_parallel()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
