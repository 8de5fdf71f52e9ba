"""Shared by the checks of the tables of published programs (examples/modded-nanogpt/records.txt,
examples/llmc/scripts.txt, read by examples/name-table.sh): the table's rows, and the scripts'
refusal of a name it lacks."""
import os
import subprocess
import sys


class Checks:
    """Prints each check as it is made and remembers the failures."""

    def __init__(self):
        self.failures = []

    def expect(self, cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            self.failures.append(what)

    def finish(self, ok_message):
        """Exits naming how many checks failed, or prints `ok_message`."""
        if self.failures:
            sys.exit(f"{len(self.failures)} check(s) failed")
        print(ok_message)


def table_rows(path):
    """The rows of a table: its lines that are not '#' comments, split at whitespace."""
    with open(path) as f:
        return [line.split() for line in f if line.strip() and not line.startswith("#")]


def refuses_unknown_names(checks, scripts, names, env):
    """Each script, given a name the table lacks, exits with status 2 naming it and listing
    the table's names."""
    for script in scripts:
        p = subprocess.run(["bash", script, "no-such-name"], capture_output=True, text=True,
                           env=env)
        base = os.path.basename(script)
        checks.expect(p.returncode == 2, f"{base} refuses an unknown name with status 2 "
                      f"(got {p.returncode})")
        checks.expect("no-such-name" in p.stderr and all(n in p.stderr for n in names),
                      f"{base} names the unknown name and lists the table's names")
