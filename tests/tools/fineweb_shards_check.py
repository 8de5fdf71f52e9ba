#!/usr/bin/env python3
"""The token shards examples/modded-nanogpt/make_fineweb_shards.py writes are what the record's
data loader accepts (its _peek_data_shard and _load_data_shard): a header of 256 little-endian
int32 with magic 20240520, version 1 and the token count, then that many uint16 tokens, each a
GPT-2 id (below 50,257), at least one step of 8 ranks x 64 x 1,024 tokens + 1 per shard, and the
same bytes on a second run.

Usage: fineweb_shards_check.py REPO_ROOT
"""
import hashlib
import os
import struct
import subprocess
import sys
import tempfile
from array import array


def main(root):
    script = os.path.join(root, "examples", "modded-nanogpt", "make_fineweb_shards.py")
    failures = []
    digests = []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, script, out], check=True, capture_output=True)
            names = sorted(os.listdir(out))
            if names != ["fineweb_train_000001.bin", "fineweb_train_000002.bin",
                         "fineweb_val_000000.bin"]:
                failures.append(f"shards {names}")
            digest = hashlib.sha256()
            for name in names:
                with open(os.path.join(out, name), "rb") as f:
                    data = f.read()
                digest.update(data)
                magic, version, count = struct.unpack_from("<3i", data)
                tokens = array("H", data[1024:])
                if sys.byteorder != "little":
                    tokens.byteswap()
                if (magic, version) != (20240520, 1):
                    failures.append(f"{name}: header {magic}, {version}")
                if count != len(tokens):
                    failures.append(f"{name}: header says {count} tokens, file holds {len(tokens)}")
                if count < 8 * 64 * 1024 + 1:
                    failures.append(f"{name}: {count} tokens, less than one step")
                if max(tokens) >= 50257:
                    failures.append(f"{name}: token {max(tokens)} is not a GPT-2 id")
            digests.append(digest.hexdigest())
    if digests[0] != digests[1]:
        failures.append("two runs wrote different shards")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print("fineweb shards ok")


if __name__ == "__main__":
    main(sys.argv[1])
