#!/usr/bin/env python3
"""examples/llmc (docs/accuracy.md, "llm.c's GPT-2 and GPT-3 on 8 A100") without llm.c or a GPU:

- the table (scripts.txt): every row a name, a 40-digit commit, a script under scripts/ and a
  published step time; names unique; run.sh and scripts/setup-llmc.sh refuse a name it lacks
  with status 2, listing its names;
- run.sh passes the published script's train_gpt2cu arguments on unchanged but for its three
  stated changes (-x STEPS, for -i and -j the patterns of the token shards
  examples/modded-nanogpt/make_fineweb_shards.py writes, which tools.fineweb_shards checks, and
  no -o, -n or -y), under
  `mpirun --oversubscribe -np 8` on 8 `a100-80gb` of one host: a stand-in `phantora` prints
  what it was asked to run, and a stand-in build holds a script written like llm.c's.

Usage: llmc_runs_check.py REPO_ROOT"""
import glob
import os
import re
import stat
import subprocess
import sys
import tempfile

from named_table import Checks, refuses_unknown_names, table_rows

root = sys.argv[1]
here = os.path.join(root, "examples", "llmc")
checks = Checks()
expect = checks.expect

rows = table_rows(os.path.join(here, "scripts.txt"))
expect(len(rows) >= 1, f"the table has rows ({len(rows)})")
names = [r[0] for r in rows]
expect(len(set(names)) == len(names), "names are unique")
for r in rows:
    expect(len(r) == 4, f"{r[0]}: four fields (name, commit, script, published)")
    if len(r) == 4:
        expect(re.fullmatch(r"[0-9a-f]{40}", r[1]) is not None, f"{r[0]}: a full commit hash")
        expect(re.fullmatch(r"scripts/run_\w+\.sh", r[2]) is not None, f"{r[0]}: a script")
        expect(re.fullmatch(r"~[0-9.]+m?s/iter", r[3]) is not None, f"{r[0]}: a step time")

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, LLMC_DIR=tmp)
    refuses_unknown_names(checks, (os.path.join(here, "run.sh"),
                                   os.path.join(root, "scripts", "setup-llmc.sh")), names, env)

    # A build as setup-llmc.sh leaves it, with a script laid out as llm.c's are.
    name, commit, script, _ = rows[0]
    build = os.path.join(tmp, f"llmc-{commit}")
    os.makedirs(os.path.join(build, "scripts"))
    with open(os.path.join(build, script), "w") as f:
        f.write('make train_gpt2cu USE_CUDNN=1\nwhile true; do\n'
                '    mpirun -np 8 ./train_gpt2cu \\\n'
                '                -i "dev/data/fineweb10B/fineweb_train_*.bin" \\\n'
                '                -j "dev/data/fineweb10B/fineweb_val_*.bin" \\\n'
                '                -o $out_dir \\\n'
                '                -v 250 -s 20000 -g 144 \\\n'
                '                -b 64 -t 1024 \\\n'
                '                -n 5000 \\\n'
                '                -y 1 \\\n'
                '                -e "d12"\n'
                '    sleep 1\ndone\n')
    binary = os.path.join(build, "train_gpt2cu")
    stand_in = os.path.join(tmp, "phantora")
    for path in (binary, stand_in):
        with open(path, "w") as f:
            f.write('#!/bin/sh\nprintf "%s\\n" "$@"\n')
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    p = subprocess.run(["bash", os.path.join(here, "run.sh"), name], capture_output=True,
                       text=True, env=dict(env, PHANTORA=stand_in, STEPS="4",
                                           OUT=os.path.join(tmp, "out")))
    expect(p.returncode == 0, f"run.sh runs the stand-in (status {p.returncode}: {p.stderr})")
    argv = p.stdout.split("\n")
    cmd = argv[argv.index("--") + 1:] if "--" in argv else []
    shards = os.path.join(tmp, "llmc-shards")
    train, val = (os.path.join(shards, f"fineweb_{s}_*.bin") for s in ("train", "val"))
    want = ["mpirun", "--oversubscribe", "-np", "8", binary, "-v", "250", "-s", "20000",
            "-g", "144", "-b", "64", "-t", "1024", "-e", "d12", "-i", train, "-j", val,
            "-x", "4", ""]
    expect(cmd == want, f"the command run: {cmd}")
    # llm.c globs the patterns itself: each names shards that exist.
    expect(len(glob.glob(train)) >= 1 and len(glob.glob(val)) >= 1,
           f"the patterns name shards ({glob.glob(train)}, {glob.glob(val)})")
    for flag in ("--hosts 1", "--gpus-per-host 8", "--gpu a100-80gb", "--cpu-time model"):
        expect(flag in " ".join(argv), f"phantora run {flag}")

checks.finish("llm.c runs ok")
