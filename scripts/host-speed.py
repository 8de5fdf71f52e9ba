#!/usr/bin/env python3
"""Single-thread host speed for `phantora run --host-speed` (docs/time.md, "Host speed").

In measured mode Phantora charges the CPU time the job's own host code takes on this machine to
the simulated host. An eager PyTorch step's host time is mostly the Python interpreter and
PyTorch's C++ dispatcher: calls with keyword arguments, attribute look-ups, small objects,
dictionaries. This script times such a workload in the Python it runs under and prints a score
(workload rounds per second, the best of several tries). Run it with the same Python version on
the machine that runs `phantora run` and on the host you are planning for; the ratio is the
speed to give:

    --host-speed = (score on the target host) / (score here)

It measures the interpreter, not PyTorch's C++ code or the memory system; where the target is
at hand, a real step's host time (a profile of the job's first steps on it) is the better check.
"""
import argparse
import platform
import sys
import time


class Module:
    def __init__(self, width):
        self.width = width
        self.params = {"weight": [0.0] * 4, "bias": [0.0] * 2}
        self.hooks = []

    def forward(self, x, *, scale=1.0, training=True):
        y = x * scale + self.width
        for name, p in self.params.items():
            if training and name == "weight":
                y += len(p)
        return y


def one_round(modules):
    total = 0.0
    for i, m in enumerate(modules):
        total += m.forward(i, scale=0.5, training=i % 2 == 0)
        key = (i & 7, m.width)
        cache = {key: total, "n": i}
        total += cache["n"] + len(m.hooks)
    return total


def score(seconds_per_try, tries):
    modules = [Module(w) for w in range(64)]
    best = 0.0
    for _ in range(tries):
        rounds, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds_per_try:
            for _ in range(20):
                one_round(modules)
            rounds += 20
        best = max(best, rounds / elapsed)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=0.5, help="length of one try (s)")
    p.add_argument("--tries", type=int, default=5, help="tries; the best counts")
    a = p.parse_args()
    if a.seconds <= 0 or a.tries < 1:
        sys.exit("host-speed: --seconds must be above 0 and --tries at least 1")
    s = score(a.seconds, a.tries)
    print(f"score {s:.0f} rounds/s (Python {platform.python_version()}, {platform.machine()}, "
          f"best of {a.tries} x {a.seconds} s)")


if __name__ == "__main__":
    main()
