#!/usr/bin/env python3
"""`phantora run --launcher slurm` through a real Slurm, on this one machine.

Starts munged, slurmctld and slurmd (Debian's packages: munge, slurmctld, slurmd,
slurm-client; scripts/setup.sh installs them) in the foreground-daemon style, configured
here for this machine alone (a temporary directory holds the configuration, key, state, spool
and logs), waits for the node to be idle, then runs the 2 hosts x 2 GPUs reliability job
(tests/reliability/programs/rel_job.cu, 4 ranks, pinned kernel times, --cpu-time model)
twice:
  * `salloc --ntasks 2 ... phantora run --launcher slurm --hosts 2 ...`: two srun tasks on the
    one node stand for two hosts, reaching the daemon over TCP with the run's token;
  * `phantora run --hosts 2 ...` with the local launcher;
and compares the reports: in model CPU mode the simulated figures must be identical. Stops
everything it started, whatever happens.

Exits 77 (ctest's SKIP_RETURN_CODE) saying why when it is not root or Slurm or munge is not
installed. Python 3.11+ standard library only.

Usage: slurm_check.py --phantora BIN --programs DIR --launcher SH --times CSV --work DIR
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

SKIP = 77
NEEDED = ["munged", "slurmctld", "slurmd", "srun", "salloc", "sinfo", "scancel"]


def log(msg):
    print(f"slurm_check: {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """munged + slurmctld + slurmd for this machine, in `root` (a temporary directory)."""

    def __init__(self, root):
        self.root = root
        self.procs = []  # (name, Popen), stopped in reverse order
        self.node = socket.gethostname().split(".")[0]
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for k in [k for k in self.env if k.startswith("SLURM_") and k != "SLURM_CONF"]:
            del self.env[k]  # not inside some other allocation

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def start(self):
        os.makedirs(self.path("munge"), mode=0o700)
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        socket_path = self.path("munge", "munge.socket")
        self.spawn("munged", ["munged", "--foreground", "--force", f"--key-file={key}",
                              f"--socket={socket_path}", f"--pid-file={self.path('munge', 'pid')}",
                              f"--log-file={self.path('munge', 'log')}",
                              f"--seed-file={self.path('munge', 'seed')}"])
        self.wait_for(lambda: os.path.exists(socket_path), 10, "munged's socket")

        for d in ("state", "spool"):
            os.makedirs(self.path(d))
        cpus = max(os.cpu_count() or 1, 1)
        conf = f"""# Written by tests/cluster/slurm_check.py: this machine alone, no cgroups.
ClusterName=phantora-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket_path}
StateSaveLocation={self.path('state')}
SlurmdSpoolDir={self.path('spool')}
SlurmctldPidFile={self.path('slurmctld.pid')}
SlurmdPidFile={self.path('slurmd.pid')}
SlurmctldLogFile={self.path('slurmctld.log')}
SlurmdLogFile={self.path('slurmd.log')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SlurmdParameters=config_overrides
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={self.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""
        with open(self.conf, "w") as f:
            f.write(conf)
        self.spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", self.node])

        def idle():
            r = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], env=self.env,
                               capture_output=True, text=True)
            return r.returncode == 0 and r.stdout.strip() == "idle"
        self.wait_for(idle, 60, f"node {self.node} to be idle in sinfo")

    def spawn(self, name, argv):
        out = open(self.path(f"{name}.out"), "w")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                             start_new_session=True)
        self.procs.append((name, p))

    def wait_for(self, cond, seconds, what):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode} while waiting for "
                                       f"{what}\n{self.logs()}")
            if cond():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}\n{self.logs()}")

    def logs(self):
        text = []
        for name in ("munged.out", "munge/log", "slurmctld.out", "slurmctld.log", "slurmd.out",
                     "slurmd.log"):
            try:
                with open(self.path(name)) as f:
                    lines = f.read().splitlines()[-15:]
                text.append(f"--- {name}\n" + "\n".join(lines))
            except OSError:
                pass
        return "\n".join(text)

    def stop(self):
        # Jobs first, then the daemons (newest first): SIGTERM, then SIGKILL to their groups.
        if self.procs:
            subprocess.run(["scancel", "--quiet", "--name=phantora-check"], env=self.env,
                           capture_output=True, timeout=20, check=False)
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(5)
        self.procs = []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phantora", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--times", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()

    # CI (scripts/test.sh as root) sets PHANTORA_REQUIRE_SLURM=1: there a skip would hide that
    # the Slurm path went untested, so it is a failure instead.
    cannot = 1 if os.environ.get("PHANTORA_REQUIRE_SLURM") == "1" else SKIP
    verdict = "FAIL" if cannot == 1 else "SKIP"
    if os.geteuid() != 0:
        print(f"slurm_check: {verdict}: needs root (it starts slurmctld and slurmd as root)")
        return cannot
    missing = [b for b in NEEDED if shutil.which(b) is None]
    if missing:
        print(f"slurm_check: {verdict}: {', '.join(missing)} not installed (Debian: munge "
              "slurmctld slurmd slurm-client; scripts/setup.sh installs them)")
        return cannot

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    root = tempfile.mkdtemp(prefix="phantora-slurm-")
    cluster = Cluster(root)

    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_signal)
    t0 = time.monotonic()
    try:
        cluster.start()
        log(f"slurmctld and slurmd up on node {cluster.node} in {time.monotonic() - t0:.1f} s")

        job = [args.launcher, os.path.join(args.programs, "rel_job"), "-n", "6", "-k", "4",
               "-s", "64M"]
        flags = ["--hosts", "2", "--gpus-per-host", "2", "--cpu-time", "model",
                 "--kernel-times", args.times]
        # The daemon listens on every address and gives the ranks this machine's name; where
        # that name does not resolve, loopback (all tasks run here anyway).
        try:
            socket.gethostbyname(socket.gethostname())
            advertise = []
        except OSError:
            advertise = ["--advertise", "127.0.0.1"]
            log("this machine's name does not resolve: --advertise 127.0.0.1")
        slurm_out = os.path.join(args.work, "slurm")
        os.makedirs(os.path.join(args.work, "ids-slurm"))
        argv = (["salloc", "--nodes=1", "--ntasks=2", "--overcommit", "--time=5",
                 "--job-name=phantora-check", args.phantora, "run", "--launcher", "slurm",
                 "--out", slurm_out, *flags, *advertise, "--srun-arg=--overcommit",
                 "--timeout", "90", "--", *job, "-u", os.path.join(args.work, "ids-slurm")])
        log("$ " + " ".join(argv))
        t1 = time.monotonic()
        r = subprocess.run(argv, env=cluster.env, capture_output=True, text=True, timeout=150)
        log(f"slurm run: exit {r.returncode} in {time.monotonic() - t1:.1f} s")
        if r.returncode != 0 or "running through srun" not in r.stderr:
            print(r.stdout, r.stderr, cluster.logs(), sep="\n")
            return 1
        for line in r.stderr.splitlines():
            if "listens on" in line:
                log(line)

        local_out = os.path.join(args.work, "local")
        os.makedirs(os.path.join(args.work, "ids-local"))
        argv = [args.phantora, "run", "--out", local_out, *flags, "--timeout", "90", "--", *job,
                "-u", os.path.join(args.work, "ids-local")]
        log("$ " + " ".join(argv))
        t1 = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        log(f"local run: exit {r.returncode} in {time.monotonic() - t1:.1f} s")
        if r.returncode != 0:
            print(r.stdout, r.stderr, sep="\n")
            return 1

        problems = figures.differences(slurm_out, local_out, "slurm", "local", ranks=4)

        # A host that fails ends the step; the run fails naming srun's status.
        failed_out = os.path.join(args.work, "failing")
        argv = ["salloc", "--nodes=1", "--ntasks=2", "--overcommit", "--time=5",
                "--job-name=phantora-check", args.phantora, "run", "-q", "--launcher", "slurm",
                "--out", failed_out, "--hosts", "2", "--gpus-per-host", "1", *advertise,
                "--srun-arg=--overcommit", "--timeout", "60", "--", "sh", "-c",
                'test "$PHANTORA_HOST" = 0 || exit 7']
        log("$ " + " ".join(argv))
        r = subprocess.run(argv, env=cluster.env, capture_output=True, text=True, timeout=90)
        failed = figures.load(failed_out) if os.path.exists(failed_out) else {}
        log(f"failing run: exit {r.returncode}, status {failed.get('status')}: "
            f"{failed.get('message')}")
        if (r.returncode != 7 or failed.get("status") != "failed"
                or not str(failed.get("message", "")).startswith("srun (pid")):
            problems.append(f"a failing host: phantora exit {r.returncode} (expected 7), report "
                            f"{failed.get('status')}: {failed.get('message')}\n{r.stderr}")
        for p in problems:
            print(f"FAIL: {p}", file=sys.stderr)
        if problems:
            return 1
        log(f"identical: simulated_time_ps {figures.load(slurm_out)['simulated_time_ps']}, the 4 "
            "ranks' step times, GPU, communication and kernel figures")
        return 0
    except (RuntimeError, subprocess.TimeoutExpired, KeyboardInterrupt) as e:
        print(f"slurm_check: FAIL: {e}", file=sys.stderr)
        return 1
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
        log(f"stopped everything after {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
