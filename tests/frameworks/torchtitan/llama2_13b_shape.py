"""The `llama2-13b` preset's model (examples/torchtitan/llama2_13b.py) is Llama 2 13B.

Built on the meta device (no memory, no GPU), its parameters must add up to Llama 2 13B's, by
hand from the Llama 2 paper's shape (Touvron et al., arXiv 2307.09288: dim 5120, 40 layers, 40
heads, no grouped keys/values, SwiGLU, vocabulary 32,000, untied output layer):
  2 x vocab x dim                     embedding and output layer
  + layers x (4 x dim^2               Q, K, V, O projections
              + 3 x dim x hidden      SwiGLU w1, w2, w3, hidden = 8/3 x dim rounded up to 256
              + 2 x dim)              two RMSNorm weights
  + dim                               final RMSNorm
= 13,015,864,320, the parameter count of the released 13B checkpoint.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
from examples.torchtitan import llama2_13b  # noqa: E402

dim, layers, vocab = 5120, 40, 32000
hidden = 256 * -(-int(8 * dim / 3) // 256)
expected = 2 * vocab * dim + layers * (4 * dim * dim + 3 * dim * hidden + 2 * dim) + dim
assert hidden == 13824, hidden
assert expected == 13_015_864_320, expected

config = llama2_13b.llama2_13b()
with torch.device("meta"):
    model = config.model_spec.model.build()
params = sum(p.numel() for p in model.parameters())
print(f"llama2-13b preset: {params:,} parameters, expected {expected:,}")
if params != expected:
    sys.exit(f"FAIL: the preset's model has {params:,} parameters, Llama 2 13B {expected:,}")
seq, batch = config.training.seq_len, config.training.local_batch_size
if (seq, batch) != (4096, 2):
    sys.exit(f"FAIL: local batch {batch} x {seq}, TorchTitan's 2024 llama2_13b.toml has 2 x 4096")
print("PASS")
