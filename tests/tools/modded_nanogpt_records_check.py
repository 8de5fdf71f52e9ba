#!/usr/bin/env python3
"""The table of modded-nanogpt records (examples/modded-nanogpt/records.txt) is what its two
scripts read: every row has a name, a 40-digit commit, a log path and a torch release whose
pinned requirements exist and pin that torch; names are unique; and both scripts refuse a name
the table lacks, with exit status 2, listing the names it has. Usage: check.py REPO_ROOT"""
import os
import re
import sys

from named_table import Checks, refuses_unknown_names, table_rows

root = sys.argv[1]
here = os.path.join(root, "examples", "modded-nanogpt")
checks = Checks()
expect = checks.expect

rows = table_rows(os.path.join(here, "records.txt"))
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
refuses_unknown_names(checks, (os.path.join(here, "run.sh"),
                               os.path.join(root, "scripts", "setup-modded-nanogpt.sh")), names, env)
checks.finish("modded-nanogpt records ok")
