#!/usr/bin/env python3
"""The table of modded-nanogpt records (examples/modded-nanogpt/records.txt) is what its two
scripts read: every row has a name, a 40-digit commit, a log path and a torch release whose
pinned requirements exist and pin that torch; names are unique; and both scripts refuse a name
the table lacks, with exit status 2, listing the names it has. Usage: check.py REPO_ROOT"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
here = os.path.join(root, "examples", "modded-nanogpt")
failures = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


rows = []
with open(os.path.join(here, "records.txt")) as f:
    for line in f:
        if line.strip() and not line.startswith("#"):
            rows.append(line.split())
expect(len(rows) >= 2, f"the table has rows ({len(rows)})")
names = [r[0] for r in rows]
expect(len(set(names)) == len(names), "record names are unique")
for r in rows:
    expect(len(r) == 4, f"{r[0]}: four fields (name, commit, log, torch)")
    if len(r) != 4:
        continue
    name, commit, log, torch = r
    expect(re.fullmatch(r"[0-9a-f]{40}", commit) is not None, f"{name}: a full commit hash")
    expect(log.startswith("records/") and log.endswith(".txt"), f"{name}: a log under records/")
    req = os.path.join(here, f"requirements-{torch}.txt")
    pinned = open(req).read() if os.path.exists(req) else ""
    expect(re.search(rf"^torch=={re.escape(torch)}$", pinned, re.M) is not None,
           f"{name}: requirements-{torch}.txt pins torch=={torch}")

env = dict(os.environ, MODDED_NANOGPT_DIR=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                        "phantora-no-such-dir"))
for script in (os.path.join(root, "examples", "modded-nanogpt", "run.sh"),
               os.path.join(root, "scripts", "setup-modded-nanogpt.sh")):
    p = subprocess.run(["bash", script, "no-such-record"], capture_output=True, text=True, env=env)
    expect(p.returncode == 2, f"{os.path.basename(script)} refuses an unknown record with status 2 "
           f"(got {p.returncode})")
    expect("no-such-record" in p.stderr and all(n in p.stderr for n in names),
           f"{os.path.basename(script)} names the record and lists the table's names")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("modded-nanogpt records ok")
