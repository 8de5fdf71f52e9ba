#!/usr/bin/env python3
"""A suite whose dependency is missing must not vanish silently (tests/suites.cmake): a scratch
configuration of this source tree with the PyTorch environment pointed at a path that does not
exist must, under CI=true, fail and say which suite is missing and how to install what it needs;
without CI it succeeds and records the suite as missing in <build>/tests/suites.txt, next to the
suites it did register.

Usage: suites_check.py CMAKE SOURCE_DIR SCRATCH_DIR. Python 3.11+ standard library only.
"""
import os
import shutil
import subprocess
import sys

cmake, source, scratch = sys.argv[1:4]
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def configure(build, ci):
    shutil.rmtree(build, ignore_errors=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "PHANTORA_REQUIRE_SUITES", "PHANTORA_TORCH_VENV")}
    env["PHANTORA_TORCH_VENV"] = bogus
    if ci:
        env["CI"] = "true"
    cmd = [cmake, "-S", source, "-B", build, "-DPHANTORA_BUILD_BENCH=OFF"]
    print("$", ("CI=true " if ci else ""), f"PHANTORA_TORCH_VENV={bogus}", " ".join(cmd),
          flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


bogus = os.path.join(scratch, "no-such-venv")
python = os.path.join(bogus, "bin", "python")

ci = configure(os.path.join(scratch, "ci"), ci=True)
print(ci.stderr[-3000:])
check(ci.returncode != 0, f"CI=true: the configuration fails (exit {ci.returncode})")
check("test suites missing" in ci.stderr, "CI=true: the error says test suites are missing")
check(f"pytorch: no PyTorch environment: {python} does not exist" in ci.stderr,
      "CI=true: it names the pytorch suite and the path it looked for")
check("to install: scripts/setup-torch.sh" in ci.stderr, "CI=true: it says how to install it")

dev = configure(os.path.join(scratch, "dev"), ci=False)
check(dev.returncode == 0, f"without CI: the configuration succeeds (exit {dev.returncode})")
if dev.returncode != 0:
    print(dev.stderr[-3000:])
suites_txt = os.path.join(scratch, "dev", "tests", "suites.txt")
rows = {}
if check(os.path.exists(suites_txt), "without CI: suites.txt is written"):
    with open(suites_txt, encoding="utf-8") as f:
        for line in f.read().splitlines():
            name, state, detail = line.split("\t")
            rows[name] = (state, detail)
    print(rows)
check(rows.get("pytorch", ("",))[0] == "missing" and python in rows["pytorch"][1],
      "without CI: pytorch is recorded as missing, with the path")
check(all(rows.get(s, ("",))[0] == "registered"
          for s in ("netmodel", "kernels-db", "simcore", "tools")),
      "without CI: the unit suites are recorded as registered")
shutil.rmtree(scratch, ignore_errors=True)

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("a missing suite fails CI and is recorded otherwise")
