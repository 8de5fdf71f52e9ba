# A TorchTitan config registry (`--module examples.torchtitan.llama2_13b --config llama2_13b`)
# for the Llama 2 13B shape of TorchTitan's own published A100 table (its docs/performance.md of
# 2024-04, removed in TorchTitan 0.3, which no longer ships Llama 2): dim 5120, 40 layers, 40
# heads without grouped keys/values, SwiGLU hidden 13824 (8/3 x dim rounded up to 256), vocabulary
# 32,000, RoPE theta 10,000 (Touvron et al., "Llama 2", arXiv 2307.09288, and TorchTitan's 2024
# `llama2_13b.toml`: local batch 2 x 4,096 tokens, selective op AC). Built from TorchTitan 0.3's
# own Llama 3 pieces (the same blocks; 0.3 fuses the Q/K/V projections and uses FlexAttention).
from torchtitan.components.loss import ChunkedLossWrapper, CrossEntropyLoss
from torchtitan.components.optimizer import default_adamw
from torchtitan.config import TrainingConfig
from torchtitan.distributed.activation_checkpoint import SelectiveAC
from torchtitan.distributed.pipeline_parallel import pipeline_llm
from torchtitan.hf_datasets.text_datasets import HuggingFaceTextDataLoader
from torchtitan.models.common import ComplexRoPE, Embedding, Linear, RMSNorm, compute_ffn_hidden_dim
from torchtitan.models.common.config_utils import decoder_vocab_size
from torchtitan.models.llama3 import (
    _EMBEDDING_INIT,
    _NORM_INIT,
    _build_llama3_layers,
    _output_linear_init,
    parallelize_llama,
)
from torchtitan.models.llama3.model import Llama3Model
from torchtitan.models.llama3.state_dict_adapter import Llama3StateDictAdapter
from torchtitan.protocols.model_spec import ModelSpec
from torchtitan.trainer import Trainer

DIM, LAYERS, HEADS, VOCAB, SEQ = 5120, 40, 40, 32000, 4096


def _model() -> Llama3Model.Config:
    return Llama3Model.Config(
        dim=DIM,
        vocab_size=VOCAB,
        tok_embeddings=Embedding.Config(
            num_embeddings=VOCAB, embedding_dim=DIM, param_init=_EMBEDDING_INIT),
        norm=RMSNorm.Config(normalized_shape=DIM, param_init=_NORM_INIT),
        lm_head=Linear.Config(
            in_features=DIM, out_features=VOCAB, param_init=_output_linear_init(DIM)),
        layers=_build_llama3_layers(
            n_layers=LAYERS,
            dim=DIM,
            n_heads=HEADS,
            n_kv_heads=HEADS,
            hidden_dim=compute_ffn_hidden_dim(DIM, multiple_of=256),
            rope=ComplexRoPE.Config(dim=DIM // HEADS, max_seq_len=SEQ, theta=10000),
            attn_backend="flex",
        ),
    )


def llama2_13b() -> Trainer.Config:
    spec = ModelSpec(
        name="llama3",
        flavor="llama2-13B",
        model=_model(),
        parallelize_fn=parallelize_llama,
        pipelining_fn=pipeline_llm,
        post_optimizer_build_fn=None,
        state_dict_adapter=Llama3StateDictAdapter,
    )
    return Trainer.Config(
        loss=ChunkedLossWrapper.Config(
            loss_fn=CrossEntropyLoss.Config(global_vocab_size=decoder_vocab_size(spec))),
        model_spec=spec,
        optimizer=default_adamw(lr=3e-4),
        training=TrainingConfig(local_batch_size=2, seq_len=SEQ, steps=1000),
        dataloader=HuggingFaceTextDataLoader.Config(dataset="c4"),
        activation_checkpoint=SelectiveAC.Config(),
    )
