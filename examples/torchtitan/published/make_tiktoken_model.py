"""Writes a tiktoken BPE file with Llama 3's vocabulary size, for TorchTitan of 2024.

    python make_tiktoken_model.py OUT_FILE

TorchTitan of December 2024 sizes the model's embedding and output layer from its tokenizer
(`model_config.vocab_size = tokenizer.n_words` in train.py): the 128,000 ranks of the BPE file
plus its 256 reserved special tokens. Llama 3's own tokenizer.model is gated on the Hugging Face
hub, which Phantora's machines do not reach; this file has the same number of ranks, so the
model gets Llama 3's 128,256-entry vocabulary and the output layer its real GEMM shapes. What
the ranks encode does not matter to the simulation: the 256 single bytes (so that any text
encodes) followed by byte pairs and then triples, in a fixed order. Deterministic; an existing
OUT_FILE is kept.
"""
import base64
import itertools
import os
import sys

RANKS = 128_000  # Llama 3's base vocabulary (n_words 128,256 with the reserved specials)


def tokens():
    singles = [bytes([b]) for b in range(256)]
    yield from singles
    # pairs and triples of printable ASCII first, the pieces running text merges into
    printable = [bytes([b]) for b in range(32, 127)]
    yield from (a + b for a, b in itertools.product(printable, repeat=2))
    yield from (a + b + c for a, b, c in itertools.product(printable, repeat=3))


def main(out):
    if os.path.exists(out):
        print(f"make_tiktoken_model: using {out}")
        return
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        for rank, tok in enumerate(itertools.islice(tokens(), RANKS)):
            f.write(f"{base64.b64encode(tok).decode()} {rank}\n")
    os.replace(tmp, out)  # never leave a half-written file behind
    print(f"make_tiktoken_model: wrote {out} ({RANKS} ranks)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
