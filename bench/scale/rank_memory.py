#!/usr/bin/env python3
"""Host memory and CPU of every process of a `phantora run` (issue 9, part 1).

Runs the given `phantora run ...` command line and samples, every --interval seconds, each process
in its process tree: resident set (RSS), proportional set (PSS: shared pages divided among the
processes that map them, so PSS sums to the machine's real use) and private bytes from
/proc/PID/smaps_rollup, and CPU time from /proc/PID/stat. A process whose environment has RANK=
is a rank; phantora itself holds the daemon. Prints, at the end, peak figures per rank, their
median, the daemon's peak, and the peak of the whole tree's PSS; with --json, writes them too.

A rank's peak PSS depends on when its siblings started: until they map the shared pages, it
carries a larger share of them. So each rank also has `pss_all_alive`, its peak PSS over the
samples in which every rank of the run was alive (null if there was no such sample), which
does not depend on the order in which ranks started or on how the machine scheduled them.

Ranks started from a warmed process (docs/scale.md) run as children of a per-host warm server
that has left the process tree; this script makes itself their subreaper (PR_SET_CHILD_SUBREAPER)
so that they stay in its tree. There a rank is two processes: the stub the launcher started (it
has RANK= and only waits) and the forked child that runs the job (a child of the server, whose
environment as /proc shows it is the server's). Both are listed; a rank's figure is the child's
plus the median stub's, and the servers' own figures are given apart.

With --smaps DIR, a copy of /proc/PID/smaps of each rank (the forked child for warm ranks) and
warm server is kept in DIR at its peak of private bytes (PID-peak.smaps, rewritten whenever the
peak grows by 4 MiB or more) and at its last sample (PID-last.smaps), to tell which mappings hold
the memory; DIR/timeline.csv has every sample of those processes.

Usage: rank_memory.py [--interval S] [--json FILE] [--smaps DIR] -- phantora run [options] --
command...
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


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def parent(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def is_warm_server(pid):
    return pid is not None and any(a.endswith(b"phantora_warm_server.py") for a in cmdline(pid))


def become_subreaper():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER


def reap_orphans():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


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


def keep_smaps(folder, pid, private, peaks):
    try:
        with open(f"/proc/{pid}/smaps", encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return
    names = ["last"]
    if private >= peaks.get(pid, 0) + (4 << 20):
        peaks[pid] = private
        names.append("peak")
    for name in names:
        with open(os.path.join(folder, f"{pid}-{name}.smaps"), "w", encoding="utf-8") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--json")
    ap.add_argument("--smaps")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.smaps:
        os.makedirs(a.smaps, exist_ok=True)
        timeline = open(os.path.join(a.smaps, "timeline.csv"), "w", encoding="utf-8")
        timeline.write("t_s,pid,kind,rss,pss,private\n")
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        sys.exit("usage: rank_memory.py [--interval S] [--json FILE] -- phantora run ...")
    start = time.monotonic()
    subreaper = become_subreaper()
    proc = subprocess.Popen(cmd)
    peaks = {}  # pid -> dict
    smaps_peaks = {}  # pid -> private bytes at its kept peak smaps
    servers = set()
    tree_pss_peak = 0
    samples = []  # per sample, {pid: pss} of every process seen in it
    while proc.poll() is None:
        total = 0
        seen = {}
        reap_orphans()
        # Orphans (warm servers) are reparented to this process, so its whole tree is the run's.
        for pid in tree(os.getpid() if subreaper else proc.pid):
            if pid == os.getpid():
                continue
            # A warm rank is forked from its server, so it has the server's command line.
            if is_warm_server(pid) and not is_warm_server(parent(pid)):
                servers.add(pid)
            s = sample(pid)
            if s is None:
                continue
            rss, pss, private, cpu, rank, name = s
            total += pss
            seen[pid] = pss
            kind = "server" if pid in servers else "warm" if parent(pid) in servers else None
            p = peaks.setdefault(pid, {"pid": pid, "rank": rank, "name": name, "rss": 0,
                                       "pss": 0, "private": 0, "cpu_s": 0.0, "kind": kind})
            if kind == "warm":
                p["rank"] = None  # /proc shows the server's environment, not the rank's
            p["kind"] = p["kind"] or kind
            p["rss"], p["pss"] = max(p["rss"], rss), max(p["pss"], pss)
            p["private"], p["cpu_s"] = max(p["private"], private), max(p["cpu_s"], cpu)
            if pid == proc.pid:
                p["name"] = "phantora (daemon)"
            if a.smaps and (kind in ("warm", "server") or (rank is not None and kind is None)):
                keep_smaps(a.smaps, pid, private, smaps_peaks)
                timeline.write(f"{time.monotonic() - start:.2f},{pid},{kind or 'rank'},{rss},"
                               f"{pss},{private}\n")
        tree_pss_peak = max(tree_pss_peak, total)
        samples.append(seen)
        time.sleep(a.interval)
    wall = time.monotonic() - start
    reap_orphans()
    warm = sorted((p for p in peaks.values() if p["kind"] == "warm"), key=lambda p: p["pid"])
    server_list = [p for p in peaks.values() if p["kind"] == "server"]
    ranks = sorted((p for p in peaks.values() if p["rank"] is not None and p["kind"] is None),
                   key=lambda p: p["rank"])
    # A launcher (torchrun) and its workers both inherit RANK only in the workers; keep the
    # deepest process per rank: the one with the most CPU time.
    by_rank = {}
    for p in ranks:
        if p["rank"] not in by_rank or p["cpu_s"] > by_rank[p["rank"]]["cpu_s"]:
            by_rank[p["rank"]] = p
    ranks = list(by_rank.values())
    daemon = peaks.get(proc.pid, {})
    # The processes that do each rank's work: the forked children when ranks start warm.
    workers = [p["pid"] for p in (warm or ranks)]
    all_alive = [s for s in samples if workers and all(pid in s for pid in workers)]
    for p in warm + ranks:
        p["pss_all_alive"] = max((s[p["pid"]] for s in all_alive), default=None)
    mib = 1 / 2**20
    stubs = []
    if warm:
        # The RANK= processes are the stubs; each rank's work is done by a warm child.
        stubs = ranks
        print(f"{'stub':>5} {'pid':>8} {'RSS MiB':>9} {'PSS MiB':>9} {'private MiB':>12} "
              f"{'CPU s':>7}")
        for p in stubs:
            print(f"{p['rank']:>5} {p['pid']:>8} {p['rss'] * mib:>9.0f} {p['pss'] * mib:>9.0f} "
                  f"{p['private'] * mib:>12.0f} {p['cpu_s']:>7.1f}")
        for p in server_list:
            print(f"warm server {p['pid']}: RSS {p['rss'] * mib:.0f} MiB, PSS "
                  f"{p['pss'] * mib:.0f} MiB, CPU {p['cpu_s']:.1f} s")
        stub_pss = statistics.median(p["pss"] for p in stubs) if stubs else 0
        stub_settled = [p["pss_all_alive"] for p in stubs if p["pss_all_alive"] is not None]
        stub_pss_all_alive = statistics.median(stub_settled) if stub_settled else stub_pss
        stub_cpu = statistics.median(p["cpu_s"] for p in stubs) if stubs else 0
        ranks = []
        for i, p in enumerate(warm):
            q = dict(p)
            q["rank"] = f"w{i}"
            q["stub_pss"], q["pss"] = stub_pss, p["pss"] + stub_pss
            if p["pss_all_alive"] is not None:
                q["pss_all_alive"] = p["pss_all_alive"] + stub_pss_all_alive
            q["cpu_s"] = p["cpu_s"] + stub_cpu
            ranks.append(q)
    print(f"{'rank':>5} {'pid':>8} {'RSS MiB':>9} {'PSS MiB':>9} {'private MiB':>12} {'CPU s':>7}")
    for p in ranks:
        print(f"{p['rank']:>5} {p['pid']:>8} {p['rss'] * mib:>9.0f} {p['pss'] * mib:>9.0f} "
              f"{p['private'] * mib:>12.0f} {p['cpu_s']:>7.1f}")
    settled = [p["pss_all_alive"] for p in ranks if p.get("pss_all_alive") is not None]
    result = {
        "command": cmd, "exit_code": proc.returncode, "wall_s": wall, "ranks": len(ranks),
        "rank_rss_median_mib": statistics.median(p["rss"] for p in ranks) * mib if ranks else 0,
        "rank_pss_median_mib": statistics.median(p["pss"] for p in ranks) * mib if ranks else 0,
        "rank_pss_all_alive_median_mib": statistics.median(settled) * mib if settled else None,
        "rank_private_median_mib":
            statistics.median(p["private"] for p in ranks) * mib if ranks else 0,
        "rank_cpu_median_s": statistics.median(p["cpu_s"] for p in ranks) if ranks else 0,
        "daemon_rss_mib": daemon.get("rss", 0) * mib,
        "daemon_cpu_s": daemon.get("cpu_s", 0),
        "tree_pss_peak_mib": tree_pss_peak * mib,
        "warm_ranks": len(warm),
        "stub_pss_median_mib": statistics.median(p["pss"] for p in stubs) * mib if stubs else 0,
        "server_pss_mib": [p["pss"] * mib for p in server_list],
        "server_cpu_s": [p["cpu_s"] for p in server_list],
        "per_rank": ranks,
    }
    if warm:
        print(f"warm ranks: figures are the forked child's plus the median stub's "
              f"({result['stub_pss_median_mib']:.0f} MiB PSS)")
    print(f"ranks {result['ranks']}: median RSS {result['rank_rss_median_mib']:.0f} MiB, "
          f"PSS {result['rank_pss_median_mib']:.0f} MiB "
          f"({result['rank_pss_all_alive_median_mib'] or 0:.0f} while all ranks lived), private "
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
