"""Train a Hugging Face Llama with DeepSpeed ZeRO (stage 1, 2 or 3) on synthetic tokens.

An ordinary DeepSpeed training script: `transformers.LlamaForCausalLM` built from a config (no
weights are downloaded), a DeepSpeed JSON config (configs/zero{1,2,3}.json: bf16, AdamW, gradient
clipping), random token ids as data, `engine.backward` / `engine.step`. Nothing in it knows about
Phantora; it runs unchanged on a real cluster.

    torchrun --nproc-per-node 8 train.py --model llama3-8b --config configs/zero3.json
    deepspeed --num_gpus 8 train.py --model llama3-8b --config configs/zero3.json

The model is never materialised in host memory: under ZeRO-3 it is built inside
`deepspeed.zero.Init` (each parameter is partitioned across the data-parallel ranks as soon as
its module is constructed), otherwise directly on the GPU in bf16.

Rank 0 prints one line per optimizer step, `step N/M | loss L | step time X ms | tokens/s/GPU T |
MFU U` (a step is `gradient_accumulation_steps` micro-batches), and a summary; every rank prints
its peak GPU memory at the end.
"""

import argparse
import dataclasses
import json
import os
import time

import torch
import torch.distributed as dist


@dataclasses.dataclass
class ModelSize:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    seq_len: int
    rope_theta: float = 500000.0


# Named sizes (untied input and output embeddings, as Llama 3).
MODELS = {
    "tiny": ModelSize(layers=2, hidden=256, heads=4, kv_heads=2, ffn=688, vocab=4096,
                      seq_len=256),  # ~4.3M: tests
    "small": ModelSize(layers=8, hidden=1024, heads=16, kv_heads=4, ffn=2816, vocab=32000,
                       seq_len=1024),  # ~0.16B
    "llama3-1b": ModelSize(layers=16, hidden=2048, heads=32, kv_heads=8, ffn=8192, vocab=128256,
                           seq_len=8192),  # ~1.5B
    "llama3-8b": ModelSize(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336,
                           vocab=128256, seq_len=8192),  # ~8.0B
    "llama3-70b": ModelSize(layers=80, hidden=8192, heads=64, kv_heads=8, ffn=28672,
                            vocab=128256, seq_len=8192),  # ~70.6B
}

# Dense bf16 tensor-core peak (TFLOPS, without sparsity) by device name, for MFU.
PEAK_BF16_TFLOPS = [("GB200", 2500.0), ("B200", 2250.0), ("H200", 989.0), ("H100 PCIe", 756.0),
                    ("H100 NVL", 835.0), ("H100", 989.0), ("H800", 989.0), ("A100", 312.0)]


def peak_tflops(device_name):
    return next((t for key, t in PEAK_BF16_TFLOPS if key in device_name), None)


def parameter_counts(size):
    """(all parameters, embedding parameters) of the Llama model `size` describes, from its shape
    alone (so the count is right under ZeRO-3, where a rank holds only a partition)."""
    head_dim = size.hidden // size.heads
    attn = size.hidden * head_dim * (2 * size.heads + 2 * size.kv_heads)
    mlp = 3 * size.hidden * size.ffn
    per_layer = attn + mlp + 2 * size.hidden
    embedding = size.vocab * size.hidden
    return size.layers * per_layer + 2 * embedding + size.hidden, embedding


def flops_per_token(size, params, embedding_params, seq_len):
    """Training FLOPs per token: 6 x (parameters that do matmuls: all but the input embedding)
    + attention scores and values over the full score matrix (PaLM's convention)."""
    return 6 * (params - embedding_params) + 12 * size.layers * size.hidden * seq_len


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="small", choices=sorted(MODELS))
    p.add_argument("--layers", type=int, help="override the model's layer count")
    p.add_argument("--seq-len", type=int, help="sequence length (default: the model's)")
    p.add_argument("--config", default=os.path.join(here, "configs", "zero3.json"),
                   help="DeepSpeed JSON config")
    p.add_argument("--zero-stage", type=int, choices=(0, 1, 2, 3),
                   help="override the config's zero_optimization.stage")
    p.add_argument("--micro-batch", type=int, help="override train_micro_batch_size_per_gpu")
    p.add_argument("--grad-accum", type=int, help="override gradient_accumulation_steps")
    p.add_argument("--steps", type=int, default=5, help="optimizer steps")
    p.add_argument("--warmup-steps", type=int, default=1,
                   help="first steps left out of the averages printed at the end")
    p.add_argument("--activation-checkpointing", action="store_true",
                   help="recompute each decoder layer in backward (HF gradient checkpointing)")
    # Set by DeepSpeed's launcher (unless --no_local_rank); torchrun sets LOCAL_RANK instead.
    p.add_argument("--local_rank", "--local-rank", type=int,
                   default=int(os.environ.get("LOCAL_RANK", 0)))
    return p.parse_args()


def load_ds_config(args):
    with open(args.config, encoding="utf-8") as f:
        cfg = json.load(f)
    if args.zero_stage is not None:
        cfg.setdefault("zero_optimization", {})["stage"] = args.zero_stage
    if args.micro_batch is not None:
        cfg["train_micro_batch_size_per_gpu"] = args.micro_batch
    if args.grad_accum is not None:
        cfg["gradient_accumulation_steps"] = args.grad_accum
    # train_batch_size is derived by DeepSpeed from the other two and the world size.
    cfg.pop("train_batch_size", None)
    return cfg


def build_model(size, ds_config, activation_checkpointing):
    import deepspeed
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=size.vocab, hidden_size=size.hidden,
                         intermediate_size=size.ffn, num_hidden_layers=size.layers,
                         num_attention_heads=size.heads, num_key_value_heads=size.kv_heads,
                         max_position_embeddings=size.seq_len, rope_theta=size.rope_theta,
                         tie_word_embeddings=False, use_cache=False, attn_implementation="sdpa")
    stage = ds_config.get("zero_optimization", {}).get("stage", 0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        if stage == 3:
            # Every parameter is partitioned over the data-parallel ranks as soon as the module
            # that owns it is built: no rank ever holds the whole model.
            with deepspeed.zero.Init(config_dict_or_path=ds_config, dtype=torch.bfloat16):
                model = LlamaForCausalLM(config)
        else:
            with torch.device("cuda"):
                model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    if activation_checkpointing:
        # transformers 5 renamed gradient_checkpointing_enable (still there, deprecated).
        kwargs = {"use_reentrant": False}
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    return model


def main():
    args = parse_args()
    size = MODELS[args.model]
    if args.layers:
        size = dataclasses.replace(size, layers=args.layers)
    if args.seq_len:
        size = dataclasses.replace(size, seq_len=args.seq_len)

    import deepspeed

    torch.cuda.set_device(args.local_rank)
    deepspeed.init_distributed(dist_backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", args.local_rank)

    ds_config = load_ds_config(args)
    model = build_model(size, ds_config, args.activation_checkpointing)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                           config=ds_config)

    n_params, n_embedding = parameter_counts(size)
    fpt = flops_per_token(size, n_params, n_embedding, size.seq_len)
    micro, accum = engine.train_micro_batch_size_per_gpu(), engine.gradient_accumulation_steps()
    tokens_per_step = micro * accum * size.seq_len  # per GPU
    name = torch.cuda.get_device_name(device)
    tflops = peak_tflops(name)
    if rank == 0:
        print(f"model {args.model}: {n_params / 1e9:.3f}B parameters, {size.layers} layers, "
              f"seq {size.seq_len} | ZeRO stage {engine.zero_optimization_stage()} | "
              f"{world} GPUs ({name}) | micro-batch {micro} x {accum} accumulation | "
              f"optimizer {type(engine.optimizer).__name__} over "
              f"{type(engine.basic_optimizer).__name__}", flush=True)

    gen = torch.Generator(device=device)
    gen.manual_seed(1234 + rank)
    times = []
    torch.cuda.synchronize(device)
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        for _ in range(accum):
            tokens = torch.randint(0, size.vocab, (micro, size.seq_len), device=device,
                                   generator=gen)
            loss = engine(input_ids=tokens, labels=tokens).loss
            engine.backward(loss)
            engine.step()
        torch.cuda.synchronize(device)
        dt = time.perf_counter() - t0
        times.append(dt)
        tok_s = tokens_per_step / dt
        mfu = f"{100 * fpt * tok_s / (tflops * 1e12):.1f}%" if tflops else "n/a"
        norm = engine.get_global_grad_norm()
        norm = f" | grad norm {float(norm):.3f}" if norm is not None else ""
        if rank == 0:
            print(f"step {step}/{args.steps} | loss {loss.item():.4f}{norm} | "
                  f"step time {dt * 1e3:.2f} ms | tokens/s/GPU {tok_s:,.0f} | MFU {mfu}",
                  flush=True)

    measured = times[args.warmup_steps:] if len(times) > args.warmup_steps else times
    avg = sum(measured) / len(measured)
    tok_s = tokens_per_step / avg
    mfu = f"{100 * fpt * tok_s / (tflops * 1e12):.1f}%" if tflops else "n/a"
    if rank == 0:
        print(f"average over {len(measured)} step(s): step time {avg * 1e3:.2f} ms | "
              f"tokens/s/GPU {tok_s:,.0f} | tokens/s {tok_s * world:,.0f} | MFU {mfu}",
              flush=True)
    print(f"rank {rank}: peak memory allocated "
          f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB, reserved "
          f"{torch.cuda.max_memory_reserved(device) / 2**30:.2f} GiB", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
