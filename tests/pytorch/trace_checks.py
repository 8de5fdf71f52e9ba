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


def exit_with(failures):
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)
