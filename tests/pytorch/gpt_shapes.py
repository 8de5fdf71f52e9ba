"""The example GPT's named sizes (examples/gpt.py, MODELS) and what follows from them by hand:
parameter count, parameter tensors, buffers. Written out here rather than imported, so that the
tests' expectations do not come from the code under test.

gpt.py's model: untied embedding and output layer (V x h each), and per block RMSNorm weights
(h) before attention and feed-forward, attention projections wq, wo (h x h) and wk, wv
(h x kv_heads * head_dim), SwiGLU w1, w3 (h -> ffn) and w2 (ffn -> h), no biases; a final
RMSNorm; the rotary tables cos and sin (seq x head_dim, fp32) as buffers.
"""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Dims:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    seq: int


MODELS = {
    "gpt-tiny": Dims(layers=2, hidden=128, heads=4, kv_heads=2, ffn=384, vocab=1024, seq=128),
    "gpt-small": Dims(layers=12, hidden=768, heads=12, kv_heads=12, ffn=2048, vocab=50304,
                      seq=1024),
}


class Shape:
    def __init__(self, d):
        self.layers, self.seq, self.vocab, self.hidden = d.layers, d.seq, d.vocab, d.hidden
        h, f, v = d.hidden, d.ffn, d.vocab
        hd = h // d.heads
        kv = d.kv_heads * hd
        block = h * h + 2 * h * kv + h * h + 3 * h * f + 2 * h
        self.block_params = block
        self.params = d.layers * block + 2 * v * h + h
        # Nine tensors a block (two norms, four attention, three feed-forward), then the
        # embedding, the final norm and the output layer.
        self.tensors = 9 * d.layers + 3
        # Parameters that multiply matrices: all but the embedding (a lookup) and the norms.
        self.matmul_params = self.params - v * h - (2 * d.layers + 1) * h
        self.buffer_elements = 2 * d.seq * hd
        # First dimension of every parameter tensor (nn.Linear's weight is out x in): what FSDP2
        # shards.
        self.first_dims = [h, h, kv, kv, h, f, f, h, h, v, v]
