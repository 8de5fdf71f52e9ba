"""Writes token shards in the layout modded-nanogpt's data loader reads (the FineWeb 10B shards of
its data/cached_fineweb10B.py), with pseudo-random GPT-2 token ids instead of text, so that a
run needs no download. What the tokens say does not matter to the simulation, only that every
step gets its batch.

    python examples/modded-nanogpt/make_fineweb_shards.py DIR

writes DIR/fineweb_train_000001.bin, fineweb_train_000002.bin and fineweb_val_000000.bin: a
header of 256 int32 (magic 20240520, version 1, the token count), then the tokens as uint16.
Each holds 2,097,152 + 1 tokens: four steps of 8 ranks x 64 sequences x 1,024 tokens (the loader
needs one, and cycles through the files). Deterministic (fixed seed); an existing file is kept.
"""
import os
import random
import struct
import sys
from array import array

MAGIC, VERSION = 20240520, 1
TOKENS = 4 * 8 * 64 * 1024 + 1
GPT2_VOCAB = 50257
NAMES = ("fineweb_train_000001.bin", "fineweb_train_000002.bin", "fineweb_val_000000.bin")


def write_shard(path, seed):
    rng = random.Random(seed)
    tokens = array("H", (rng.randrange(GPT2_VOCAB) for _ in range(TOKENS)))
    if sys.byteorder != "little":
        tokens.byteswap()
    header = struct.pack("<256i", MAGIC, VERSION, TOKENS, *([0] * 253))
    partial = path + ".partial"
    with open(partial, "wb") as f:
        f.write(header)
        tokens.tofile(f)
    os.replace(partial, path)


def main(out):
    os.makedirs(out, exist_ok=True)
    for seed, name in enumerate(NAMES):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            write_shard(path, seed)
    print(f"make_fineweb_shards: {len(NAMES)} shards of {TOKENS:,} tokens in {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} DIR")
    main(sys.argv[1])
