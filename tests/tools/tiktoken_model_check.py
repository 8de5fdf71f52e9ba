#!/usr/bin/env python3
"""examples/torchtitan/published/make_tiktoken_model.py: the file TorchTitan of 2024 sizes
Llama 3's vocabulary from. By hand: TorchTitan's TikTokenizer takes len(ranks) base tokens and
adds 256 reserved specials, so 128,000 ranks give Llama 3's 128,256-entry embedding and output
layer. tiktoken's load_tiktoken_bpe reads one "base64(token) rank" per line and needs every
token distinct; any text encodes only if all 256 single bytes are ranks. A second run keeps the
file, and no half-written file is left behind.
"""
import base64
import os
import subprocess
import sys
import tempfile

script = os.path.join(sys.argv[1], "examples/torchtitan/published/make_tiktoken_model.py")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "tiktoken", "tokenizer.model")
    subprocess.run([sys.executable, script, out], check=True)
    ranks = {}
    with open(out, encoding="ascii") as f:
        for line in f:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    assert len(ranks) == 128_000, f"{len(ranks)} distinct tokens, not 128,000"
    assert sorted(ranks.values()) == list(range(128_000)), "ranks are not 0..127,999"
    assert all(bytes([b]) in ranks for b in range(256)), "a single byte is missing"
    assert os.listdir(os.path.dirname(out)) == ["tokenizer.model"], os.listdir(os.path.dirname(out))
    before = os.stat(out).st_mtime_ns
    again = subprocess.run([sys.executable, script, out], check=True, capture_output=True, text=True)
    assert "using" in again.stdout and os.stat(out).st_mtime_ns == before, "the file was rewritten"
print("tiktoken model: 128,000 distinct ranks, every byte, kept on a second run")
