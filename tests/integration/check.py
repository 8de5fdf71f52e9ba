#!/usr/bin/env python3
"""Runs one integration scenario under `phantora run` and checks its simulated times.

Every expected figure is computed here from the rules of design.md ("Time", "Memory and
values") and the documented cost figures (kernels-db/data/*.toml), with the working next to
the assertion. Notation: L = launch latency (4 us by default), times in microseconds from the
start of the run; with --cpu-time zero the host clock stays at 0 except at blocking calls,
where it jumps to the completion time.

Usage: check.py --phantora BIN --programs DIR --times CSV --data DIR --work DIR <case>
Python 3.11+ standard library only.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib

PS_PER_US = 1_000_000
L = 4.0  # `phantora run` default --launch-latency-us

ARGS = None
FAILURES = []


class Run:
    def __init__(self, proc, out_dir):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.out_dir = out_dir
        path = os.path.join(out_dir, "report.json")
        self.report = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.report = json.load(f)

    def values(self, key):
        """All values printed by the program on lines `key value...`."""
        found = []
        for line in self.stdout.splitlines():
            parts = line.split()
            if parts and parts[0] == key:
                found.append(" ".join(parts[1:]))
        return found

    def value(self, key):
        v = self.values(key)
        check(len(v) == 1, f"expected one '{key}' line in the output, got {v}")
        return v[0] if v else None

    def number(self, key):
        v = self.value(key)
        return float(v) if v is not None else math.nan

    def describe(self):
        return f"rc={self.rc}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print(f"FAIL: {message}", file=sys.stderr)
    return cond


def check_eq(actual, expected, what):
    return check(actual == expected, f"{what}: got {actual!r}, expected {expected!r}")


def check_close(actual, expected, what, tol=0.0015):
    # Event timings come back as float milliseconds and are printed with 3 decimals of us.
    return check(abs(actual - expected) <= tol, f"{what}: got {actual}, expected {expected}")


def python_program(name):
    """A Python test program of programs/ (run from the source tree, not built)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", name)


def run(case, program, *prog_args, flags=(), env=None, expect_ok=True):
    """`phantora run` of `program` (built into --programs; an absolute path as it is)."""

    out_dir = os.path.join(ARGS.work, case)
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [ARGS.phantora, "run", "--quiet", "--out", out_dir, *flags, "--",
           os.path.join(ARGS.programs, program), *prog_args]
    full_env = dict(os.environ)
    full_env.pop("CUDA_VISIBLE_DEVICES", None)
    if env:
        full_env.update(env)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=100)
    r = Run(proc, out_dir)
    print(f"$ {' '.join(cmd)}\n{r.describe()}")
    if expect_ok:
        check(r.rc == 0, f"{case}: phantora exited with {r.rc}")
        check(r.report is not None, f"{case}: no report.json")
    return r


def zero(*more):
    return ("--cpu-time", "zero", "--kernel-times", ARGS.times, *more)


def model(*more):
    return ("--cpu-time", "model", "--kernel-times", ARGS.times, *more)


def sim_ps(r):
    return r.report["simulated_time_ps"] if r.report else None


def us_ps(us):
    return round(us * PS_PER_US)


# --- cost figures -------------------------------------------------------------------------

def data_file(name):
    """One of kernels-db's data files (--data), parsed."""
    with open(os.path.join(ARGS.data, name), "rb") as f:
        return tomllib.load(f)


def h100():
    return data_file("gpus.toml")["gpu"]["h100"]


def cost_params():
    return data_file("cost_model.toml")


def model_params():
    return data_file("models.toml")


def us_to_ps(v):
    # SimTime::us(v): round half up to whole picoseconds.
    return int(v * 1e6 + 0.5)


def transfer_ps(nbytes, bytes_per_s):
    # Bandwidth::transfer_time: bytes / rate, rounded up to the next picosecond (same double
    # arithmetic as the C++).
    ps = float(nbytes) / bytes_per_s * 1e12
    whole = int(ps)
    return whole + (1 if whole < ps else 0)


def copy_cost_ps(kind, nbytes, pinned):
    """CostModel::copy_cost for the H100 preset (kernels-db/include/.../cost_model.hpp):
    H2D/D2H: host_device_latency + bytes / (PCIe x (1 if pinned else pageable_factor));
    D2D: device_local_latency + 2 x bytes / (HBM x memory efficiency) (every byte is read and
    written, at the rate streaming kernels reach: models.toml's memory_efficiency)."""
    perf = h100()["perf"]
    copy = cost_params()["copy"]
    if kind in ("h2d", "d2h"):
        factor = 1.0 if pinned else copy["pageable_factor"]
        bw = perf["pcie_gbytes_per_s"] * 1e9 * factor
        return us_to_ps(copy["host_device_latency_us"]) + transfer_ps(nbytes, bw)
    assert kind == "d2d"
    efficiency = model_params()["gpu"]["h100"]["memory_efficiency"]
    return us_to_ps(copy["device_local_latency_us"]) + transfer_ps(
        2 * nbytes, perf["hbm_gbytes_per_s"] * 1e9 * efficiency)


def memory_bound_us(moved):
    """A memory-bound kernel's price on the H100 preset (docs/cost-model.md, "Memory-bound
    kernels"): floor + (bytes read + written) / (HBM x memory efficiency), models.toml's."""
    rate = h100()["perf"]["hbm_gbytes_per_s"] * 1e9 * model_params()["gpu"]["h100"][
        "memory_efficiency"]
    return model_params()["memory_bound"]["floor_us"] + moved / rate * 1e6


def trace_events(r):
    """The run's trace.json events; None (a failed check) when the file is missing."""
    trace = os.path.join(r.out_dir, "trace.json")
    if not check(os.path.exists(trace), "trace.json written"):
        return None
    with open(trace, encoding="utf-8") as f:
        t = json.load(f)
    return t["traceEvents"] if isinstance(t, dict) else t


# --- cases --------------------------------------------------------------------------------

def case_two_streams():
    r = run("two_streams", "two_streams", flags=zero())
    # Phase 1 (host clock 0): start on legacy at 0+L = 4. busy_a on s1: 4 -> 104 (ev_a);
    # busy_b on s2: 4 -> 254 (ev_b); tail on legacy waits for both blocking streams:
    # 254 -> 304 (stop). cudaEventSynchronize(stop) moves the host to 304.
    check_close(r.number("a_us"), 100.0, "busy_a end - start")
    check_close(r.number("b_us"), 250.0, "busy_b end - start")
    check_close(r.number("elapsed_us"), 300.0, "legacy tail end - start")
    # Phase 2 (host 304): start2 on legacy at max(304+4, every blocking tail <= 304) = 308.
    # busy_b on the non-blocking stream: 308 -> 558 (no legacy barrier).
    # tail on legacy ignores the non-blocking stream: 308 -> 358 (stop2): 50.
    # busy_a on blocking s1 waits for the legacy tail: 358 -> 458 (ev_s1): 150.
    check_close(r.number("legacy2_us"), 50.0, "legacy stream ignores the non-blocking stream")
    check_close(r.number("s1_after_legacy_us"), 150.0, "blocking stream waits for legacy work")
    # cudaDeviceSynchronize waits for the non-blocking stream too: host -> 558; that is the end.
    check_eq(sim_ps(r), us_ps(558), "simulated_time_ps")
    if r.report:
        rep = r.report
        check_eq(rep["status"], "ok", "status")
        check_eq(rep["cpu_time"], "zero", "cpu_time")
        check_eq(rep["op_counts"].get("kernel"), 6, "kernel count")
        gpu0 = rep["gpus"][0]
        check_eq(gpu0["peak_memory_bytes"], 1 << 20, "peak memory of GPU 0 (one 1 MiB buffer)")
        # busy = 100 + 250 + 50 + 250 + 50 + 100 = 800 us of kernel time on GPU 0.
        check(abs(gpu0["busy_s"] - 800e-6) < 1e-12, f"GPU 0 busy_s {gpu0['busy_s']} != 800e-6")
        top = {k["kernel"]: k for k in rep["top_kernels"]}
        check_eq(top.get("busy_b", {}).get("count"), 2, "busy_b launches")
        check_eq(top.get("busy_b", {}).get("source"), "pinned", "busy_b cost source")
        check(abs(top.get("busy_b", {}).get("total_s", 0) - 500e-6) < 1e-12, "busy_b total 500 us")
        check_eq(len(rep["ranks"]), 1, "ranks")
        check_eq(rep["ranks"][0]["end"], "exited", "rank end")
    events = trace_events(r)
    if events is not None:
        spans = [e for e in events if e.get("ph") == "X" and "busy_a" in e.get("name", "")]
        check_eq(len(spans), 2, "busy_a spans in trace.json")


def case_event_loop():
    # N launches of `step` (12.5 us) back to back between two events: elapsed = N x 12.5.
    for n in (1, 100):
        r = run(f"event_loop_{n}", "event_loop", "step", str(n), flags=zero())
        check_close(r.number("elapsed_us"), n * 12.5, f"zero mode, N={n}")
        # start at 4, stop at 4 + 12.5 N; the event sync moves the host there.
        check_eq(sim_ps(r), us_ps(4 + 12.5 * n), f"simulated_time_ps, N={n}")
    # A cudaEventQuery busy-wait loop: the first query finds the stop event (4 + 1250) ahead of
    # the host clock (0) and answers not-ready; asking again at once is spinning, so the host
    # jumps to the event and the query succeeds. Same elapsed time and end as a sync.
    r = run("event_loop_spin", "event_loop", "step", "100", "spin", flags=zero())
    check_eq(r.value("not_ready_polls"), "1", "polls answered not-ready before the jump")
    check_close(r.number("elapsed_us"), 1250.0, "spin-wait, N=100")
    check_eq(sim_ps(r), us_ps(4 + 1250), "simulated_time_ps, spin-wait")
    # Two events polled in turn, one after launch 50 (done at 4 + 625) and the stop event, with a
    # cudaSetDevice after each query (PyTorch's NCCL watchdog after shutdown): no query follows
    # another directly, but nothing is submitted or waited for in between, so the 1,000th
    # unfinished answer for the first event moves the host to it, and from then on every
    # unfinished answer moves the host to its event (docs/time.md, "Polling is waiting"): 999
    # not-ready answers for each, then both complete, the host at the stop event as above.
    # Before, zero mode never moved the clock and the loop never ended.
    r = run("event_loop_guarded_spin", "event_loop", "step", "100", "guarded_spin",
            flags=zero("--timeout", "60"))
    check_eq(r.value("not_ready_polls"), "1998", "guarded polls answered not-ready before the jump")
    check_close(r.number("elapsed_us"), 1250.0, "guarded spin-wait, N=100")
    check_eq(sim_ps(r), us_ps(4 + 1250), "simulated_time_ps, guarded spin-wait")
    # Model mode, 2 us per call < 12.5 us per kernel: still GPU-bound after the first launch.
    # start recorded at host T (done T+4); launch 1 at host T+2 starts T+6; the rest follow
    # back to back; stop completes at T+6+12.5N: elapsed = 2 + 12.5 N.
    r = run("event_loop_model", "event_loop", "step", "100", flags=model())
    check_close(r.number("elapsed_us"), 2 + 1250.0, "model mode, N=100")


def case_timeout_catch_up():
    # Zero mode: each of main's 50 steps launches a 1000 us kernel at its clock, which starts
    # 4 us later (launch latency), and waits for it: 50 x 1004 us. The 10 ms of real CPU work
    # per step costs nothing. The watcher times out
    # 1 ms at a time in real time (~0.5 s), but its clock may not pass main's: it ends when main
    # tells it to stop, within one timeout of main's clock (it reads `stop` under a mutex, which
    # carries no clock: finding it set on returning from a timeout, it keeps that timeout's
    # clock; docs/time.md), and the join leaves main where it was. (Timeouts ending at their
    # deadlines regardless put the watcher at hundreds of ms.)
    r = run("timeout_catch_up", "timeout_catch_up", flags=zero())
    main_us = r.number("main_done_us")
    check_close(main_us, 50 * 1004.0, "main's 50 steps")
    check(abs(r.number("watcher_end_us") - main_us) <= 1000.0,
          f"the watcher ends with main, not ahead ({r.number('watcher_end_us')} us)")
    check_close(r.number("joined_us"), main_us, "main after joining the watcher")
    check(int(r.value("timeouts")) <= 55,
          f"the watcher timed out at most once per ms of main's time ({r.value('timeouts')})")


def case_timeout_thread_start():
    # Zero mode (programs/timeout_thread_start.cu): the first kernel ends main's wait at 1004 us;
    # the four threads start from that clock and work only in real time, so main resumes there;
    # the second kernel: 2008 us. The watcher's 10 ms timeouts never come due before main stops
    # it (its deadlines are at 10 ms and more): it ends with main's notify and the joins leave
    # main where it was. (Without the new threads counted from their creation the watcher timed
    # out every 10 ms of real time while main waited for them: joined at hundreds of ms.)
    r = run("timeout_thread_start", "timeout_thread_start", flags=zero())
    check_close(r.number("after_start_us"), 1004.0, "main after its threads started")
    check_close(r.number("main_done_us"), 2008.0, "main after its second kernel")
    check_close(r.number("joined_us"), 2008.0, "main after joining the watcher")
    check_eq(r.value("timeouts"), "0", "no timeout of the watcher came due")


def io_waits(name, mode, **kw):
    """programs/io_waits.cu in `mode`, zero mode; checks what every mode prints alike."""
    r = run(name, "io_waits", mode, flags=zero(), **kw)
    check_eq(r.value("poll_timeouts"), "0", f"{name}: no poll timed out (the child wrote in time)")
    return r


def case_poll_ahead():
    # Zero mode (programs/io_waits.cu): main reads 40 bytes from a child process 50 ms of real
    # time apart, each through a poll with a 900 ms timeout (about 2 s of real time, no simulated
    # time: main's clock stays at 0), while its sleeper sleeps 1 s of simulated time and then
    # takes and lets go of a lock. Polling, main stands in the sleeper's timeout at its poll's
    # end (0.9 s), before the sleep's (1 s), so the sleep is not over when main takes the lock:
    # main takes it at 0. Joining the sleeper, main waits: the sleep ends at 1 s and main takes
    # that clock. (Polling threads not counted, the sleep came due after 1 s of real time and main
    # took its clock, 1 s, with the lock.) The child's bytes come 50 ms apart, so a poll times out
    # only on a machine too loaded to run the child within 900 ms: the test says so.
    r = io_waits("poll_ahead", "poll")
    check_close(r.number("after_reads_us"), 0.0, "main's clock after its reads and the lock")
    check_eq(r.value("sleeper_woke_before"), "0", "the sleep was not over when main took the lock")
    check_close(r.number("joined_us"), 1e6, "main after joining the sleeper: the sleep's end")


def case_read_ahead():
    # The same with blocking reads: main, blocked reading from another process where the C
    # library's waits do not show, is marked stalled after 20 ms of real time, and stands in the
    # sleeper's timeout at its own clock (0) since it waits for input (docs/time.md). (Stalled
    # threads not counted, main took the sleeper's clock, 1 s, with the lock.)
    r = io_waits("read_ahead", "read")
    check_close(r.number("after_reads_us"), 0.0, "main's clock after its reads and the lock")
    check_eq(r.value("sleeper_woke_before"), "0", "the sleep was not over when main took the lock")
    check_close(r.number("joined_us"), 1e6, "main after joining the sleeper: the sleep's end")


def case_self_fed_read():
    # Main blocks reading a byte its own thread writes after a 10 ms sleep. Main holds the
    # sleep back (it waits for input), but only for the catch-up limit, here 300 ms of real
    # time: then the sleep comes due at 10 ms, the thread writes, and main reads the byte at the
    # clock it was written at (the pipe, made by the job, carries it: docs/time.md); its join
    # takes the sleep's end. (Without the limit, the sleep gave up, woke early with the time
    # left, slept again, and the run never ended. Until pipes carried clocks, main read at its
    # own clock, 0.)
    r = io_waits("self_fed_read", "self_fed", env={"PHANTORA_CATCH_UP_LIMIT_MS": "300"})
    check_close(r.number("after_reads_us"), 10000.0, "main's clock after its read: the write's")
    check_close(r.number("joined_us"), 10000.0, "main after joining the writer: the sleep's end")


def case_pipe_worker_measured():
    # Measured mode (programs/pipe_worker.cu): the rank computes 300 ms, asks its forked worker
    # for a batch and blocks reading the answer; the worker computes 200 ms of its own CPU time
    # first. The answer carries the worker's clock: the request's time (the worker waited for
    # it) plus the CPU time the worker measured between the two, to within the little it spends
    # reading and writing; at --host-speed 2, half of it. The rank's own clock moves by nothing
    # meanwhile (it is blocked). Until pipes carried clocks, the rank read at its own clock:
    # answer - request was about 0, as if the worker's work were free.
    for speed, factor in (("1", 1.0), ("2", 2.0)):
        r = run(f"pipe_worker_measured_{speed}", "pipe_worker", "300", "200",
                flags=("--cpu-time", "measured", "--host-speed", speed))
        took = r.number("answer_us") - r.number("request_us")
        work = r.number("worker_cpu_us") / factor
        check(work * 0.99 <= took <= work + 3000.0,
              f"speed {speed}: the answer comes the worker's CPU time after the request "
              f"({took:.0f} us after it; the worker's {work:.0f} us)")
        check(r.number("request_us") >= 290000.0 / factor,
              f"speed {speed}: the rank's 300 ms of CPU time before its request "
              f"({r.number('request_us'):.0f} us)")


def case_pipe_worker_model():
    # Model mode: CPU time is free, in the worker too, so the answer comes at the request's
    # time. The rank computes for 1.5 s of real time before it asks, and the worker's polls time
    # out every 20 ms of real time meanwhile (dozens of them): a process that is no rank, waiting
    # only on the job's pipes, takes none of that as simulated time (its message will carry
    # the time). Counted, its clock was 1.5 s ahead when it answered, and so was the rank's.
    r = run("pipe_worker_model", "pipe_worker", "1500", "50", flags=("--cpu-time", "model"))
    check(r.number("worker_poll_timeouts") >= 10,
          f"the worker's polls timed out while the rank computed "
          f"({r.number('worker_poll_timeouts'):.0f} of them)")
    took = r.number("answer_us") - r.number("request_us")
    check(0.0 <= took <= 1000.0, f"the answer at the request's time ({took:.0f} us after it)")
    check(r.number("answer_us") < 100000.0,
          f"the rank's clock after the answer: its calls' costs only ({r.number('answer_us'):.0f} us)")


def case_pipe_worker_deadline():
    # Model mode, a 300 ms catch-up limit: the worker polls a pipe on which nothing comes, every
    # 20 ms of real time, until its own clock has moved 50 ms. Its timeouts are free (it waits
    # for a message) for the limit's real time, then take their time again, so it ends about 3
    # polls later, its clock past 50 ms, and answers. (Free for ever, it never ended.)
    r = run("pipe_worker_deadline", "pipe_worker", "0", "0", "50", flags=("--cpu-time", "model"),
            env={"PHANTORA_CATCH_UP_LIMIT_MS": "300"})
    timeouts = r.number("worker_poll_timeouts")
    check(13 <= timeouts <= 60,
          f"the worker's polls: free for 300 ms of real time, then 20 ms each up to 50 ms "
          f"({timeouts:.0f} timeouts, about 18 expected)")
    check(50000.0 <= r.number("answer_us") <= 120000.0,
          f"the rank takes the answer at the worker's deadline ({r.number('answer_us'):.0f} us)")


def case_timeout_give_up():
    # Zero mode, a 200 ms catch-up limit (programs/timeout_give_up.cu): W's 10 ms sleep waits for
    # main, which spins at clock 0 for 1 s of real time, gives up every 200 ms without moving
    # ahead (the sleep goes on for what is left), so nothing is posted during the spin and main
    # stays at 0. Once main waits for the post, W's sleep ends at 10 ms and main takes that
    # clock. (Ending a given-up wait at its deadline posted at 10 ms during main's spin.)
    r = run("timeout_give_up", "timeout_give_up", flags=zero(),
            env={"PHANTORA_CATCH_UP_LIMIT_MS": "200"})
    check_eq(r.value("posted_during_spin"), "0", "no post while main's clock stood at 0")
    check_close(r.number("after_spin_us"), 0.0, "main's clock after its spin")
    check_close(r.number("w_posted_us"), 10000.0, "W's sleep ends at 10 ms")
    check_close(r.number("after_post_us"), 10000.0, "main takes the post's clock")
    # W waited behind main (1 s of main's CPU time: longer in real time on a loaded machine) in
    # slices doubling from 1 ms to 32 ms and starting again at each give-up: about 11 wake-ups
    # per 200 ms (1 + 2 + ... + 32 + 5 x 32), some 55 per second of real time. Slices of 1 ms
    # throughout woke it about 1,000 times a second.
    wakeups, waited_s = r.number("w_wakeups"), r.number("w_waited_real_ms") / 1000.0
    check(waited_s >= 0.9 and 5 <= wakeups <= 120 * waited_s,
          f"W woke {wakeups:.0f} times in {waited_s:.2f} s of real time (expected about 55 a second)")


def case_host_speed():
    # Measured mode charges the program's CPU time to its simulated clock, divided by
    # --host-speed. 200 ms of CPU work: about 200 ms at speed 1 (the spin's own clock reads add a
    # little), half of that at speed 2, a quarter at 4. The ratios are the check: the same work
    # measured in one run of each. Model and zero modes have no CPU time to scale: refused.
    times = {}
    for speed in ("1", "2", "4"):
        r = run(f"host_speed_{speed}", "host_work", "200",
                flags=("--cpu-time", "measured", "--host-speed", speed))
        times[speed] = r.number("work_us")
        check(r.report.get("host_speed") == float(speed),
              f"report.json host_speed {r.report.get('host_speed')} (asked {speed})")
    check(190000.0 <= times["1"] <= 260000.0, f"speed 1: 200 ms of CPU work ({times['1']} us)")
    for speed, factor in (("2", 2.0), ("4", 4.0)):
        ratio = times["1"] / times[speed]
        check(abs(ratio - factor) <= 0.1 * factor,
              f"speed {speed}: the work takes 1/{factor:g} of speed 1's ({ratio:.3f})")
    bad = run("host_speed_model", "host_work", "1",
              flags=("--cpu-time", "model", "--host-speed", "2"), expect_ok=False)
    check("--host-speed 2 scales measured CPU time" in bad.stderr,
          f"model mode refuses --host-speed ({bad.stderr.strip()[:200]})")
    zero = run("host_speed_zero", "host_work", "1", flags=("--host-speed", "0"), expect_ok=False)
    check("--host-speed must be a number greater than 0, got 0" in zero.stderr,
          f"--host-speed 0 refused with its range ({zero.stderr.strip()[:200]})")


def case_two_threads():
    # Zero mode, every clock starts at 0 and moves only at waits (all times in us from main's
    # start, read by the program with std::chrono):
    # B launches long_k (5000) at host 0 on its stream: 4 -> 5004; it tells A and waits: B's
    # clock -> 5004. A, released at B's clock 0, launches ten short_k (100) at host 0 on its own
    # stream: 4 -> 1004; its wait moves only A's clock, to 1004. (One clock per process would
    # have put A's kernels after B's wait: 5008 -> 6008.)
    r = run("two_threads", "two_threads", flags=zero())
    check_close(r.number("a_kernels_us"), 1000.0, "A's kernels, event-timed")
    check_close(r.number("a_done_us"), 1004.0, "A's wait ends when its kernels do")
    check_close(r.number("b_done_us"), 5004.0, "B's wait ends when the long kernel does")
    # main joins both: its clock is the later of theirs.
    check_close(r.number("joined_us"), 5004.0, "main after joining A and B")
    # Sleeping in 10 ms naps until a deadline 50 ms on: 5 naps, exactly 50 ms of simulated time.
    check_close(r.number("sleep_loop_us"), 50000.0, "sleep loop until a deadline")
    check_eq(r.value("naps"), "5", "naps to the deadline")
    # A 20 ms timed wait nobody ends: times out at its deadline.
    check_eq(r.value("woken"), "0", "timed wait not woken")
    check_close(r.number("timed_wait_us"), 20000.0, "timed wait ends at its deadline")
    check_close(r.number("wall_minus_steady_us"), 0.0, "system_clock moves with steady_clock")
    # B's notify was taken up by A: the goodbye reports no hand-off left to lapse.
    check_eq([k["lapsed_handoffs"] for k in r.report["ranks"]], [0], "lapsed hand-offs")
    # A busy-wait on the clock ends at its 2 ms deadline, to within one spin step (1 us).
    check(2000.0 <= r.number("spin_loop_us") <= 2001.0,
          f"busy-wait until a deadline ends there ({r.number('spin_loop_us')} us)")
    # Reads between real work (0.2 s of CPU time in all) are no spin: the clock stands still.
    check_close(r.number("work_reads_us"), 0.0, "clock reads between real work")
    # cudaFree syncs the idle device: the run ends at main's clock, 5004 + 50000 + 20000 + 2000,
    # plus a step for each read that follows the spin closely enough to extend it (two here).
    check(us_ps(77004) <= sim_ps(r) <= us_ps(77010), f"simulated_time_ps ({sim_ps(r)})")
    # Measured and model modes add host time (CPU time or 2 us per call), but A's work still
    # ends long before B's kernel, and the deadline loops end at their deadlines.
    for mode, flags in (("model", model()), ("measured", ("--kernel-times", ARGS.times))):
        r = run(f"two_threads_{mode}", "two_threads", flags=flags)
        check(r.number("a_done_us") < 3000.0,
              f"{mode}: A's work ends in ~1 ms, not after B's kernel ({r.number('a_done_us')})")
        check(r.number("b_done_us") >= 5004.0, f"{mode}: B waits for its 5 ms kernel")
        # (The start event is recorded one call cost before the first kernel's launch.) Model
        # mode's call cost is 2 us, so the ten 100 us kernels queue back to back. Measured mode
        # charges the real CPU time of each launch: the GPU idles when a launch takes longer
        # than the kernel before it (seen under ASan and load: 1,042 us), so only the bounds
        # hold there, the 1 ms the kernels need and well short of B's 5 ms kernel.
        kernels = r.number("a_kernels_us")
        if mode == "model":
            check(abs(kernels - 1000.0) < 10.0, f"{mode}: A's kernels take ~1 ms ({kernels})")
        else:
            check(1000.0 <= kernels < 2000.0, f"{mode}: A's kernels take 1-2 ms ({kernels})")
        check(50000.0 <= r.number("sleep_loop_us") < 51000.0, f"{mode}: sleep loop ~50 ms")
        check(20000.0 <= r.number("timed_wait_us") < 21000.0, f"{mode}: timed wait ~20 ms")


def case_event_loop_host_bound():
    # Model mode with --call-cost-us C and `tiny` (1 us). start is recorded at host T and done
    # at T+4 (idle stream); launch i is stamped T+iC and starts at max(T+iC+4, previous end
    # T+(i-1)C+5).
    # C=3 > 1: host-bound, launch i runs T+3i+4 .. T+3i+5; stop stamped T+3(N+1) completes
    # at T+3N+7: elapsed = 3(N+1).
    r = run("host_bound", "event_loop", "tiny", "50", flags=model("--call-cost-us", "3"))
    check_close(r.number("elapsed_us"), 3 * 51.0, "host-bound loop, C=3, N=50")
    # C=0.5 < 1: GPU-bound after launch 1 (T+4.5): stop at T+4.5+N: elapsed = N + 0.5.
    r = run("gpu_bound", "event_loop", "tiny", "50", flags=model("--call-cost-us", "0.5"))
    check_close(r.number("elapsed_us"), 50.5, "GPU-bound loop, C=0.5, N=50")
    # And the launch latency flag: it shifts both events equally, so the elapsed time of a
    # GPU-bound zero-mode loop is unchanged, while the run ends at L' + N x d.
    r = run("latency", "event_loop", "step", "10", flags=zero("--launch-latency-us", "7.5"))
    check_close(r.number("elapsed_us"), 125.0, "zero mode, L=7.5")
    check_eq(sim_ps(r), us_ps(7.5 + 125), "simulated_time_ps with L=7.5")


def case_copies():
    nbytes = 1 << 20
    combos = [
        # kind, api, memory, does the call block the host?
        ("h2d", "sync", "pinned", True),
        ("h2d", "sync", "pageable", True),
        ("d2h", "sync", "pinned", True),
        ("d2h", "sync", "pageable", True),
        ("d2d", "sync", "pinned", False),  # cudaMemcpy D2D returns at once
        ("h2d", "async", "pinned", False),
        ("h2d", "async", "pageable", False),
        ("d2h", "async", "pinned", False),
        ("d2h", "async", "pageable", True),  # into pageable memory: blocks
        ("d2d", "async", "pinned", False),
    ]
    for kind, api, mem, blocks in combos:
        name = f"copy_{kind}_{api}_{mem}"
        r = run(name, "copies", kind, api, mem, flags=zero())
        # The event before the copy completes at 0 + L = 4; the copy is stamped at host 0, so
        # it runs 4 .. 4 + cost. A blocking call moves the host to 4 + cost, so querying the
        # earlier event succeeds; otherwise the host is still at 0 < 4 and it is not ready.
        check_eq(r.value("blocked"), "1" if blocks else "0", f"{name}: blocked the host")
        cost = copy_cost_ps(kind, nbytes, mem == "pinned")
        # The stream sync at the end moves the host to 4 + cost: the run's end.
        check_eq(sim_ps(r), us_ps(L) + cost, f"{name}: simulated_time_ps (cost {cost} ps)")
    # Spot-check the formula against hand arithmetic for the documented H100 figures
    # (PCIe 50 GB/s, HBM 3350 GB/s at 0.90, latencies 5 and 2 us, pageable at 0.5):
    # 1 MiB pinned H2D = 5 us + 1048576 / 50e9 s = 5 + 20.97152 = 25.97152 us.
    check(abs(copy_cost_ps("h2d", nbytes, True) - 25_971_520) <= 1, "pinned H2D 1 MiB = 25.97152 us")
    # pageable: 5 + 1048576 / 25e9 s = 5 + 41.94304 = 46.94304 us.
    check(abs(copy_cost_ps("d2h", nbytes, False) - 46_943_040) <= 1, "pageable D2H 1 MiB")
    # D2D: 2 + 2 x 1048576 / (3350e9 x 0.90) s = 2 + 0.69557280 us (rounded up to whole ps).
    check(abs(copy_cost_ps("d2d", nbytes, True) - (2_000_000 + 695_573)) <= 1, "D2D 1 MiB")


def case_shadow():
    r = run("shadow", "copies", "shadow", flags=zero())
    check_eq(r.value("shadow"), "ok", "bytes written by small copies read back")


def gpu_table(r):
    return {g["gpu"]: g for g in r.report["gpus"]} if r.report else {}


def case_multi_host():
    r = run("multi_host", "multi_gpu", flags=zero("--hosts", "2", "--gpus-per-host", "2"))
    # The command runs once per host, with PHANTORA_HOST set to its index.
    check_eq(sorted(r.values("host")), ["0 devices 2 current 1", "1 devices 2 current 1"],
             "one process per host")
    if not r.report:
        return
    rep = r.report
    check_eq(rep["cluster"]["hosts"], 2, "cluster hosts")
    check_eq(len(rep["ranks"]), 2, "ranks in report.json")
    check_eq(sorted(k["host"] for k in rep["ranks"]), [0, 1], "rank hosts")
    # Per host: device 0 runs busy_a 4 -> 104 while device 1 runs busy_b 4 -> 254 (devices
    # do not wait for each other); the syncs move the host to 104, then 254.
    check_eq(sim_ps(r), us_ps(254), "simulated_time_ps")
    for k in rep["ranks"]:
        check(abs(k["host_clock_s"] - 254e-6) < 1e-12, f"host {k['host']} clock {k['host_clock_s']}")
    gpus = gpu_table(r)
    check_eq(len(gpus), 4, "GPUs in report.json")
    for g in range(4):
        host, dev = divmod(g, 2)
        # Device d of host h allocated (h x 2 + d + 1) MiB = (g + 1) MiB.
        check_eq(gpus[g]["peak_memory_bytes"], (g + 1) << 20, f"peak memory of GPU {g}")
        busy = 100e-6 if dev == 0 else 250e-6
        check(abs(gpus[g]["busy_s"] - busy) < 1e-12, f"GPU {g} busy {gpus[g]['busy_s']} != {busy}")


def case_multi_gpu():
    r = run("multi_gpu", "multi_gpu", flags=zero("--gpus-per-host", "4"))
    check_eq(r.value("host"), "0 devices 4 current 3", "one process, four devices")
    check_eq(sim_ps(r), us_ps(254), "devices run in parallel: max(104, 254)")
    gpus = gpu_table(r)
    for g in range(4):
        check_eq(gpus.get(g, {}).get("peak_memory_bytes"), (g + 1) << 20, f"peak memory of GPU {g}")
    # CUDA_VISIBLE_DEVICES=2,3: ordinals 0 and 1 are physical GPUs 2 and 3.
    r = run("visible", "multi_gpu", flags=zero("--gpus-per-host", "4"),
            env={"CUDA_VISIBLE_DEVICES": "2,3"})
    check_eq(r.value("host"), "0 devices 2 current 1", "two visible devices")
    gpus = gpu_table(r)
    check_eq([gpus.get(g, {}).get("peak_memory_bytes") for g in range(4)],
             [0, 0, 1 << 20, 2 << 20], "memory lands on the physical GPUs 2 and 3")


def case_oom():
    r = run("oom", "oom", flags=zero("--gpus-per-host", "2"))
    total = h100()["device"]["total_global_mem"]  # 85017755648 B (81079 MiB)
    gib = 1 << 30
    check_eq(int(r.value("total") or -1), total, "cudaMemGetInfo total = H100 capacity")
    check_eq(int(r.value("free_initial") or -1), total, "all free at start")
    check_eq(r.value("over_capacity"), "cudaErrorMemoryAllocation", "capacity + 1 byte")
    check_eq(r.value("over_capacity_ptr_null"), "1", "failed cudaMalloc sets the pointer to 0")
    check_eq(r.value("last_error"), "cudaErrorMemoryAllocation", "sticky last error")
    check_eq(r.value("last_error_cleared"), "cudaSuccess", "cudaGetLastError clears it")
    check_eq(int(r.value("free_after_60g") or -1), total - 60 * gib, "free after 2 x 30 GiB")
    # 90 GiB > 79.2 GiB capacity.
    check_eq(r.value("third_30g"), "cudaErrorMemoryAllocation", "a third 30 GiB")
    check_eq(int(r.value("free_dev1") or -1), total, "device 1 has its own capacity")
    check_eq(int(r.value("free_after_free") or -1), total - 30 * gib, "free after one cudaFree")
    check_eq(r.value("retry_30g"), "cudaSuccess", "30 GiB fits again")
    check_eq(r.value("exact_capacity"), "cudaSuccess", "exactly the capacity fits")
    check_eq(r.value("one_more_byte"), "cudaErrorMemoryAllocation", "nothing beyond it")
    check_eq(int(r.value("free_full") or -1), 0, "no memory left")
    gpus = gpu_table(r)
    # Peaks: 60 GiB, then the whole capacity in one block.
    check_eq(gpus.get(0, {}).get("peak_memory_bytes"), total, "peak memory of GPU 0")
    check_eq(gpus.get(1, {}).get("peak_memory_bytes"), 0, "peak memory of GPU 1")


def case_mempool():
    r = run("mempool", "mempool", flags=zero("--gpus-per-host", "1"))
    mib = 1 << 20
    total = h100()["device"]["total_global_mem"]
    check_eq(r.value("default_is_current"), "1", "the default pool is the device's current pool")
    check_eq(int(r.value("threshold") or -1), 1 << 30, "release threshold reads back")
    check_eq(int(r.value("used_two") or -1), 96 * mib, "64 MiB async + 32 MiB from the pool")
    check_eq(int(r.value("device_used") or -1), 96 * mib, "they count against the device")
    check_eq(int(r.value("used_after_free") or -1), 32 * mib, "cudaFreeAsync returns 64 MiB")
    check_eq(int(r.value("high") or -1), 96 * mib, "the high-water mark stays")
    check_eq(r.value("over_capacity"), "cudaErrorMemoryAllocation", f"{total} B on top of 32 MiB")
    check_eq(int(r.value("own_pool_used") or -1), 16 * mib, "a created pool set as current")
    check_eq(r.value("destroy_default"), "cudaErrorInvalidValue", "the default pool cannot be destroyed")
    gpus = gpu_table(r)
    check_eq(gpus.get(0, {}).get("peak_memory_bytes"), 96 * mib, "peak memory of GPU 0")


def case_graph():
    # Graph: g_a(10) -> {g_b(30)} and {g_c(20) -> g_c(20)} -> g_d(5).
    # Paths: a+b+d = 45; a+c+c+d = 55 (longest). The sum of all nodes would be 85.
    for k in (1, 5):
        r = run(f"graph_{k}", "graph", str(k), flags=zero())
        check_eq(r.value("nodes"), "5", "captured nodes")
        # K launches back to back between two events on s1: K x 55.
        check_close(r.number("elapsed_us"), 55.0 * k, f"graph launched {k} times")
        # start at 4, stop at 4 + 55K, reached by the event sync.
        check_eq(sim_ps(r), us_ps(4 + 55 * k), f"simulated_time_ps, K={k}")
        if r.report:
            check_eq(r.report["op_counts"].get("graph"), k, "graph launches in op_counts")


def case_unimplemented():
    r = run("unimplemented", "unimplemented", flags=zero(), expect_ok=False)
    check(r.rc != 0, f"phantora must exit non-zero (got {r.rc})")
    check("cudaMemcpy3D (called from unimplemented) is not implemented" in r.stderr + r.stdout,
          "the message names cudaMemcpy3D and the program that called it")
    check("Please report which program needs it" in r.stderr + r.stdout,
          "a caller with no known cause is asked to report it")
    check("before" in r.stdout, "the program ran up to the call")
    check("after" not in r.stdout, "the program must not continue past the call")
    if r.report:
        check_eq(r.report["status"], "failed", "report status")


def case_managed():
    """cudaMallocManaged beside cudaMalloc and cudaHostAlloc (programs/managed.cu): managed memory
    is host memory the program reads back as written, is not counted against the GPU (the
    peak is the 64 MiB of cudaMalloc alone, not 64 + 256), and cudaFree releases it once;
    cudaFreeHost refuses it and cudaFree refuses pinned memory, as CUDA does."""
    r = run("managed", "managed", flags=zero())
    check("done" in r.stdout, "the program ran to its end")
    check("managed sum 523776" in r.stdout, "the host reads what it wrote: 0 + 1 + ... + 1023")
    for line in ("cudaFreeHost(managed) cudaErrorInvalidValue",
                 "cudaFree(managed) cudaSuccess",
                 "cudaFree(managed) again cudaErrorInvalidValue",
                 "cudaFree(pinned) cudaErrorInvalidValue",
                 "cudaFreeHost(pinned) cudaSuccess"):
        check(line in r.stdout, f"prints '{line}'")
    check_eq(r.report["gpus"][0]["peak_memory_bytes"], 64 << 20,
             "peak memory: cudaMalloc's 64 MiB only")


def case_llmc_kernels():
    """Kernels with llm.c's names and parameter lists (programs/llmc_kernels.cu) priced as the
    bytes they move, from their grids and integer arguments (docs/kernels.md, "llm.c"), by hand:
    GELU over 2^24 bf16 values reads and writes each once (4,096 blocks of 512 threads, 16 bytes
    a thread); the classifier over 4 x 256 rows of 50,257 logits reads each row and its int
    target and writes the loss and the row of gradients; AdamW over 2^20 parameters reads the
    bf16 gradient and the fp32 moments and master copy and writes all but the gradient (14 + 14
    bytes each), or without a master copy reads the bf16 parameter instead and writes no copy
    (12 + 10). time = floor + (read + written) / (HBM x memory efficiency). The same GELU in a
    namespace is another program's kernel: default-priced, listed by name."""
    r = run("llmc_kernels", "llmc_kernels", flags=zero())
    check("done" in r.stdout, "the program ran to its end")
    n, rows, v, params = 1 << 24, 4 * 256, 50257, 1 << 20
    expected = [
        ("gelu_forward_kernel2", 2 * n * 2),
        ("fused_classifier_kernel5", (rows * v * 2 + rows * 4) + (rows * 2 + rows * v * 2)),
        ("adamw_kernel3", params * (14 + 14)),
        ("adamw_kernel3", params * (12 + 10)),
    ]
    events = trace_events(r)
    if events is None:
        return
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    check_eq(len(spans), 5, "five kernel spans")
    for (kernel, moved), span in zip(expected, spans):
        want_us = memory_bound_us(moved)
        check(kernel in span.get("name", "") and span.get("args", {}).get("source") == "modelled"
              and abs(span["dur"] - want_us) < 0.01,
              f"{span.get('name')}: {span['dur']} us ({span.get('args', {}).get('source')}), "
              f"{kernel} by hand {want_us:.6f} us")
    if len(spans) == 5:
        check(spans[4].get("args", {}).get("source") == "default",
              f"other::gelu_forward_kernel2 is default-priced ({spans[4].get('name')})")
    listed = [k["kernel"] for k in r.report["gpu_time"].get("defaulted_kernels", [])]
    check_eq(listed, ["other::gelu_forward_kernel2"], "the kernels listed as default-priced")


def case_static_runtime():
    """A program built with nvcc's default, the CUDA runtime linked in statically
    (programs/static_runtime.cu, `-cudart static`): that runtime reaches the driver through
    cuGetProcAddress, which the shim cannot serve. The run stops at the first CUDA call, naming
    the entry point and the build flag that makes the program one phantora can run."""
    r = run("static_runtime", "static_runtime", flags=zero(), expect_ok=False)
    out = r.stderr + r.stdout
    check(r.rc != 0, f"phantora must exit non-zero (got {r.rc})")
    check(re.search(r"phantora: cuGetProcAddress\w*( \(called from [^)]*\))? is not "
                    r"implemented", out) is not None, "the message names the entry point")
    check("libcudart_static" in out, "the message names the statically linked runtime")
    check("nvcc -cudart shared" in out, "the message gives the build flag that fixes it")
    check("Please report" not in out, "a known cause is not reported as an unknown one")
    check("before" in r.stdout and "after" not in r.stdout, "the program stops at the call")


def case_cudnn_unsimulated():
    """cuDNN's handle calls and legacy tensor descriptors are the shim's
    (programs/cudnn_handle.cu), the rest of its legacy API outside batch normalization is not: a
    local response normalization's first call stops the run naming the entry point and what the
    shim simulates of cuDNN."""
    r = run("cudnn_unsimulated", "cudnn_handle", flags=zero(), expect_ok=False)
    out = r.stderr + r.stdout
    check(r.rc != 0, f"phantora must exit non-zero (got {r.rc})")
    check("handle ok 1" in r.stdout, "cudnnCreate, cudnnSetStream and cudnnGetStream work")
    check("tensor ok 1 bytes 240" in r.stdout, "a legacy tensor descriptor is set and sized")
    check(re.search(r"phantora: cudnnCreateLRNDescriptor( \(called from [^)]*\))? is not "
                    r"implemented", out) is not None, "the message names the entry point")
    check("cuDNN is simulated for" in out, "the message says what of cuDNN is simulated")
    check("torch.backends.cudnn.enabled = False" in out,
          "the message names the PyTorch switch that keeps a call off cuDNN")
    check("before" in r.stdout and "after" not in r.stdout, "the program stops at the call")


def case_cudnn_batch_norm():
    """cuDNN's legacy batch normalization without PyTorch (programs/cudnn_batch_norm.cu): the
    older ForwardTraining and Backward and ForwardInference, each one kernel priced as a
    memory-bound norm from its descriptors' bytes, by hand: x is 8 x 16 x 32 x 32 half (X =
    262,144 bytes), the derived per-channel tensors 1 x 16 x 1 x 1 float (P = 64 bytes).
    Training reads x, scale, bias, running mean and variance and writes y, the running and the
    saved statistics; backward reads x, dy, scale and the saved statistics and writes dx and
    the scale and bias gradients; inference reads x, scale, bias, mean and variance and writes
    y. time = floor + (read + written) / (HBM x memory efficiency). Calls cuDNN refuses send no
    kernel; the running variance the kernel wrote reads back as zeros."""
    r = run("cudnn_batch_norm", "cudnn_batch_norm", flags=zero())
    check("done" in r.stdout, "the program ran to its end")
    check("channel 1 16 1 1 type 0" in r.stdout, "the derived descriptor: 1 x C x 1 x 1 float")
    for what in ("other_dims", "no_handle", "unpaired", "bad_mode"):
        check_eq(r.value(what), "2000", f"{what}: CUDNN_STATUS_BAD_PARAM")
    check_eq(r.value("running_var"), "0", "the running variance the kernel wrote reads as zeros")
    X, P = 8 * 16 * 32 * 32 * 2, 16 * 4
    expected = {
        "cudnn_batch_norm_forward_training": (X + 4 * P) + (X + 4 * P),
        "cudnn_batch_norm_backward": (2 * X + 3 * P) + (X + 2 * P),
        "cudnn_batch_norm_forward_inference": (X + 4 * P) + X,
    }
    events = trace_events(r)
    if events is None:
        return
    for kernel, moved in expected.items():
        spans = [e for e in events if e.get("ph") == "X" and e.get("name") == kernel]
        if check_eq(len(spans), 1, f"{kernel} spans"):
            want_us = memory_bound_us(moved)
            check(spans[0].get("args", {}).get("source") == "modelled"
                  and abs(spans[0]["dur"] - want_us) < 0.01,
                  f"{kernel}: {spans[0]['dur']} us, by hand {want_us:.6f} us")


def case_gemm_beta():
    """Beta read on the host for every legacy GEMM entry point (programs/gemm_beta.cu): each
    called with beta = 0 and then beta != 0 (i for the complex types) on the shape m = 64 + e;
    the run's missing GEMM signatures must hold beta=0 and beta=1 for every m."""
    db = os.path.join(ARGS.work, "gemm_beta.db")
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    r = run("gemm_beta", "gemm_beta", flags=zero("--kernel-db", db))
    entry_points = int(r.value("entry_points") or 0)
    check_eq(entry_points, 17, "the program called 17 entry points")
    p = subprocess.run([ARGS.phantora, "db", "missing", db, "--csv", "-"], capture_output=True,
                       text=True)
    seen = {}
    for line in p.stdout.splitlines():
        m = re.search(r"gemm:m=(\d+),.*,beta=([01]),", line)
        if m:
            seen.setdefault(int(m.group(1)), set()).add(m.group(2))
    for e in range(entry_points):
        check_eq(seen.get(64 + e), {"0", "1"}, f"entry point {e} (m = {64 + e}): beta 0 and 1")


def case_driver_vmm():
    r = run("driver_vmm", "driver_vmm", flags=zero("--gpus-per-host", "1"))
    check("done" in r.stdout, "the program ran to its end")
    chunk = int(r.value("granularity") or 0)
    check(chunk > 0, "an allocation granularity")
    check_eq(int(r.value("reserved_used") or -1), 0, "a reservation takes addresses, no memory")
    check_eq(int(r.value("mapped_used") or -1), 2 * chunk, "two physical chunks count")
    check_eq(int(r.value("after_release_used") or -1), chunk, "unmapped and released: returned")
    check_eq(int(r.value("after_free_used") or -1), 0, "everything returned")
    gpus = gpu_table(r)
    check_eq(gpus.get(0, {}).get("peak_memory_bytes"), 2 * chunk, "peak memory of GPU 0")


def case_nvrtc_kernel():
    # NVRTC asks the driver for a private table while compiling (cuGetExportTable); the answer
    # "not supported" lets it compile on, and the cubin it makes loads and launches.
    r = run("nvrtc_kernel", "nvrtc_kernel", flags=zero("--gpus-per-host", "1"))
    check("not implemented" not in r.stderr, "no call the simulator does not implement")
    check_eq(r.value("compile"), "0", "nvrtcCompileProgram succeeds (NVRTC_SUCCESS)")
    check(int(r.value("cubin_bytes") or 0) > 0, "a cubin")
    check("done" in r.stdout, "the program ran to its end")
    # Host clock 0: the event pair brackets the one launch, pinned at 25 us (times.csv).
    check_close(r.number("launch_us"), 25.0, "rt_scale's pinned time between the events")
    if r.report:
        top = {k["kernel"]: k for k in r.report["top_kernels"]}
        check_eq(top.get("rt_scale", {}).get("count"), 1, "rt_scale launched once")


def case_nvidia_smi():
    # The nvidia-smi stand-in on PATH answers for the simulated GPUs from the NVML stand-in:
    # names and memory from the preset (gpus.toml), and options that would change a GPU fail.
    script = ("nvidia-smi --query-gpu=index,name,memory.total,compute_cap,power.draw "
              "--format=csv,noheader,nounits; nvidia-smi -L; nvidia-smi -i 1 "
              "--query-gpu=index --format=csv; nvidia-smi -pl 500; echo pl_rc=$?; "
              "nvidia-smi --query-gpu=bogus --format=csv; echo bogus_rc=$?; "
              "nvidia-smi | grep -c 'NVIDIA H100 80GB HBM3'; command -v nvidia-smi")
    r = run("nvidia_smi", "/bin/sh", "-c", script,
            flags=zero("--gpus-per-host", "2", "--gpu", "h100"))
    lines = r.stdout.splitlines()
    name = h100()["device"]["name"]
    mib = h100()["device"]["total_global_mem"] >> 20
    for g in range(2):
        check(f"{g}, {name}, {mib}, 9.0, [N/A]" in lines, f"GPU {g}'s CSV row")
        check(any(line.startswith(f"GPU {g}: {name} (UUID: GPU-") for line in lines),
              f"GPU {g} listed")
    check("index" in lines and "1" in lines, "-i 1 selects the second GPU, with a header")
    check("pl_rc=2" in lines, "a power limit cannot be set: exit 2")
    check("bogus_rc=2" in lines, "an unknown field: exit 2")
    check("2" in lines, "the table has a row per GPU")
    # Outside `phantora run` it says there is no simulated GPU, as the real tool says it cannot
    # reach the driver (exit 9).
    path = next((line for line in lines if line.endswith("/nvidia-smi")), None)
    check(path is not None, "nvidia-smi is found on PATH")
    if path:
        alone = subprocess.run([path], capture_output=True, text=True, timeout=30)
        check_eq(alone.returncode, 9, "outside phantora run: exit 9")
        check("phantora run" in alone.stdout, "and says to run under phantora run")


def case_driver_modules():
    cubin = os.path.join(ARGS.programs, "driver_module_kernels.cubin")
    r = run("driver_modules", "driver_modules", cubin, flags=zero())
    check("done" in r.stdout, "the program ran to its end")
    # cuda.h: CUDA_ERROR_FILE_NOT_FOUND = 301, CUDA_ERROR_NOT_FOUND = 500,
    # CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_INVALID_VALUE = 1.
    check_eq(r.value("load_missing_file"), "301", "cuModuleLoad of a missing file")
    check_eq(r.value("get_missing_kernel"), "500", "a name the cubin does not hold")
    check_eq(r.value("get_prefix_kernel"), "500", "a prefix of a kernel's name")
    check_eq(r.value("get_suffix_kernel"), "500", "a suffix of a kernel's name")
    check_eq(r.value("get_after_unload"), "400", "cuModuleGetFunction on an unloaded module")
    check_eq(r.value("device_pointer_same"), "1", "device pointer of device memory is itself")
    check_eq(r.value("memory_type"), "2", "CU_MEMORYTYPE_DEVICE (2) for cudaMalloc memory")
    check_eq(r.value("host_pointer_attr"), "1", "pageable host memory is not device-reachable")
    check_eq(r.value("tensor_map_ok"), "0", "cuTensorMapEncodeTiled of a 2-D bf16 tile")
    check_eq(r.value("tensor_map_misaligned"), "1", "tensor map of an address not 16-B aligned")
    check_eq(r.value("tensor_map_bad_stride"), "1", "tensor map row stride not a multiple of 16")
    check_eq(r.value("tensor_map_big_box"), "1", "tensor map box over 256 elements")
    check_eq(r.value("max_threads"), "1024", "max threads per block (H100)")
    check_eq(r.value("max_dynamic_shared"), str(100 << 10), "the dynamic shared memory set")
    # H100: 227 KiB opt-in shared memory per block; 300 KiB is refused when set or launched.
    check_eq(r.value("set_too_much_shared"), "1", "setting 300 KiB of shared memory")
    check_eq(r.value("launch_too_much_shared"), "1", "launching with 300 KiB of shared memory")
    # Host clock 0 (zero mode): everything is queued on one stream, start recorded at L.
    # Two dm_scale (pinned 40 us) back to back: 80 us; then two dm_shift (60 us): 120 us.
    check_close(r.number("launch_kernel_us"), 80.0, "two cuLaunchKernel of dm_scale")
    check_close(r.number("launch_kernel_ex_us"), 120.0, "two cuLaunchKernelEx of dm_shift")
    if r.report:
        top = {k["kernel"]: k for k in r.report["top_kernels"]}
        for name, count, us in (("dm_scale", 2, 80), ("dm_shift", 2, 120)):
            k = top.get(name, {})
            check_eq(k.get("count"), count, f"{name} launches in the report")
            check_eq(k.get("source"), "pinned", f"{name} cost source")
            check(abs(k.get("total_s", 0) - us * 1e-6) < 1e-12, f"{name} total {us} us")
        check_eq(r.report["op_counts"].get("kernel"), 4, "kernel count")


def undefined_symbols(path):
    nm = shutil.which("nm")
    if nm is None:
        return None
    out = subprocess.run([nm, "-D", "--undefined-only", path], capture_output=True, text=True)
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def case_per_thread_default_stream():
    # Legacy build: start on the legacy stream at 4; busy_a on blocking s1 waits for it:
    # 4 -> 104; busy_b on the legacy stream waits for s1: 104 -> 354; stop 354: 350.
    r = run("legacy", "default_stream_legacy", flags=zero())
    check_close(r.number("elapsed_us"), 350.0, "legacy default stream")
    check_eq(r.value("readback"), "1 2 3 4", "legacy build: bytes read back")
    # Per-thread build: stream 0 is the thread's own blocking stream, which only synchronises
    # with the legacy stream (unused here), not with s1: start 4; busy_b 4 -> 254; stop 254.
    r = run("per_thread", "default_stream_per_thread", flags=zero())
    check_close(r.number("elapsed_us"), 250.0, "per-thread default stream")
    check_eq(r.value("readback"), "1 2 3 4", "per-thread build: bytes read back")
    syms = undefined_symbols(os.path.join(ARGS.programs, "default_stream_per_thread"))
    if syms is not None:
        check(any(s.endswith("_ptsz") for s in syms), "per-thread build calls _ptsz entry points")
        legacy = undefined_symbols(os.path.join(ARGS.programs, "default_stream_legacy"))
        check(not any(s.endswith(("_ptsz", "_ptds")) for s in legacy), "legacy build does not")


def case_model_repeatable():
    for prog, args in (("event_loop", ("step", "100")), ("two_streams", ()), ("graph", ("3",))):
        a = run(f"model_{prog}_1", prog, *args, flags=model())
        b = run(f"model_{prog}_2", prog, *args, flags=model())
        check(sim_ps(a) is not None and sim_ps(a) == sim_ps(b),
              f"{prog}: model mode must repeat exactly ({sim_ps(a)} vs {sim_ps(b)})")
        check_eq(a.stdout, b.stdout, f"{prog}: same program output in both runs")
        if a.report:
            check_eq(a.report["cpu_time"], "model", "cpu_time")
            # Each of the run's API records charged 2 us of host time: the run takes longer
            # than the same run in zero mode.
            z = run(f"zero_{prog}", prog, *args, flags=zero())
            check(sim_ps(a) > sim_ps(z), f"{prog}: model time {sim_ps(a)} > zero time {sim_ps(z)}")


def case_regression_gate():
    # event_loop: 100 launches of `step` between two events, zero CPU time: the run ends at
    # 4 + 100 x 12.5 = 1254 us (case_event_loop). With `step` pinned at 13.0 us instead it
    # ends at 4 + 1300 = 1304 us: 3.99 % slower, past a 2 % gate and within a 5 % one.
    work = os.path.join(ARGS.work, "regression_gate")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    slower = os.path.join(work, "slower.csv")
    with open(ARGS.times, encoding="utf-8") as f:
        text = f.read().replace("step,12.5", "step,13.0")
    with open(slower, "w", encoding="utf-8") as f:
        f.write(text)
    base = run("gate_base", "event_loop", "step", "100", flags=zero())
    base_report = os.path.join(base.out_dir, "report.json")
    same = run("gate_same", "event_loop", "step", "100",
               flags=zero("--baseline", base_report, "--max-slowdown", "2%"))
    check_eq(same.rc, 0, "identical run against its baseline: exit status")
    check("+0.00%" in same.stderr and "ok" in same.stderr, "identical run: reported as ok")
    slow_flags = ("--cpu-time", "zero", "--kernel-times", slower, "--baseline", base.out_dir)
    slow = run("gate_slow", "event_loop", "step", "100", flags=slow_flags + ("--max-slowdown", "2%"),
               expect_ok=False)
    check_eq(slow.rc, 3, "slowed run against a 2% gate: exit status")
    check("REGRESSION" in slow.stderr, "slowed run: the regression is named")
    check("+3.99%" in slow.stderr, "slowed run: +3.99% simulated time (1304 / 1254 - 1)")
    # What got slower: the `step` kernel, 1250 us -> 1300 us in total.
    check(any(line.split()[:1] == ["step"] and "1.250 ms" in line and "1.300 ms" in line
              for line in slow.stderr.splitlines()), "slowed run: the step kernel's change is listed")
    loose = run("gate_loose", "event_loop", "step", "100",
                flags=slow_flags + ("--max-slowdown", "5%"))
    check_eq(loose.rc, 0, "slowed run against a 5% gate: exit status")
    # `phantora report A B` says the same, without a gate unless asked.
    proc = subprocess.run([ARGS.phantora, "report", base.out_dir, slow.out_dir],
                          capture_output=True, text=True, timeout=30)
    check_eq(proc.returncode, 0, "phantora report: exit status")
    check("simulated time" in proc.stdout and "+4.0%" in proc.stdout, "phantora report: +4.0%")
    proc = subprocess.run([ARGS.phantora, "report", base.out_dir, slow.out_dir,
                           "--max-slowdown", "1"], capture_output=True, text=True, timeout=30)
    check_eq(proc.returncode, 3, "phantora report --max-slowdown 1: exit status")
    # Step times printed by the job are the headline when both runs have them: medians of
    # 10, 11 (first step left out) and 10, 12 ms.
    def steps(case, times, *more):
        script = "; ".join(f"echo 'step {i} | step time {t} ms'" for i, t in enumerate(times))
        cmd = [ARGS.phantora, "run", "--quiet", "--hosts", "1", "--gpus-per-host", "1", "--out",
               os.path.join(work, case), *more, "--", "sh", "-c", script]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    steps("steps_base", [50, 10, 11])
    with open(os.path.join(work, "steps_base", "report.json"), encoding="utf-8") as f:
        st = json.load(f)["steps"]
    check_eq(st["times_s"], [0.05, 0.01, 0.011], "steps: the printed times, in seconds")
    check_close(st["median_s"], 0.0105, "steps: median of 10 and 11 ms, the first left out")
    proc = steps("steps_slow", [50, 10, 12], "--baseline", os.path.join(work, "steps_base"))
    check_eq(proc.returncode, 3, "step-time gate: 11 ms vs 10.5 ms is +4.76%")
    check("step time (median) +4.76%" in proc.stderr, "step-time gate: headline is the step time")
    with open(os.path.join(work, "steps_slow", "job.log"), encoding="utf-8") as f:
        check_eq(f.read().count("step time"), 3, "job.log keeps the job's output")


def case_whole_lines():
    # Host 0 writes half a line, waits, then ends it; host 1 writes a whole line meanwhile. The
    # terminal (phantora's stdout) gets both lines whole, host 1's first, not "MFU 15.0%rank 1:
    # ...". job.log keeps them too.
    work = os.path.join(ARGS.work, "whole_lines")
    shutil.rmtree(work, ignore_errors=True)
    script = ("if [ \"$PHANTORA_HOST\" = 0 ]; then printf 'MFU 15.0%%'; sleep 0.4; printf '\\n'; "
              "else sleep 0.1; echo 'rank 1: peak memory 1.00 GiB'; fi")
    cmd = [ARGS.phantora, "run", "--quiet", "--hosts", "2", "--gpus-per-host", "1", "--out", work,
           "--", "sh", "-c", script]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    print(f"$ {' '.join(cmd)}\nrc={proc.returncode}\n{proc.stdout}{proc.stderr}")
    check_eq(proc.returncode, 0, "whole lines: exit status")
    check_eq(proc.stdout, "rank 1: peak memory 1.00 GiB\nMFU 15.0%\n", "whole lines on the terminal")
    with open(os.path.join(work, "job.log"), encoding="utf-8") as f:
        check_eq(sorted(f.read().splitlines()), ["MFU 15.0%", "rank 1: peak memory 1.00 GiB"],
                 "job.log's lines")
    # A Python job prints each line in one write (sitecustomize.py): line buffering instead of
    # PYTHONUNBUFFERED's write-through, which writes print's text and newline separately.
    cmd = [ARGS.phantora, "run", "--quiet", "--hosts", "1", "--gpus-per-host", "1", "--out", work,
           "--", sys.executable, "-c",
           "import sys; print(sys.stdout.line_buffering, sys.stdout.write_through, "
           "sys.stderr.line_buffering)"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    print(f"$ {' '.join(cmd)}\nrc={proc.returncode}\n{proc.stdout}{proc.stderr}")
    check_eq(proc.stdout, "True False True\n", "Python under phantora: line-buffered stdout/stderr")


def case_inductor_cache_per_prices():
    """The start-up hook gives torch.compile one cache directory per set of prices
    (sitecustomize.py, tools/src/prices_key.hpp): phantora-GPU-HASH inside the user's
    TORCHINDUCTOR_CACHE_DIR, or inside inductor's default; the same in a child process."""
    code = ("import os, subprocess, sys; print(os.environ['TORCHINDUCTOR_CACHE_DIR']); "
            "sys.stdout.flush(); subprocess.run([sys.executable, '-c', "
            "'import os; print(os.environ[\"TORCHINDUCTOR_CACHE_DIR\"])'], check=True)")
    user_dir = os.path.join(ARGS.work, "inductor-cache")

    def cache_dirs(case, gpu, *more, user=True):
        # empty: unset for the hook, whatever the environment of the tests holds
        env = {"TORCHINDUCTOR_CACHE_DIR": user_dir if user else ""}
        r = run(case, sys.executable, "-c", code, env=env,
                flags=("--hosts", "1", "--gpus-per-host", "1", "--cpu-time", "zero",
                       "--gpu", gpu, *more))
        lines = r.stdout.splitlines()
        check_eq(len(lines), 2, f"{case}: the process and its child each print the directory")
        if len(lines) == 2:
            check_eq(lines[1], lines[0], f"{case}: the child keeps its parent's directory")
        return lines[0] if lines else ""

    h100 = cache_dirs("cache_h100", "h100")
    m = re.fullmatch(re.escape(user_dir) + r"/phantora-h100-([0-9a-f]{16})", h100)
    if check(m is not None, f"h100: phantora-h100-HASH inside the user's directory ({h100})"):
        check_eq(cache_dirs("cache_h100_again", "h100"), h100, "the same prices, the same key")
        # Another preset with the same device name, and pinned kernel times: other keys.
        check_eq(cache_dirs("cache_500w", "h100-500w"),
                 f"{user_dir}/phantora-h100-500w-{m.group(1)}", "h100-500w: its own directory")
        pinned = cache_dirs("cache_pinned", "h100", "--kernel-times", ARGS.times)
        check(pinned.startswith(f"{user_dir}/phantora-h100-") and pinned != h100,
              f"pinned kernel times: another key ({pinned})")
    default = cache_dirs("cache_default", "h100", user=False)
    check(re.fullmatch(re.escape(tempfile.gettempdir()) +
                       r"/torchinductor_[^/]+/phantora-h100-[0-9a-f]{16}", default) is not None,
          f"no TORCHINDUCTOR_CACHE_DIR: inside inductor's default directory ({default})")


def case_gil_contention():
    # Two Python threads take turns at the GIL for 0.3 s of the main thread's CPU time
    # (programs/gil_contention.py). In model mode neither computing nor waiting for the GIL costs
    # simulated time: the main thread's clock must not move. Before the GIL's switch-interval
    # timeouts were told apart from other timed waits, each turn moved it by 5 ms (55 turns:
    # 275 ms; docs/reliability.md, finding 15).
    r = run("gil_contention", sys.executable, python_program("gil_contention.py"),
            flags=("--hosts", "1", "--gpus-per-host", "1", "--cpu-time", "model"))
    m = re.fullmatch(r"elapsed_ns (\d+) turns (\d+)\n", r.stdout)
    if check(m is not None, f"gil contention: output {r.stdout!r}"):
        check(int(m.group(2)) >= 10, f"gil contention: the threads took turns ({m.group(2)})")
        check_eq(int(m.group(1)), 0, "gil contention: simulated ns the main thread's clock moved")


def case_late_gil_thread():
    # A thread made in C++ asks for the GIL after the interpreter has begun to finalise, from a
    # noexcept frame (programs/late_gil_thread.*; PyTorch's autograd thread does this in a rare
    # order, docs/reliability.md finding 14). Plain CPython before 3.14 ends the thread with
    # pthread_exit and the unwind aborts the process; under phantora the thread hangs, as in
    # CPython 3.14, and the process ends with status 0 once its finalisation is done.
    script = python_program("late_gil_thread.py")
    lib = os.path.join(ARGS.programs, "liblate_gil_thread.so")
    if sys.version_info < (3, 14):
        proc = subprocess.run([sys.executable, script, lib], capture_output=True, text=True,
                              timeout=60)
        print(f"plain: rc={proc.returncode}\n{proc.stdout}{proc.stderr}")
        check_eq(proc.returncode, -signal.SIGABRT, "without phantora: the late thread aborts exit")
        check("terminate called" in proc.stderr, "without phantora: std::terminate's message")
    r = run("late_gil_thread", sys.executable, script, lib,
            flags=("--hosts", "1", "--gpus-per-host", "1"))
    check_eq(r.stdout, "work done\nlate thread: state S, answered 0\n",
             "under phantora: the late thread sleeps, unanswered, while finalisation ends")
    check("terminate called" not in r.stderr, "under phantora: no std::terminate")


def case_memory_gate():
    # alloc: MiB[d] on device d, nothing freed, so GPU d's peak is exactly that. The baseline has
    # 100 and 200 MiB; 220 MiB on GPU 1 is +10.00 %, past a 5 % gate and within a 15 % one.
    # No kernels: simulated time is 0 in every run, so the time gate passes throughout.
    gates = ("--cpu-time", "zero", "--gpus-per-host", "2")
    base = run("mem_base", "alloc", "100", "200", flags=gates)
    check_eq([g["peak_memory_bytes"] for g in base.report["gpus"]], [100 << 20, 200 << 20],
             "baseline: peak memory per GPU")
    same = run("mem_same", "alloc", "100", "200",
               flags=gates + ("--baseline", base.out_dir, "--max-memory-growth", "5%"))
    check_eq(same.rc, 0, "identical run against its baseline: exit status")
    check("peak memory per GPU: +0.00% on GPU 0 (host 0, device 0) (limit +5.00%): ok"
          in same.stderr, "identical run: the memory gate says ok")
    grown = run("mem_grown", "alloc", "100", "220",
                flags=gates + ("--baseline", base.out_dir, "--max-memory-growth", "5%"),
                expect_ok=False)
    check_eq(grown.rc, 3, "GPU 1 +10% against a 5% memory gate: exit status")
    check("peak memory per GPU: +10.00% on GPU 1 (host 0, device 1) (limit +5.00%): REGRESSION"
          in grown.stderr, "the memory regression names GPU 1 and its growth")
    check("  GPU 1 (host 0, device 1): 200.000 MiB -> 220.000 MiB (+10.00%)" in grown.stderr,
          "the grown GPU is listed with both peaks")
    check("GPU 0 (host 0, device 0):" not in grown.stderr, "GPU 0, unchanged, is not listed")
    check("step time" not in grown.stderr and "simulated time +0.00%" in grown.stderr,
          "the time gate still passes (no kernels, no time)")
    loose = run("mem_loose", "alloc", "100", "220",
                flags=gates + ("--baseline", base.out_dir, "--max-memory-growth", "15%"))
    check_eq(loose.rc, 0, "GPU 1 +10% against a 15% memory gate: exit status")
    shrunk = run("mem_shrunk", "alloc", "50", "200",
                 flags=gates + ("--baseline", base.out_dir, "--max-memory-growth", "0"))
    check_eq(shrunk.rc, 0, "less memory passes even a 0% gate")
    # Without --max-memory-growth the gate is off: the grown run passes the time gate alone.
    off = run("mem_off", "alloc", "100", "220", flags=gates + ("--baseline", base.out_dir))
    check_eq(off.rc, 0, "no memory gate unless asked for")
    check("peak memory per GPU" not in off.stderr, "no memory verdict unless asked for")
    # `phantora report A B --max-memory-growth` says the same.
    proc = subprocess.run([ARGS.phantora, "report", base.out_dir, grown.out_dir,
                           "--max-memory-growth", "5%"], capture_output=True, text=True,
                          timeout=30)
    check_eq(proc.returncode, 3, "phantora report --max-memory-growth 5%: exit status")
    check("GPU 1 (host 0, device 1): 200.000 MiB -> 220.000 MiB" in proc.stdout,
          "phantora report names the GPU")
    # The gate needs a baseline; a bad percentage is named. Nothing runs, nothing is written.
    for flags, words in ((("--max-memory-growth", "5%"), ["--max-memory-growth", "--baseline"]),
                         (("--baseline", base.out_dir, "--max-memory-growth", "lots"),
                          ["'lots' is not a percentage"])):
        out = os.path.join(ARGS.work, "mem_refused")
        shutil.rmtree(out, ignore_errors=True)
        proc = subprocess.run([ARGS.phantora, "run", "--out", out, *flags, "--",
                               os.path.join(ARGS.programs, "alloc"), "1"],
                              capture_output=True, text=True, timeout=30)
        check_eq(proc.returncode, 2, f"{flags}: exit status")
        for w in words:
            check(w in proc.stderr, f"{flags}: the error names {w!r}: {proc.stderr.strip()!r}")
        check(not os.path.exists(out), f"{flags}: nothing written")


def run_on_terminal(cmd, timeout=60, columns=200):
    """Runs `cmd` with stdin, stdout and stderr on a new pseudo-terminal `columns` wide, as from
    a user's shell; returns (exit status, everything written to the terminal)."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    out = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: every process holding the terminal has gone
                break
            if not data:
                break
            out += data
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


PROGRESS = re.compile(r"phantora: sim ([\d.]+) (ns|us|ms|s) \| steps (\d+)/4"
                      r"(?: \(last ([\d.]+) ms\))? \| ranks (\d+) \| wall (\d+):(\d\d)"
                      r"(?: \| ETA (\d+):(\d\d))?")


def case_progress_terminal():
    # paced_steps: 4 steps of 100 x `step` (12.5 us) = 1.250 ms each by the events, 0.7 s of real
    # sleep after each: ~3 s of wall time, so the line (redrawn every 0.25 s) shows every stage.
    out = os.path.join(ARGS.work, "progress_tty")
    shutil.rmtree(out, ignore_errors=True)
    job = [os.path.join(ARGS.programs, "paced_steps"), "4", "700"]
    cmd = [ARGS.phantora, "run", "--out", out, *zero("--expect-steps", "4"), "--", *job]
    rc, text = run_on_terminal(cmd)
    print(f"$ {' '.join(cmd)}  (on a terminal)\nrc={rc}\n{text!r}")
    check_eq(rc, 0, "on a terminal: exit status")
    # The terminal sees pieces separated by "erase the line": status lines and the job's lines.
    pieces = text.split("\r\x1b[K")
    frames = [p for p in pieces if p.startswith("phantora: sim ")]
    parsed = [PROGRESS.fullmatch(f) for f in frames]
    check(len(frames) >= 4, f"the progress line was drawn as the job went ({len(frames)} times)")
    check(all(parsed), f"every progress line has the documented form: {frames}")
    parsed = [m for m in parsed if m]
    steps = [int(m.group(3)) for m in parsed]
    ranks_seen = "".join(m.group(5) for m in parsed)
    check(re.fullmatch(r"0*1+0*", ranks_seen),
          f"ranks: none before the job's process connects, none after it exits: {ranks_seen}")
    check(steps == sorted(steps) and steps[-1:] == [4], f"steps seen only grow, to 4/4: {steps}")
    for m in parsed:
        n, eta = int(m.group(3)), m.group(8) is not None
        # The time left needs the pace between two step lines, and is gone once all are seen.
        check(eta == (n in (2, 3)), f"'{m.group(0)}': an ETA exactly when 2 or 3 steps are seen")
        if n >= 1:
            check_eq(m.group(4), "1.250", f"'{m.group(0)}': the last step's printed time")
            # After its last step line the job's one process exits: a redraw may then say 0.
            ranks = ("1",) if n < 4 else ("1", "0")
            check(m.group(5) in ranks, f"'{m.group(0)}': one process, the job's one rank")
        if eta:
            left = int(m.group(8)) * 60 + int(m.group(9))
            # 0.7 s and a little per step: at most 2 steps to go is under 3 s (shown rounded down).
            check(left <= 3, f"'{m.group(0)}': time left for {4 - n} step(s) of ~0.7 s")
    with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
        report = json.load(f)
    last = parsed[-1] if parsed else None
    if last:
        # By its last drawing the line has caught up with the simulation: the run's end, 4 steps
        # of 4 + 1250 us (launch latency, then the kernels back to back) = 5.016 ms.
        check_eq(f"{last.group(1)} {last.group(2)}",
                 f"{report['simulated_time_s'] * 1e3:.3f} ms", "the last line's simulated time")
        check_eq(f"{report['simulated_time_s'] * 1e3:.3f}", "5.016", "simulated end")
    # The job's lines reach the terminal whole, each on a line of its own: after the end of the
    # previous line, or after the progress line was erased.
    for i in range(1, 5):
        check(re.search(rf"(\r\n|\r\x1b\[K)step {i}/4 \| step time 1\.250 ms\r\n", text),
              f"the job's line 'step {i}/4' is intact on the terminal")
    # The line is erased at the end: what follows the last erase is phantora's summary.
    check(not pieces[-1].startswith("phantora: sim ") and "simulated" in pieces[-1],
          f"the progress line is gone before the summary: {pieces[-1][:200]!r}")

    # Not on a terminal (a pipe, as in CI), or with --quiet: no progress line at all.
    piped_out = os.path.join(ARGS.work, "progress_piped")
    shutil.rmtree(piped_out, ignore_errors=True)
    piped = subprocess.run([ARGS.phantora, "run", "--out", piped_out, *zero("--expect-steps", "2"),
                            "--", os.path.join(ARGS.programs, "paced_steps"), "2", "300"],
                           capture_output=True, text=True, timeout=60)
    print(f"(piped) rc={piped.returncode}\n{piped.stderr}")
    check_eq(piped.returncode, 0, "stderr a pipe: exit status")
    check("phantora summary" in piped.stderr, "stderr a pipe: the summary is there (not --quiet)")
    check("\x1b[K" not in piped.stderr and "phantora: sim " not in piped.stderr,
          "stderr a pipe: no progress line")
    quiet_out = os.path.join(ARGS.work, "progress_quiet")
    shutil.rmtree(quiet_out, ignore_errors=True)
    rc, text = run_on_terminal([ARGS.phantora, "run", "--quiet", "--out", quiet_out, *zero(), "--",
                                os.path.join(ARGS.programs, "paced_steps"), "2", "300"])
    check_eq(rc, 0, "--quiet on a terminal: exit status")
    check("\x1b[K" not in text and "phantora: sim " not in text, "--quiet: no progress line")


def template_script(text):
    """A CI template's shell script, run here: with this build's phantora in place of the
    template's /opt/phantora."""
    return text.replace("/opt/phantora/build/tools/phantora", ARGS.phantora)


def case_ci_templates():
    # examples/ci's workflows, their gate scripts run here with the memory gate's job (alloc:
    # 100 and 200 MiB on 2 GPUs; 220 MiB is +10 %, past the templates' 5 %): the first run of a
    # pipeline has no baseline and passes; the regression fails the pipeline with exit 3 naming
    # the GPU; an unchanged run passes.
    import http.server
    import threading
    import yaml
    import zipfile
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "ci")
    alloc = os.path.join(ARGS.programs, "alloc")
    cluster = "--hosts 1 --gpus-per-host 2 --cpu-time zero"
    helptext = subprocess.run([ARGS.phantora, "run", "--help"], capture_output=True, text=True,
                              timeout=30).stdout

    def gate(script, cwd, job, env):
        full = {**os.environ, **env, "CLUSTER": cluster, "JOB": job}
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", template_script(script)],
                              cwd=cwd, env=full, capture_output=True, text=True, timeout=60)
        print(f"$ (template script) JOB={job}\nrc={proc.returncode}\n{proc.stdout}{proc.stderr}")
        return proc

    # --- GitHub Actions ------------------------------------------------------------------
    with open(os.path.join(root, "github-actions.yml"), encoding="utf-8") as f:
        gh = yaml.safe_load(f)
    on = gh.get("on", gh.get(True))  # YAML 1.1 reads a bare `on` as true
    check_eq(on["push"]["branches"], ["main"], "github: the baseline comes from pushes to main")
    check("pull_request" in on, "github: pull requests are gated")
    for flag in gh["env"]["CLUSTER"].split():
        if flag.startswith("--"):
            check(flag in helptext, f"github: CLUSTER's {flag} is a phantora run option")
    steps = {s.get("name"): s for s in gh["jobs"]["simulate"]["steps"]}
    find = steps["Find the baseline"]["with"]["script"]
    check("workflow_id: 'phantora-gate.yml'" in find and ".github/workflows/phantora-gate.yml"
          in open(os.path.join(root, "github-actions.yml"), encoding="utf-8").read(),
          "github: the baseline is looked up under the file name the header tells to use")
    download = steps["Download the baseline"]["with"]
    upload = steps["Keep the run as the new baseline (main)"]
    check(download["name"] == upload["with"]["name"] == "phantora-baseline",
          "github: the gate downloads the artifact main uploads")
    check("runs/ci/report.json" in upload["with"]["path"] and download["path"] == "baseline",
          "github: report.json lands in baseline/ (the artifact keeps paths below runs/ci)")
    script = steps["Simulate, and gate against the baseline"]["run"]
    env = {k: str(v) for k, v in gh["env"].items() if k.startswith("MAX_")}
    work = os.path.join(ARGS.work, "ci_github")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    first = gate(script, work, f"{alloc} 100 200", env)
    check_eq(first.returncode, 0, "github: without a baseline the run passes")
    os.makedirs(os.path.join(work, "baseline"))
    shutil.copy(os.path.join(work, "runs", "ci", "report.json"), os.path.join(work, "baseline"))
    grown = gate(script, work, f"{alloc} 100 220", env)
    check_eq(grown.returncode, 3, "github: a GPU's memory +10% fails the step (exit 3)")
    check("+10.00% on GPU 1 (host 0, device 1) (limit +5.00%): REGRESSION" in grown.stderr,
          "github: the failing step names the GPU")
    same = gate(script, work, f"{alloc} 100 200", env)
    check_eq(same.returncode, 0, "github: an unchanged run passes the gate")
    check("limit +2.00%): ok" in same.stderr and "(limit +5.00%): ok" in same.stderr,
          "github: both gates ran and passed")

    # --- GitLab CI: the gate fetches the baseline from the job artifacts API ----------------
    with open(os.path.join(root, "gitlab-ci.yml"), encoding="utf-8") as f:
        gl = yaml.safe_load(f)
    check_eq(gl["phantora-baseline"]["rules"], [{"if": "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"}],
             "gitlab: the baseline comes from the default branch")
    check("runs/ci/report.json" in gl["phantora-baseline"]["artifacts"]["paths"],
          "gitlab: the baseline job keeps report.json")
    for flag in gl["variables"]["CLUSTER"].split():
        if flag.startswith("--"):
            check(flag in helptext, f"gitlab: CLUSTER's {flag} is a phantora run option")
    work = os.path.join(ARGS.work, "ci_gitlab")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # The artifacts archive as GitLab serves it: the job's paths inside a zip.
    archive = os.path.join(work, "artifacts.zip")
    with zipfile.ZipFile(archive, "w") as z:
        z.write(os.path.join(ARGS.work, "ci_github", "baseline", "report.json"),
                "runs/ci/report.json")
    served = {"archive": None}
    requests = []

    class Api(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append((self.path, self.headers.get("JOB-TOKEN")))
            if (self.path == "/api/v4/projects/42/jobs/artifacts/main/download?job=phantora-baseline"
                    and self.headers.get("JOB-TOKEN") == "job-token" and served["archive"]):
                with open(served["archive"], "rb") as f:
                    body = f.read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_error(404)

        def log_message(self, *a):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: str(v) for k, v in gl["variables"].items() if k.startswith("MAX_")}
    env.update({"CI_API_V4_URL": f"http://127.0.0.1:{server.server_port}/api/v4",
                "CI_PROJECT_ID": "42", "CI_DEFAULT_BRANCH": "main", "CI_JOB_TOKEN": "job-token"})
    env.pop("BASELINE_READ_TOKEN", None)
    script = "\n".join(gl["phantora-gate"]["script"])
    try:
        first = gate(script, work, f"{alloc} 100 220", env)
        check_eq(first.returncode, 0, "gitlab: without a baseline (404) the run passes")
        check("no baseline yet" in first.stdout, "gitlab: and says there is no baseline yet")
        served["archive"] = archive
        grown = gate(script, work, f"{alloc} 100 220", env)
        check_eq(grown.returncode, 3, "gitlab: a GPU's memory +10% fails the job (exit 3)")
        check("+10.00% on GPU 1 (host 0, device 1) (limit +5.00%): REGRESSION" in grown.stderr,
              "gitlab: the failing job names the GPU")
        same = gate(script, work, f"{alloc} 100 200", env)
        check_eq(same.returncode, 0, "gitlab: an unchanged run passes the gate")
    finally:
        server.shutdown()
    check(requests and all(r == ("/api/v4/projects/42/jobs/artifacts/main/download"
                                 "?job=phantora-baseline", "job-token") for r in requests),
          f"gitlab: the artifacts API is asked for the baseline job's archive ({requests})")


def case_bad_cli():
    work = os.path.join(ARGS.work, "bad_cli")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bad_number = os.path.join(work, "bad_number.csv")
    with open(bad_number, "w", encoding="utf-8") as f:
        f.write("kernel,duration_us\nbusy_a,100\nbusy_b,abc\n")
    bad_header = os.path.join(work, "bad_header.csv")
    with open(bad_header, "w", encoding="utf-8") as f:
        f.write("name,time\nbusy_a,100\n")
    negative = os.path.join(work, "negative.csv")
    with open(negative, "w", encoding="utf-8") as f:
        f.write("kernel,duration_us\nbusy_a,-5\n")
    missing = os.path.join(work, "no_such_times.csv")
    cases = [
        # flags, words the message must contain
        (("--gpu", "nosuchgpu"), ["nosuchgpu"]),
        (("--kernel-times", missing), ["no_such_times.csv"]),
        (("--kernel-times", bad_number), ["bad_number.csv:3", "abc"]),
        (("--kernel-times", bad_header), ["bad_header.csv:1", "header"]),
        (("--kernel-times", negative), ["negative.csv:2", "negative"]),
        (("--cpu-time", "sometimes"), ["sometimes"]),
        (("--hosts", "0"), ["--hosts"]),
        (("--gpus-per-host", "0"), ["--gpus-per-host"]),
    ]
    for i, (flags, words) in enumerate(cases):
        out = os.path.join(work, f"out{i}")
        cmd = [ARGS.phantora, "run", "--out", out, *flags, "--",
               os.path.join(ARGS.programs, "two_streams")]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        print(f"$ {' '.join(cmd)}\nrc={proc.returncode}\n{proc.stdout}{proc.stderr}")
        msg = proc.stdout + proc.stderr
        check(proc.returncode != 0, f"{flags}: must exit non-zero")
        for w in words:
            check(w in msg, f"{flags}: message must name '{w}': {msg.strip()!r}")
        check("elapsed_us" not in proc.stdout, f"{flags}: the job must not run")
        check(not os.path.exists(os.path.join(out, "report.json")), f"{flags}: no report.json")
        check(not os.path.exists(out), f"{flags}: nothing created on disk ({out})")
    # Numbers out of range: the option, its accepted range in words and the value, on one
    # line, exit status 2 like every other bad input (not CLI11's 105 with a 309-digit bound).
    numeric = [
        (("--represent-dp", "0"), "--represent-dp must be a whole number of at least 1, got 0"),
        (("--hosts", "0"), "--hosts must be a whole number of at least 1, got 0"),
        (("--hosts", "two"), "--hosts must be a whole number of at least 1, got two"),
        (("--gpus-per-host", "64"), "--gpus-per-host must be a whole number from 1 to 63, got 64"),
        (("--nic-gbytes-per-s", "0"), "--nic-gbytes-per-s must be a number greater than 0, got 0"),
        (("--oversubscription", "0.5"),
         "--oversubscription must be a number of at least 1, got 0.5"),
        (("--moe-imbalance", "-1"), "--moe-imbalance must be a number of at least 0, got -1"),
        (("--timeout", "0"), "--timeout must be a whole number of at least 1, got 0"),
        (("--collective-timeout", "-5"),
         "--collective-timeout must be a whole number of at least 0, got -5"),
    ]
    for i, (flags, line) in enumerate(numeric):
        out = os.path.join(work, f"num{i}")
        cmd = [ARGS.phantora, "run", "--out", out, *flags, "--",
               os.path.join(ARGS.programs, "two_streams")]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        print(f"$ {' '.join(cmd)}\nrc={proc.returncode}\n{proc.stdout}{proc.stderr}")
        check_eq(proc.returncode, 2, f"{flags}: exit status")
        check_eq(proc.stderr, f"phantora: error: {line}\n", f"{flags}: the message")
        check(not os.path.exists(out), f"{flags}: nothing created on disk ({out})")
    # The same words from the other subcommands.
    for sub, flags, line in [
            ("serve", ("--represent-dp", "0"),
             "--represent-dp must be a whole number of at least 1, got 0"),
            ("sweep", ("--hosts", "1,0"), "--hosts must be a whole number of at least 1, got 0"),
            ("sweep", ("--parallel", "0"), "--parallel must be a whole number of at least 1, got 0")]:
        cmd = [ARGS.phantora, sub, *flags, "--out", os.path.join(work, "sub_out")]
        if sub == "sweep":
            cmd += ["--", "true"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        print(f"$ {' '.join(cmd)}\nrc={proc.returncode}\n{proc.stdout}{proc.stderr}")
        check_eq(proc.returncode, 2, f"{sub} {flags}: exit status")
        check_eq(proc.stderr, f"phantora: error: {line}\n", f"{sub} {flags}: the message")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--phantora", required=True)
    p.add_argument("--programs", required=True)
    p.add_argument("--times", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("case", choices=sorted(CASES))
    ARGS = p.parse_args()
    os.makedirs(ARGS.work, exist_ok=True)
    CASES[ARGS.case]()
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed in case '{ARGS.case}':", file=sys.stderr)
        for f in FAILURES:
            print(f"  - {f}", file=sys.stderr)
        return 1
    print(f"case '{ARGS.case}': all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
