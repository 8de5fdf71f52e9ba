"""What the PyTorch checks of a run's trace share: the failures found, expectations that add to
them, and the exit status that reports them."""
import sys


class Failures(list):
    """The checks that failed, in the order they were made."""

    def expect(self, cond, what):
        if not cond:
            self.append(what)

    def modelled(self, spans, model):
        """Every span priced by a cost model (`model` names it in the message), none by default."""
        for e in spans:
            source = e["args"].get("source")
            self.expect(source == "modelled", f"{e['name']} priced by {source}, want {model}")

    def near(self, name, got_us, want_us):
        """A kernel's time against its formula, to 0.01 us (the trace's resolution) + 1e-4."""
        print(f"{name}: {got_us:.3f} us, want {want_us:.3f} us")
        self.expect(abs(got_us - want_us) <= 0.01 + 1e-4 * want_us,
                    f"{name}: {got_us:.3f} us, want {want_us:.3f} us")


def memory_bound_by_hand(spans, expected, rate, floor_us, launches_ok, count_rule):
    """Failures of the kernels in `expected` ({name: (bytes read, bytes written)}): each launch
    modelled at floor + (read + written) / rate, to 0.01 us, and `launches_ok(count)` true of
    their count (`count_rule` says it in the message)."""
    failures = []
    for kernel, (read, written) in expected.items():
        launches = [e for e in spans if e["name"] == kernel]
        want_us = floor_us + (read + written) / rate * 1e6
        print(f"{kernel}: {len(launches)} launches, by hand {want_us:.3f} us "
              f"({read} B read, {written} B written)")
        if not launches_ok(len(launches)):
            failures.append(f"{kernel}: {len(launches)} launches on GPU 0, expected {count_rule}")
        for e in launches:
            source = e.get("args", {}).get("source")
            if source != "modelled" or abs(e["dur"] - want_us) > 0.01:
                failures.append(f"{kernel}: {e['dur']:.3f} us priced by {source}, "
                                f"by hand {want_us:.3f} us")
    return failures


def exit_with(failures):
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)
