"""Comparing two runs of the same job that differ only in how their ranks were started (the
local launcher over the Unix socket, TCP, Slurm, `phantora serve`): in --cpu-time model every
simulated figure must be identical. Python 3.11+ standard library only."""

import json
import os

# report.json keys that depend on the job alone (pids, wall time and the launcher do not).
SAME = ("cluster", "cpu_time", "simulated_time_ps", "gpus", "gpu_time", "op_counts",
        "communication", "top_kernels", "unfinished")


def load(out):
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


def rank_lines(out):
    """The job's own "rank R ..." lines (rel_job's step times), sorted; [] without a job.log."""
    path = os.path.join(out, "job.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return sorted(line.strip() for line in f if line.startswith("rank "))


def differences(a_out, b_out, a_launcher, b_launcher, ranks=None, compare_logs=True):
    """What differs between the two runs' figures (empty: nothing), naming each field."""
    problems = []
    a, b = load(a_out), load(b_out)
    if a.get("status") != "ok" or b.get("status") != "ok":
        problems.append(f"status {a.get('status')} ({a.get('message')}) / "
                        f"{b.get('status')} ({b.get('message')})")
    if a.get("launcher") != a_launcher or b.get("launcher") != b_launcher:
        problems.append(f"launcher {a.get('launcher')} / {b.get('launcher')}, expected "
                        f"{a_launcher} / {b_launcher}")
    for key in SAME:
        if a.get(key) != b.get(key):
            problems.append(f"{key} differs: {json.dumps(a.get(key))[:300]} / "
                            f"{json.dumps(b.get(key))[:300]}")

    def rank_figures(r):
        return sorted((x["host"], x["rank"], x["local_rank"], x["host_clock_s"], x["end"])
                      for x in r.get("ranks", []))
    ra, rb = rank_figures(a), rank_figures(b)
    if ra != rb or (ranks is not None and len(ra) != ranks):
        problems.append(f"ranks differ: {ra} / {rb}")
    if compare_logs:
        la, lb = rank_lines(a_out), rank_lines(b_out)
        if la != lb or not la:
            problems.append(f"the ranks' own output (job.log) differs: {la} / {lb}")
    return problems
