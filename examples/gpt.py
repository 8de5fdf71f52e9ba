"""Train a decoder-only transformer (Llama-style) on synthetic data.

A plain PyTorch training script: RMSNorm, rotary position embeddings, grouped-query attention
through F.scaled_dot_product_attention, SwiGLU feed-forward, bf16 autocast, fused AdamW, random
token ids as data, and data parallelism with DDP or FSDP2 (fully_shard), optionally with
Megatron-style tensor parallelism inside FSDP2 (`--tp N`, a 2-D device mesh). Run it with torchrun:

    torchrun --nproc-per-node 8 gpt.py --model llama3-8b --parallel fsdp --steps 10
    torchrun --nproc-per-node 8 gpt.py --model llama3-8b --parallel fsdp --tp 4 --steps 10

or on one GPU without torch.distributed:

    python gpt.py --model gpt-small --parallel none --steps 10

The model is built on the meta device and materialised directly on the GPU (`to_empty` + init), so
the host never holds the full model. Each step's time, tokens/s per GPU and MFU are printed by
rank 0; at the end every rank prints its peak GPU memory. Under Phantora (PHANTORA_HOST in the
environment) tensor values are not computed, so the loss and gradient norm print as
"n/a (simulated)" instead of numbers read from buffers that hold nothing meaningful.

`--device cpu` (gloo backend, tiny models) is a quick smoke test of the script itself.
"""

import argparse
import dataclasses
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


@dataclasses.dataclass
class ModelConfig:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    seq_len: int
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5


# Named sizes. Parameter counts are without tied embeddings (input and output embeddings separate).
MODELS = {
    "gpt-tiny": ModelConfig(layers=2, hidden=128, heads=4, kv_heads=2, ffn=384, vocab=1024,
                            seq_len=128),  # ~0.6M, for smoke tests
    "gpt-small": ModelConfig(layers=12, hidden=768, heads=12, kv_heads=12, ffn=2048, vocab=50304,
                             seq_len=1024),  # ~162M
    "gpt-medium": ModelConfig(layers=24, hidden=1024, heads=16, kv_heads=16, ffn=2816,
                              vocab=50304, seq_len=1024),  # ~406M
    "gpt-1b": ModelConfig(layers=22, hidden=2048, heads=32, kv_heads=4, ffn=5632, vocab=32000,
                          seq_len=2048),  # ~1.1B (TinyLlama shape)
    "llama2-7b": ModelConfig(layers=32, hidden=4096, heads=32, kv_heads=32, ffn=11008,
                             vocab=32000, seq_len=4096),  # ~6.7B
    "llama3-1b": ModelConfig(layers=16, hidden=2048, heads=32, kv_heads=8, ffn=8192,
                             vocab=128256, seq_len=8192, rope_theta=500000.0),  # ~1.5B untied
    "llama3-3b": ModelConfig(layers=28, hidden=3072, heads=24, kv_heads=8, ffn=8192,
                             vocab=128256, seq_len=8192, rope_theta=500000.0),  # ~3.6B untied
    "llama3-8b": ModelConfig(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336,
                             vocab=128256, seq_len=8192, rope_theta=500000.0),  # ~8.0B
    "llama3-70b": ModelConfig(layers=80, hidden=8192, heads=64, kv_heads=8, ffn=28672,
                              vocab=128256, seq_len=8192, rope_theta=500000.0),  # ~70.6B
}

# Dense bf16 tensor-core peak (TFLOPS, without sparsity) by device name, for MFU.
PEAK_BF16_TFLOPS = [
    ("GB200", 2500.0),
    ("B200", 2250.0),
    ("B100", 1750.0),
    ("H200", 989.0),
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.0),
    ("H800", 989.0),
    ("H20", 148.0),
    ("GH200", 989.0),
    ("A100", 312.0),
    ("A800", 312.0),
    ("L40S", 362.0),
    ("L4", 121.0),
    ("A10", 125.0),
]


def peak_tflops(device_name):
    for key, tflops in PEAK_BF16_TFLOPS:
        if key in device_name:
            return tflops
    return None


# ----------------------------------------------------------------------------------------------
# Model


def rope_tables(head_dim, seq_len, theta, device):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32)
                                / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)  # (T, D/2)
    freqs = torch.cat((freqs, freqs), dim=-1)  # (T, D)
    return freqs.cos(), freqs.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):
    # x: (B, T, H, D); cos/sin: (T, D)
    cos = cos[None, :, None, :].to(x.dtype)
    sin = sin[None, :, None, :].to(x.dtype)
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.kv_heads = cfg.kv_heads
        self.head_dim = cfg.hidden // cfg.heads
        self.wq = nn.Linear(cfg.hidden, cfg.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(cfg.hidden, cfg.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(cfg.hidden, cfg.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(cfg.heads * self.head_dim, cfg.hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        # -1: the heads this rank holds (all of them, or 1/tp of them under tensor parallelism).
        q = self.wq(x).view(b, t, -1, self.head_dim)
        k = self.wk(x).view(b, t, -1, self.head_dim)
        v = self.wv(x).view(b, t, -1, self.head_dim)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        if self.kv_heads != self.heads:  # grouped-query attention: share each K/V head
            rep = self.heads // self.kv_heads
            k = k.repeat_interleave(rep, dim=2)
            v = v.repeat_interleave(rep, dim=2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # (B, H, T, D)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(b, t, -1)
        return self.wo(y)


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg.hidden, cfg.ffn, bias=False)  # gate
        self.w3 = nn.Linear(cfg.hidden, cfg.ffn, bias=False)  # up
        self.w2 = nn.Linear(cfg.ffn, cfg.hidden, bias=False)  # down

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn_norm = nn.RMSNorm(cfg.hidden, eps=cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = nn.RMSNorm(cfg.hidden, eps=cfg.norm_eps)
        self.ffn = FeedForward(cfg)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.ffn(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, cfg, activation_checkpointing=False):
        super().__init__()
        self.cfg = cfg
        self.activation_checkpointing = activation_checkpointing
        self.tok_embeddings = nn.Embedding(cfg.vocab, cfg.hidden)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.RMSNorm(cfg.hidden, eps=cfg.norm_eps)
        self.output = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        cos, sin = rope_tables(cfg.hidden // cfg.heads, cfg.seq_len, cfg.rope_theta, device=None)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    @torch.no_grad()
    def init_weights(self):
        """Initialises parameters and buffers in place (after to_empty on the target device)."""
        cfg = self.cfg
        cos, sin = rope_tables(cfg.hidden // cfg.heads, cfg.seq_len, cfg.rope_theta,
                               device=self.rope_cos.device)
        self.rope_cos.copy_(cos)
        self.rope_sin.copy_(sin)
        std = 0.02
        out_std = std / math.sqrt(2 * cfg.layers)
        if self.tok_embeddings is not None:
            nn.init.normal_(self.tok_embeddings.weight, std=1.0)
        for block in self.layers:
            for lin in (block.attn.wq, block.attn.wk, block.attn.wv, block.ffn.w1, block.ffn.w3):
                nn.init.trunc_normal_(lin.weight, std=std, a=-3 * std, b=3 * std)
            for lin in (block.attn.wo, block.ffn.w2):
                nn.init.trunc_normal_(lin.weight, std=out_std, a=-3 * out_std, b=3 * out_std)
            block.attn_norm.reset_parameters()
            block.ffn_norm.reset_parameters()
        if self.output is not None:
            self.norm.reset_parameters()
            final_std = cfg.hidden ** -0.5
            nn.init.trunc_normal_(self.output.weight, std=final_std, a=-3 * final_std,
                                  b=3 * final_std)

    def keep_stage(self, stage, stages):
        """Keeps this pipeline stage's share of the model: a contiguous run of blocks (as even
        as the count allows), the embedding on the first stage, the final norm and output layer
        on the last. The others' parameters are dropped before anything is allocated."""
        first = round(stage * self.cfg.layers / stages)
        last = round((stage + 1) * self.cfg.layers / stages)
        self.layers = nn.ModuleList(list(self.layers)[first:last])
        if stage > 0:
            self.tok_embeddings = None
        if stage < stages - 1:
            self.norm = None
            self.output = None
        return first, last

    def forward(self, x):
        # x: token ids on the first stage (and without pipelining), hidden states after it.
        t = x.shape[1]
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        h = self.tok_embeddings(x) if self.tok_embeddings is not None else x
        for block in self.layers:
            if self.activation_checkpointing and self.training:
                h = checkpoint(block, h, cos, sin, use_reentrant=False)
            else:
                h = block(h, cos, sin)
        return self.output(self.norm(h)) if self.output is not None else h


def apply_tensor_parallel(model, tp_mesh):
    """Megatron-style tensor parallelism: Q/K/V and the SwiGLU gate/up projections split by
    output column, the attention output and down projections by input row (one all-reduce after
    each), the embedding by row and the output layer by column with its logits gathered. Norms
    stay replicated."""
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)

    plan = {}
    if model.tok_embeddings is not None:  # absent on later pipeline stages
        plan["tok_embeddings"] = RowwiseParallel(input_layouts=Replicate(),
                                                 output_layouts=Replicate())
    if model.output is not None:
        plan["output"] = ColwiseParallel(output_layouts=Replicate())
    if plan:
        parallelize_module(model, tp_mesh, plan)
    for block in model.layers:
        parallelize_module(block, tp_mesh, {
            "attn.wq": ColwiseParallel(), "attn.wk": ColwiseParallel(),
            "attn.wv": ColwiseParallel(), "attn.wo": RowwiseParallel(),
            "ffn.w1": ColwiseParallel(), "ffn.w3": ColwiseParallel(),
            "ffn.w2": RowwiseParallel(),
        })


def clip_grad_norm(model, max_norm, pp_group=None):
    """clip_grad_norm_ that also works when parameters live on different device meshes (FSDP
    with tensor parallelism: norms are DTensors on the data mesh, the rest on data x tensor) and
    on different pipeline stages: one norm per mesh, combined across stages, then every gradient
    scaled by the same factor."""
    params = [p for p in model.parameters() if p.grad is not None]
    groups = {}
    for p in params:
        mesh = getattr(p.grad, "device_mesh", None)
        groups.setdefault(id(mesh), []).append(p)
    if len(groups) == 1 and pp_group is None:
        return torch.nn.utils.clip_grad_norm_(params, max_norm)
    norms = []
    for group in groups.values():
        n = torch.nn.utils.get_total_norm([p.grad for p in group])
        norms.append(n.full_tensor() if hasattr(n, "full_tensor") else n)
    total_sq = torch.stack(norms).pow(2).sum()
    if pp_group is not None:
        dist.all_reduce(total_sq, group=pp_group)
    total = total_sq.sqrt()
    for group in groups.values():  # one mesh at a time: DTensor ops do not mix meshes
        torch.nn.utils.clip_grads_with_norm_(group, max_norm, total)
    return total


def count_params(model):
    total = sum(p.numel() for p in model.parameters())
    embedding = model.tok_embeddings.weight.numel()
    return total, embedding


def flops_per_token(cfg, params, embedding_params, seq_len):
    """Training FLOPs per token: 6 x (parameters that do matmuls) + attention scores and values.

    The attention term 12 * layers * hidden * seq_len counts QK^T and AV, forward and backward,
    over the full (not causally halved) score matrix, as in the PaLM paper and torchtitan.
    """
    return 6 * (params - embedding_params) + 12 * cfg.layers * cfg.hidden * seq_len


# ----------------------------------------------------------------------------------------------
# Training


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="gpt-small", choices=sorted(MODELS),
                   help="named model size (other flags override its fields)")
    p.add_argument("--layers", type=int)
    p.add_argument("--hidden", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--kv-heads", type=int, help="key/value heads (grouped-query attention)")
    p.add_argument("--ffn", type=int, help="SwiGLU hidden size")
    p.add_argument("--vocab", type=int)
    p.add_argument("--seq-len", type=int, help="sequence length (default: the model's)")
    p.add_argument("--batch-size", type=int, default=8, help="sequences per GPU per step")
    p.add_argument("--steps", type=int, default=10, help="training steps in all")
    p.add_argument("--warmup-steps", type=int, default=1,
                   help="first steps left out of the averages printed at the end")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0, help="max gradient norm (0: off)")
    p.add_argument("--parallel", choices=["none", "ddp", "fsdp"],
                   default="ddp" if "WORLD_SIZE" in os.environ else "none",
                   help="data parallelism (default: ddp under torchrun, else none)")
    p.add_argument("--pp", type=int, default=1,
                   help="pipeline-parallel stages (with --parallel fsdp; 1F1B schedule; mesh "
                        "order data x pipeline x tensor)")
    p.add_argument("--microbatches", type=int,
                   help="pipeline microbatches per step (default: --pp); divides --batch-size")
    p.add_argument("--tp", type=int, default=1,
                   help="tensor-parallel degree (with --parallel fsdp: a 2-D mesh of data x tensor "
                        "parallel; consecutive ranks form a tensor-parallel group)")
    p.add_argument("--activation-checkpointing", action="store_true",
                   help="recompute each block's activations in the backward pass")
    p.add_argument("--no-reshard-after-forward", dest="reshard_after_forward",
                   action="store_false", help="FSDP: keep parameters gathered between fwd and bwd")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: smoke test with the gloo backend")
    args = p.parse_args(argv)

    cfg = dataclasses.replace(MODELS[args.model])
    for field in ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len"):
        value = getattr(args, field)
        if value is not None:
            setattr(cfg, field, value)
    if args.heads is not None and args.kv_heads is None and cfg.kv_heads > cfg.heads:
        cfg.kv_heads = cfg.heads
    if cfg.hidden % cfg.heads or cfg.heads % cfg.kv_heads or (cfg.hidden // cfg.heads) % 2:
        p.error(f"hidden {cfg.hidden}, heads {cfg.heads}, kv heads {cfg.kv_heads}: hidden must be "
                "a multiple of heads, heads of kv heads, and the head size even")
    if args.steps < 1:
        p.error("--steps must be at least 1")
    if args.tp < 1 or (args.tp > 1 and args.parallel != "fsdp"):
        p.error("--tp needs --parallel fsdp and a degree of at least 1")
    if args.pp < 1 or (args.pp > 1 and args.parallel != "fsdp"):
        p.error("--pp needs --parallel fsdp and a degree of at least 1")
    if args.pp > cfg.layers:
        p.error(f"--pp {args.pp} is more stages than the model's {cfg.layers} layers")
    if args.microbatches is None:
        args.microbatches = args.pp
    if args.microbatches < 1 or args.batch_size % args.microbatches:
        p.error(f"--microbatches {args.microbatches} must divide --batch-size {args.batch_size}")
    if cfg.heads % args.tp or cfg.kv_heads % args.tp:
        p.error(f"--tp {args.tp} must divide the heads ({cfg.heads}) and kv heads ({cfg.kv_heads})")
    return args, cfg


# Under `phantora run` the GPU computes no values: a loss read back is whatever the buffer held.
SIMULATED = "PHANTORA_HOST" in os.environ


def value_text(tensor, spec):
    """A scalar read back from the GPU, as printed. The read (a host sync, as on a real GPU)
    happens either way; under Phantora its value is not shown."""
    value = tensor.item()
    return "n/a (simulated)" if SIMULATED else format(value, spec)


def log(rank, msg):
    if rank == 0:
        print(msg, flush=True)


def main(argv=None):
    args, cfg = parse_args(argv)
    use_cuda = args.device == "cuda"

    distributed = args.parallel != "none"
    if distributed:
        rank = int(os.environ["RANK"])
        local_rank = int(os.environ["LOCAL_RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
    else:
        rank, local_rank, world_size = 0, 0, 1
    if use_cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    if distributed:
        dist.init_process_group(backend="nccl" if use_cuda else "gloo")

    torch.manual_seed(args.seed)
    if use_cuda:
        torch.backends.cuda.matmul.allow_tf32 = True

    # Build on the meta device: no memory anywhere until the model is materialised.
    with torch.device("meta"):
        model = Transformer(cfg, activation_checkpointing=args.activation_checkpointing)
    n_params, n_embedding = count_params(model)
    fpt = flops_per_token(cfg, n_params, n_embedding, cfg.seq_len)
    log(rank, f"model {args.model}: {n_params / 1e6:.1f}M parameters ({cfg.layers} layers, "
              f"hidden {cfg.hidden}, heads {cfg.heads}, kv heads {cfg.kv_heads}, ffn {cfg.ffn}, "
              f"vocab {cfg.vocab}, seq {cfg.seq_len}); parallel {args.parallel} on {world_size} "
              f"{'GPU' if use_cuda else 'CPU process'}(s); "
              f"tensor parallel {args.tp}, pipeline parallel {args.pp}; "
              f"batch {args.batch_size} per rank; activation checkpointing "
              f"{'on' if args.activation_checkpointing else 'off'}")

    tp, pp = args.tp, args.pp
    if world_size % (tp * pp):
        raise SystemExit(f"--tp {tp} x --pp {pp} does not divide the world of {world_size} ranks")
    dp = world_size // (tp * pp)
    # Mesh (dp, pp, tp): rank = (dp index x pp + stage) x tp + tp index. Tensor parallelism is
    # innermost (inside a host, on NVLink); each data-parallel replica (a whole pipeline) is a
    # contiguous run of ranks, so of hosts: the layout --represent-dp copies (docs/scale.md).
    # Ranks of one tensor-parallel group and of one pipeline see the same data.
    pp_rank, dp_rank = (rank // tp) % pp, rank // (pp * tp)
    pp_group = None
    if args.parallel == "fsdp":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        if tp > 1 or pp > 1:
            mesh_3d = init_device_mesh(device.type, (dp, pp, tp),
                                       mesh_dim_names=("dp", "pp", "tp"))
            if pp > 1:
                first, last = model.keep_stage(pp_rank, pp)
                pp_group = mesh_3d["pp"].get_group()
                log(rank, f"pipeline: {pp} stages, {args.microbatches} microbatches (1F1B); "
                          f"stage 0 holds layers {first}..{last - 1}")
            if tp > 1:
                apply_tensor_parallel(model, mesh_3d["tp"])
            mesh = mesh_3d["dp"]
        else:
            mesh = init_device_mesh(device.type, (world_size,))
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for block in model.layers:
            fully_shard(block, mesh=mesh, mp_policy=mp,
                        reshard_after_forward=args.reshard_after_forward)
        fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=args.reshard_after_forward)
        model.to_empty(device=device)
        model.init_weights()
    else:
        model.to_empty(device=device)
        model.init_weights()
        if args.parallel == "ddp":
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, device_ids=[local_rank] if use_cuda else None)
    model.train()

    schedule = None
    if pp > 1:
        from torch.distributed.pipelining import PipelineStage, Schedule1F1B

        def pipeline_loss(logits, targets):
            return F.cross_entropy(logits.float().flatten(0, 1), targets.flatten(0, 1))

        stage = PipelineStage(model, pp_rank, pp, device, group=pp_group)
        schedule = Schedule1F1B(stage, n_microbatches=args.microbatches, loss_fn=pipeline_loss)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay,
                                  betas=(0.9, 0.95), fused=True)

    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed + 1 + dp_rank)

    def sync():
        if use_cuda:
            torch.cuda.synchronize()

    peak = None
    if use_cuda:
        name = torch.cuda.get_device_name(device)
        tflops = peak_tflops(name)
        peak = tflops * 1e12 if tflops else None
        log(rank, f"device {name}: peak bf16 {f'{tflops:.0f} TFLOPS' if tflops else 'unknown'}")

    # Per GPU: a tensor-parallel group and a pipeline share each data-parallel rank's batch.
    tokens_per_step = args.batch_size * cfg.seq_len / (tp * pp)
    times = []
    sync()
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        data = torch.randint(0, cfg.vocab, (args.batch_size, cfg.seq_len + 1), device=device,
                             generator=gen)
        inputs, targets = data[:, :-1], data[:, 1:]
        if schedule is None:
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                logits = model(inputs)
            loss = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten(0, 1))
            loss.backward()
        else:
            # The schedule runs forward and backward of every microbatch; the loss exists on the
            # last stage only.
            losses = []
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                if pp_rank == 0:
                    schedule.step(inputs)
                elif pp_rank == pp - 1:
                    schedule.step(target=targets, losses=losses)
                else:
                    schedule.step()
            loss = torch.stack(losses).mean() if losses else None
        if args.grad_clip > 0:
            grad_norm = clip_grad_norm(model, args.grad_clip, pp_group)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        sync()
        dt = time.perf_counter() - t0
        times.append(dt)

        tok_s = tokens_per_step / dt
        mfu = f"{100 * fpt * tok_s / peak:.1f}%" if peak else "n/a"
        norm = f" | grad norm {value_text(grad_norm, '.3f')}" if args.grad_clip > 0 else ""
        loss_text = value_text(loss, ".4f") if loss is not None else "on the last stage"
        log(rank, f"step {step:4d}/{args.steps} | loss {loss_text}{norm} | "
                  f"step time {dt * 1e3:.1f} ms | tokens/s/GPU {tok_s:,.0f} | MFU {mfu}")

    measured = times[args.warmup_steps:] if len(times) > args.warmup_steps else times
    avg = sum(measured) / len(measured)
    tok_s = tokens_per_step / avg
    mfu = f"{100 * fpt * tok_s / peak:.1f}%" if peak else "n/a"
    log(rank, f"average over {len(measured)} step(s): step time {avg * 1e3:.1f} ms | "
              f"tokens/s/GPU {tok_s:,.0f} | tokens/s {tok_s * world_size:,.0f} | MFU {mfu}")

    if use_cuda:
        mem = torch.cuda.max_memory_allocated(device)
        reserved = torch.cuda.max_memory_reserved(device)
        print(f"rank {rank}: peak memory allocated {mem / 2**30:.2f} GiB, "
              f"reserved {reserved / 2**30:.2f} GiB", flush=True)

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
