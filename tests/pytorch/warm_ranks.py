#!/usr/bin/env python3
"""Ranks started from a warmed process (docs/scale.md, "Ranks from a warmed process").

  warm_ranks.py same PHANTORA TORCHRUN GPT OUT PORT PSS_BOUND_MIB
      examples/gpt.py DDP on 2 hosts x 2 H100, model CPU time, once with --warm-ranks and once
      with --no-warm-ranks, each under bench/scale/rank_memory.py: the printed step lines and
      report.json must be identical (everything but pids, wall-clock figures and the times
      that depend on the start's real-time waits, which must agree as two normal runs do: see
      VOLATILE); the warm run
      must have had its 4 ranks forked by the warm servers (and those forks are the ranks the
      simulator saw), the normal run none; the median warm rank's PSS (its forked process plus
      the median stub, at its peak while all four ranks lived) must stay under PSS_BOUND_MIB,
      and under 3/4 of a normal start's.
  warm_ranks.py launcher PHANTORA PYTHON OUT
      tests/pytorch/warm/launcher.py starts ranks itself: what each rank sees of its start
      (argv, working directory, environment, umask, limits, sys.path, signal dispositions,
      standard streams, an inherited descriptor) must be what a normal start gives, exit codes
      and signals must reach the launcher, a rank's end (sys.exit with a message, a thread
      joined, an atexit callback, a file left open flushed) must be a normal start's, a SIGTERM or SIGKILL of the ranks' process group
      must end the forked ranks, and a rank whose environment differs from the server's must
      start normally with a note.
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RANK_MEMORY = os.path.join(HERE, "..", "..", "bench", "scale", "rank_memory.py")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# Figures that differ between any two runs of the same job, warm or not.
VOLATILE = {"pid", "wall_time_s", "slowdown", "simulator", "command", "host_clock_s",
            "simulated_time_s", "simulated_time_ps", "time_s", "exposed_time_s", "busy_s",
            "communication_s", "exposed_communication_s"}
# Those that depend on the start: the c10d rendezvous and the TCPStore wait for each other in
# real time, in steps of seconds (a rank's host clock ends at 1, 2, 3 or 4 s plus its work,
# from one normal run to the next), and which rank comes last to the first collectives moves
# GPUs' communication times in steps of 56 us (two normal runs: 0.031680 and 0.031736 s on
# GPU 0; warm against normal, 0, 4, 56 and 112 us in five tries). These must agree within
# START_SLACK_S, a few such steps.
START_SLACK_S = 300e-6


def stable(report):
    if isinstance(report, dict):
        return {k: stable(v) for k, v in report.items() if k not in VOLATILE}
    if isinstance(report, list):
        return [stable(v) for v in report]
    return report


def start_dependent(report):
    gpus = sorted((g["busy_s"], g["communication_s"], g["exposed_communication_s"])
                  for g in report["gpus"])
    c = report["communication"]
    return [x for g in gpus for x in g] + [c["time_s"], c["exposed_time_s"]]


def same(phantora, torchrun, gpt, out, port, bound_mib):
    results = {}
    for mode in ("warm", "normal"):
        d = os.path.join(out, mode)
        flag = "--warm-ranks" if mode == "warm" else "--no-warm-ranks"
        p = run([sys.executable, RANK_MEMORY, "--interval", "0.2", "--json", d + ".json", "--",
                 phantora, "run", "--quiet", flag, "--hosts", "2", "--gpus-per-host", "2",
                 "--gpu", "h100", "--cpu-time", "model", "--timeout", "600", "--out", d, "--",
                 torchrun, "--nnodes", "2", "--nproc-per-node", "2", "--rdzv-backend", "c10d",
                 "--rdzv-endpoint", f"localhost:{int(port) + (mode == 'normal')}", gpt,
                 "--model", "gpt-small", "--parallel", "ddp", "--steps", "3"])
        print(p.stdout[-3000:], p.stderr[-3000:])
        check(p.returncode == 0, f"{mode} run exits 0 (got {p.returncode})")
        with open(os.path.join(d, "job.log"), encoding="utf-8") as f:
            log = f.read()
        with open(os.path.join(d, "report.json"), encoding="utf-8") as f:
            report = json.load(f)
        with open(d + ".json", encoding="utf-8") as f:
            memory = json.load(f)
        steps = sorted(line for line in log.splitlines() if line.startswith(("step ", "average")))
        results[mode] = (log, steps, report, memory)
    wlog, wsteps, wreport, wmem = results["warm"]
    nlog, nsteps, nreport, nmem = results["normal"]
    check(len(wsteps) == 4, f"the warm run printed 3 step lines and an average ({len(wsteps)})")
    check(wsteps == nsteps, "step lines identical with and without warm ranks")
    check(stable(wreport) == stable(nreport), "report.json identical with and without warm "
          "ranks (but for pids, wall figures and the start-dependent times)")
    if stable(wreport) != stable(nreport):
        for key in wreport:
            if stable(wreport.get(key)) != stable(nreport.get(key)):
                print(f"  differs: {key}: {json.dumps(stable(wreport[key]))[:400]} vs "
                      f"{json.dumps(stable(nreport.get(key)))[:400]}")
    a, b = start_dependent(wreport), start_dependent(nreport)
    check(len(a) == len(b) and all(abs(x - y) <= START_SLACK_S for x, y in zip(a, b)),
          f"GPU busy and communication times within {START_SLACK_S * 1e6:.0f} us "
          f"(largest difference {max(abs(x - y) for x, y in zip(a, b)) * 1e6:.1f} us)")
    check("warm ranks:" not in wlog, "no rank of the warm run started normally")
    check(wmem["warm_ranks"] == 4, f"4 ranks forked by warm servers (got {wmem['warm_ranks']})")
    check(nmem["warm_ranks"] == 0, "no warm rank with --no-warm-ranks")
    forked = {p["pid"] for p in wmem["per_rank"]}
    seen = {r["pid"] for r in wreport["ranks"]}
    check(seen == forked, f"the simulator's ranks are the forked processes ({sorted(seen)} vs "
          f"{sorted(forked)}); the servers never connected")
    pss = [p["pss"] / 2**20 for p in wmem["per_rank"]]
    normal_pss = [p["pss"] / 2**20 for p in nmem["per_rank"]]
    print(f"  peak PSS per rank, MiB: warm {[round(x) for x in pss]}, normal "
          f"{[round(x) for x in normal_pss]}")
    # A rank's peak over the whole run depends on when its siblings were forked (until then it
    # shares the import with fewer processes; under a loaded machine two ranks once peaked at
    # 220 MiB that way), so the bounds are on each rank's peak while all four ranks lived.
    settled = sorted(p["pss_all_alive"] / 2**20 for p in wmem["per_rank"]
                     if p.get("pss_all_alive") is not None)
    normal_settled = sorted(p["pss_all_alive"] / 2**20 for p in nmem["per_rank"]
                            if p.get("pss_all_alive") is not None)
    print(f"  PSS per rank while all ranks lived, MiB: warm {[round(x) for x in settled]}, "
          f"normal {[round(x) for x in normal_settled]}")
    check(len(settled) == 4 and len(normal_settled) == 4,
          "every rank sampled while all four lived, in both runs")
    median = settled[len(settled) // 2] if settled else float("inf")
    check(median <= bound_mib, f"the median warm rank's PSS at most {bound_mib} MiB "
          f"({median:.0f})")
    # The ~290 MiB that `import torch` leaves is shared by the server and its 4 ranks here.
    check(len(settled) > 1 and len(normal_settled) > 1 and
          settled[1] <= 0.75 * normal_settled[1],
          "warm ranks' median PSS at most 3/4 of a normal start's")


def launcher(phantora, python, out):
    script = os.path.join(HERE, "warm", "launcher.py")

    def launch(mode, modes, group_signal=None, extra=()):
        d = os.path.join(out, f"launcher-{mode}-{group_signal or 'none'}-{len(extra)}")
        cmd = [phantora, "run", "--quiet", "--warm-ranks" if mode == "warm" else "--no-warm-ranks",
               "--hosts", "1", "--gpus-per-host", "1", "--gpu", "h100", "--timeout", "300",
               "--out", d, "--", python, script, "--workdir", os.path.join(out, "work")]
        if group_signal:
            cmd += ["--group-signal", str(group_signal)]
        cmd += list(extra)
        p = run(cmd + modes)
        line = next((l for l in p.stdout.splitlines() if l.startswith("LAUNCHER ")), None)
        if line is None:
            print(p.stdout[-3000:], p.stderr[-3000:])
            check(False, f"the launcher reported ({mode}, {modes})")
            return None
        ranks = json.loads(line[len("LAUNCHER "):])
        for r in ranks:
            r["seen"] = json.loads(r["stdout"][0]) if r["stdout"] else {}
        return ranks

    modes = ["exit:0", "exit:3", f"signal:{int(signal.SIGUSR1)}", "raise", "finish"]
    warm = launch("warm", modes)
    normal = launch("normal", modes)
    if warm and normal:
        expected = [0, 3, -signal.SIGUSR1, 1, 1]
        check([r["returncode"] for r in warm] == expected, "exit 0, exit 3, SIGUSR1, an "
              "uncaught exception and sys.exit(message) reach the launcher "
              f"({[r['returncode'] for r in warm]})")
        # A warm rank skips the interpreter's teardown (docs/scale.md): what of it a job can
        # rely on still happens, in order (stderr is compared with the normal rank's below).
        check(warm[4]["stderr"].endswith("the rank's exit message\nthread joined\natexit ran\n"),
              f"exit message printed, thread joined, atexit ran ({warm[4]['stderr']!r})")
        for r in (warm[4], normal[4]):
            name = os.path.join(out, "work", f"left-open-{r['seen'].get('pid')}.txt")
            try:
                with open(name, encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                text = None
            check(text == "flushed at exit\n", f"a file the rank left open was flushed ({text!r})")
        check([r["returncode"] for r in normal] == expected, "the same without warm ranks")
        check("RuntimeError: raised by the rank" in warm[3]["stderr"] and
              "phantora_warm" not in warm[3]["stderr"],
              "the uncaught exception's traceback is the script's alone")
        check(all(r["seen"].get("warmed") for r in warm), "the warm ranks started warmed")
        check(not any(r["seen"].get("warmed") for r in normal), "the normal ranks did not")
        for w, n in zip(warm, normal):
            a = {k: v for k, v in w["seen"].items() if k not in ("pid", "warmed")}
            b = {k: v for k, v in n["seen"].items() if k not in ("pid", "warmed")}
            check(a == b, f"rank {a.get('rank')} sees the same start warm and normal "
                  f"(argv, cwd, env, umask, limits, sys.path, signals)")
            if a != b:
                print("  warm:  ", a, "\n  normal:", b)
            check(w["stderr"] == n["stderr"] and w["extra"] == n["extra"] and w["extra"],
                  f"rank {a.get('rank')}: stderr and the inherited descriptor as normal "
                  f"({w['stderr']!r}, {w['extra']!r})")
        check(warm[0]["seen"].get("umask") == 0o027 and warm[0]["seen"].get("nofile", [0])[0] == 321
              and warm[0]["seen"].get("tag") == "tag-0", "the launcher's umask, limit and "
              "environment (independent values) reached the warm rank")
    # Two ranks whose environments differ where an import could: whichever reached the server
    # second starts normally, with a note naming the variable, and still ends as it should.
    ranks = launch("warm", ["exit:4", "exit:5"], extra=["--odd-env", "1"])
    if ranks:
        check([r["returncode"] for r in ranks] == [4, 5], "both ranks' exit codes reach the "
              f"launcher ({[r['returncode'] for r in ranks]})")
        warmed = [r["seen"].get("warmed") for r in ranks]
        note = "environment differs from the warm server's in OMP_NUM_THREADS; this rank starts"
        noted = [note in r["stderr"] for r in ranks]
        check(sorted(warmed) == [False, True] and noted == [not w for w in warmed],
              f"one rank warm, the other started normally with a note (warmed {warmed}, "
              f"noted {noted})")
    for sig in (signal.SIGTERM, signal.SIGKILL):
        ranks = launch("warm", ["wait", "wait"], group_signal=int(sig))
        if not ranks:
            continue
        check([r["returncode"] for r in ranks] == [-sig, -sig],
              f"{sig.name} of the ranks' group: the launcher sees it "
              f"({[r['returncode'] for r in ranks]})")
        pids = [r["seen"].get("pid") for r in ranks]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
            time.sleep(0.1)
        check(pids and all(p and not os.path.exists(f"/proc/{p}") for p in pids),
              f"{sig.name}: the forked ranks {pids} are gone")


def main():
    what = sys.argv[1]
    if what == "same":
        same(*sys.argv[2:7], float(sys.argv[7]))
    elif what == "launcher":
        launcher(*sys.argv[2:5])
    else:
        sys.exit(__doc__)
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
