#!/usr/bin/env python3
"""Host memory and CPU of every process of a `phantora run` (issue 9, part 1).

Runs the given `phantora run ...` command line and samples, every --interval seconds, each process
in its process tree: resident set (RSS), proportional set (PSS: shared pages divided among the
processes that map them, so PSS sums to the machine's real use) and private bytes from
/proc/PID/smaps_rollup, and CPU time from /proc/PID/stat. A process whose environment has RANK=
is a rank; phantora itself holds the daemon. Prints, at the end, peak figures per rank, their
median, the daemon's peak, and the peak of the whole tree's PSS; with --json, writes them too.

Usage: rank_memory.py [--interval S] [--json FILE] -- phantora run [options] -- command...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")


def children_of():
    kids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        kids.setdefault(ppid, []).append(int(pid))
    return kids


def tree(root):
    kids, out, todo = children_of(), [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def sample(pid):
    """(rss, pss, private, cpu_s, rank or None, name) or None if the process is gone."""
    try:
        fields = {}
        with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[0].endswith(":"):
                    fields[parts[0][:-1]] = int(parts[1]) * 1024
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        cpu = (int(rest[11]) + int(rest[12])) / TICK
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
        rank = next((int(e[5:]) for e in env if e.startswith(b"RANK=") and e[5:].isdigit()), None)
        with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
            name = f.read().strip()
    except (OSError, ValueError):
        return None
    private = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return fields.get("Rss", 0), fields.get("Pss", 0), private, cpu, rank, name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--json")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        sys.exit("usage: rank_memory.py [--interval S] [--json FILE] -- phantora run ...")
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    peaks = {}  # pid -> dict
    tree_pss_peak = 0
    while proc.poll() is None:
        total = 0
        for pid in tree(proc.pid):
            s = sample(pid)
            if s is None:
                continue
            rss, pss, private, cpu, rank, name = s
            total += pss
            p = peaks.setdefault(pid, {"pid": pid, "rank": rank, "name": name, "rss": 0,
                                       "pss": 0, "private": 0, "cpu_s": 0.0})
            p["rss"], p["pss"] = max(p["rss"], rss), max(p["pss"], pss)
            p["private"], p["cpu_s"] = max(p["private"], private), max(p["cpu_s"], cpu)
            if pid == proc.pid:
                p["name"] = "phantora (daemon)"
        tree_pss_peak = max(tree_pss_peak, total)
        time.sleep(a.interval)
    wall = time.monotonic() - start
    ranks = sorted((p for p in peaks.values() if p["rank"] is not None), key=lambda p: p["rank"])
    # A launcher (torchrun) and its workers both inherit RANK only in the workers; keep the
    # deepest process per rank: the one with the most CPU time.
    by_rank = {}
    for p in ranks:
        if p["rank"] not in by_rank or p["cpu_s"] > by_rank[p["rank"]]["cpu_s"]:
            by_rank[p["rank"]] = p
    ranks = list(by_rank.values())
    daemon = peaks.get(proc.pid, {})
    mib = 1 / 2**20
    print(f"{'rank':>5} {'pid':>8} {'RSS MiB':>9} {'PSS MiB':>9} {'private MiB':>12} {'CPU s':>7}")
    for p in ranks:
        print(f"{p['rank']:>5} {p['pid']:>8} {p['rss'] * mib:>9.0f} {p['pss'] * mib:>9.0f} "
              f"{p['private'] * mib:>12.0f} {p['cpu_s']:>7.1f}")
    result = {
        "command": cmd, "exit_code": proc.returncode, "wall_s": wall, "ranks": len(ranks),
        "rank_rss_median_mib": statistics.median(p["rss"] for p in ranks) * mib if ranks else 0,
        "rank_pss_median_mib": statistics.median(p["pss"] for p in ranks) * mib if ranks else 0,
        "rank_private_median_mib":
            statistics.median(p["private"] for p in ranks) * mib if ranks else 0,
        "rank_cpu_median_s": statistics.median(p["cpu_s"] for p in ranks) if ranks else 0,
        "daemon_rss_mib": daemon.get("rss", 0) * mib,
        "daemon_cpu_s": daemon.get("cpu_s", 0),
        "tree_pss_peak_mib": tree_pss_peak * mib,
        "per_rank": ranks,
    }
    print(f"ranks {result['ranks']}: median RSS {result['rank_rss_median_mib']:.0f} MiB, "
          f"PSS {result['rank_pss_median_mib']:.0f} MiB, private "
          f"{result['rank_private_median_mib']:.0f} MiB, CPU {result['rank_cpu_median_s']:.1f} s; "
          f"daemon RSS {result['daemon_rss_mib']:.0f} MiB; whole run PSS peak "
          f"{result['tree_pss_peak_mib']:.0f} MiB; wall {wall:.1f} s; exit {proc.returncode}")
    if a.json:
        with open(a.json + ".tmp", "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
        os.replace(a.json + ".tmp", a.json)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
