#!/usr/bin/env python3
"""`phantora sweep` end to end: an all-reduce benchmark (nccl_perf) over 1, 2 and 4 hosts of
2 H100, at two NIC bandwidths, with one point made to fail; checks the table, the plots and
that the figures behave as the network model says they must.

Usage: sweep_check.py PHANTORA NCCL_PERF WORKDIR. Python 3.11+ standard library only.
"""
import csv
import os
import shutil
import subprocess
import sys

phantora, nccl_perf, work = sys.argv[1:4]
out = os.path.join(work, "sweep")
shutil.rmtree(out, ignore_errors=True)
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


# The point with 4 hosts and slow NICs fails on purpose (exit 7): the sweep must go on.
workload = (f"test {{hosts}} -ne 4 -o '{{nic}}' != 5 || exit 7; "
            f"exec {nccl_perf} -b 64M -e 64M -n 5 -w 1 -o all_reduce")
proc = subprocess.run([phantora, "sweep", "--hosts", "1,2,4", "--gpus-per-host", "2",
                       "--nic-gbytes-per-s", "48.5,5", "--parallel", "2", "--cpu-time", "model",
                       "--out", out, "--", "sh", "-c", workload],
                      capture_output=True, text=True, timeout=600)
print(proc.stdout)
print(proc.stderr)
check(proc.returncode == 1, f"a failed point makes the sweep exit 1 (got {proc.returncode})")
rows = list(csv.DictReader(open(os.path.join(out, "summary.csv"), encoding="utf-8")))
check(len(rows) == 6, f"6 points in summary.csv (got {len(rows)})")
by = {(int(r["hosts"]), float(r["nic_gbytes_per_s"])): r for r in rows}
failed = by[(4, 5.0)]
check(failed["status"] == "failed" and "exited with 7" in failed["reason"],
      f"the failing point is recorded with its reason ({failed['status']}: {failed['reason']})")
ok = [r for r in rows if r["status"] == "ok"]
check(len(ok) == 5, "the other five points ran")
for r in ok:
    check(os.path.exists(os.path.join(out, "points", r["point"], "report.json")),
          f"{r['point']}: its report is kept")
t = {k: float(r["step_time_s"]) for k, r in by.items() if r["status"] == "ok"}
# One host: NVLink only, the NIC does not matter.
check(abs(t[(1, 48.5)] - t[(1, 5.0)]) <= 0.01 * t[(1, 48.5)],
      f"1 host: NIC bandwidth does not matter ({t[(1, 48.5)]} vs {t[(1, 5.0)]})")
# More hosts: the ring crosses the network; slower with more hosts, much slower with slow NICs.
check(t[(1, 48.5)] < t[(2, 48.5)] < t[(4, 48.5)], "fast NICs: time grows with the hosts")
check(t[(2, 5.0)] > 4 * t[(2, 48.5)],
      f"2 hosts: NICs 9.7x slower make the run over 4x slower ({t[(2, 5.0)]} vs {t[(2, 48.5)]})")
eff = {k: float(r["scaling_efficiency"]) for k, r in by.items() if r["status"] == "ok"}
check(eff[(1, 48.5)] == 1.0 and eff[(1, 5.0)] == 1.0, "the smallest point of a series is 100%")
md = open(os.path.join(out, "summary.md"), encoding="utf-8").read()
check(md.count("\n| h") == 6 and "failed:" in md, "summary.md has every point")
html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
if shutil.which("gnuplot"):
    # The page shows gnuplot's PNGs (sweep_browser_check.py opens it in a browser).
    check(html.count('src="data:image/png;base64,') == 3 and "<table>" in html,
          "index.html: table and the three PNG charts")
    for name in ("step_time", "throughput_per_gpu", "scaling_efficiency"):
        with open(os.path.join(out, f"{name}.png"), "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{name}.png is a PNG")
else:
    check("gnuplot is not installed" in proc.stderr, "without gnuplot the sweep says so")
    check(html.count("<svg") == 3 and "<table>" in html, "index.html: table and three SVG charts")

# Bad input is refused before anything runs.
bad = subprocess.run([phantora, "sweep", "--hosts", "1,x", "--out", os.path.join(work, "bad"),
                      "--", "true"], capture_output=True, text=True, timeout=60)
check(bad.returncode == 2 and
      "--hosts must be a whole number of at least 1, got x" in bad.stderr,
      "a bad --hosts list is named, with the accepted range")
check(not os.path.exists(os.path.join(work, "bad")), "a refused sweep writes nothing")
bad = subprocess.run([phantora, "sweep", "--out", os.path.join(work, "bad"), "--", "echo",
                      "{nosuch}"], capture_output=True, text=True, timeout=60)
check(bad.returncode == 2 and "{nosuch}" in bad.stderr, "an unknown placeholder is named")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("sweep: all checks passed")
