#!/usr/bin/env python3
"""Token files in llm.c's format for examples/llmc/run.sh: a header of 256 int32 (magic
20240520, version 1, token count), then uint16 tokens, here drawn from GPT-2's 50,257. The
simulator does not compute values, so any tokens time the same; the files only need to hold
enough of them for a step (8 processes x B x T + 1); llm.c starts a file over when it
reaches its end.

Usage: make_tokens.py DIR   (writes DIR/train.bin and DIR/val.bin unless both exist)"""
import array
import os
import random
import struct
import sys

SIZES = {"train.bin": 2_000_000, "val.bin": 1_000_000}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(0)
    for name, count in SIZES.items():
        path = os.path.join(out, name)
        if os.path.exists(path) and os.path.getsize(path) == 1024 + 2 * count:
            continue
        header = [0] * 256
        header[0], header[1], header[2] = 20240520, 1, count
        tokens = array.array("H", (rng.randrange(50257) for _ in range(count)))
        with open(path + ".partial", "wb") as f:
            f.write(struct.pack("256i", *header))
            f.write(tokens.tobytes())
        os.replace(path + ".partial", path)


if __name__ == "__main__":
    main()
