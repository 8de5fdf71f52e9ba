"""What every framework test does: run a job under `phantora run`, then check from its report that
the run used the parallelism it claims and that the step times the framework printed are the
ones phantora's report holds.

A test script imports this module (it sits next to the framework directories), builds its job's
command line and calls run(); the checks print "ok:" / "FAIL:" lines and finish() exits non-zero
when one failed.
"""
import json
import os
import subprocess
import sys

failures = []


def check(cond, message):
    print(("ok: " if cond else "FAIL: ") + message, flush=True)
    if not cond:
        failures.append(message)
    return cond


def finish():
    if failures:
        sys.exit(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
    print("all checks passed")


class Run:
    def __init__(self, out_dir, log, returncode):
        self.out_dir = out_dir
        self.log = log
        self.returncode = returncode
        path = os.path.join(out_dir, "report.json")
        self.report = json.load(open(path, encoding="utf-8")) if os.path.exists(path) else None

    def communicators(self):
        """report.json's communication.communicators: one entry per NCCL communicator that ran
        an operation, with its size (`ranks`), the global GPUs of its members (`gpus`) and its
        `operations` by NCCL call ("ncclAllReduce", "ncclSend", ...: {"count", "bytes"}, bytes
        being the call's count times its type size)."""
        return self.report["communication"].get("communicators", [])

    def ops(self, kind, ranks=None):
        """How many `kind` operations (e.g. "ncclAllReduce", "ncclSend") ran on communicators of
        `ranks` members (any size when None), counted once per operation."""
        return sum(c["operations"].get(kind, {}).get("count", 0) for c in self.communicators()
                   if ranks is None or c["ranks"] == ranks)


def run(phantora, name, out_root, hosts, gpus_per_host, command, extra=(), env=None,
        timeout=900, gpu="h100"):
    """Runs `command` under phantora on hosts x gpus_per_host simulated GPUs (model CPU time, so
    the result is deterministic) and returns its Run; a failed run ends the test with its log."""
    out_dir = os.path.join(out_root, name)
    cmd = [phantora, "run", "--quiet", "--hosts", str(hosts), "--gpus-per-host",
           str(gpus_per_host), "--gpu", gpu, "--cpu-time", "model", "--timeout", str(timeout),
           "--out", out_dir, *extra, "--", *command]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 120,
                          env={**os.environ, **(env or {})})
    r = Run(out_dir, proc.stdout + proc.stderr, proc.returncode)
    if proc.returncode != 0:
        sys.exit(f"{name}: phantora run failed ({proc.returncode}):\n{r.log[-6000:]}")
    if r.report is None:
        sys.exit(f"{name}: no report.json in {out_dir}")
    return r


def check_steps(r, printed_ms, tolerance=1e-3):
    """The step times the framework printed (`printed_ms`, in ms, in order, as the test parsed
    them from r.log in the framework's own format) must be the report's `steps.times_s` — what
    phantora's step-time scanner found in the same log — within `tolerance` (relative; the
    framework prints rounded figures)."""
    steps = (r.report or {}).get("steps", {})
    times = [t * 1e3 for t in steps.get("times_s", [])]
    if not check(len(printed_ms) > 0 and len(times) == len(printed_ms),
                 f"report has the {len(printed_ms)} printed step time(s) (it has {len(times)})"):
        return
    worst = max(abs(a - b) / max(b, 1e-9) for a, b in zip(times, printed_ms))
    check(worst <= tolerance,
          f"printed step times {[round(x, 3) for x in printed_ms]} ms = report's "
          f"{[round(x, 3) for x in times]} ms (worst {worst:.2e})")


def check_steps_fit(r, printed_ms):
    """An independent bound on the printed times: the steps happened inside the simulated run, so
    they cannot add up to more than its simulated end."""
    total_s = sum(printed_ms) / 1e3
    check(0 < total_s <= r.report["simulated_time_s"] * (1 + 1e-6),
          f"printed steps ({total_s:.4f} s) fit in the simulated run "
          f"({r.report['simulated_time_s']:.4f} s)")
