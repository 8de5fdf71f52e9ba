"""A launcher for warm_ranks.py (not a rank: no RANK in its environment). Starts one rank per
mode given, as a shell loop or mpirun-style script would, each with its own RANK, WARM_TAG,
working directory, umask, file-descriptor limit, SIGUSR2 ignored and an extra inherited
descriptor, and prints one JSON line with what each rank printed and how it ended. Then
  --group-signal S: once every rank said "ready", sends S to the ranks' process group.
  --odd-env I: rank I's environment differs from the others' in OMP_NUM_THREADS.
"""
import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--group-signal", type=int)
ap.add_argument("--odd-env", type=int, help="this rank gets OMP_NUM_THREADS=7, the others 1")
ap.add_argument("--workdir", required=True)
ap.add_argument("modes", nargs="+")
a = ap.parse_args()
rank_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rank.py")
os.makedirs(a.workdir, exist_ok=True)
group = {"pgid": 0}


def prepare():
    resource.setrlimit(resource.RLIMIT_NOFILE, (321, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    os.setpgid(0, group["pgid"])  # all ranks in one group of their own, not the launcher's


procs, pipes = [], []
for i, mode in enumerate(a.modes):
    r, w = os.pipe()
    env = dict(os.environ, RANK=str(i), LOCAL_RANK=str(i), WORLD_SIZE=str(len(a.modes)),
               WARM_TAG=f"tag-{i}", WARM_EXTRA_FD=str(w))
    if a.odd_env is not None:
        env["OMP_NUM_THREADS"] = "7" if i == a.odd_env else "1"
    p = subprocess.Popen([sys.executable, "-u", rank_py, mode], env=env, cwd=a.workdir,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=[w],
                         preexec_fn=prepare, umask=0o027)
    os.close(w)
    if not group["pgid"]:
        group["pgid"] = p.pid
    procs.append(p)
    pipes.append(r)

out = [{"stdout": [], "stderr": "", "extra": ""} for _ in procs]
ready = [threading.Event() for _ in procs]


def read_stdout(i):
    for line in procs[i].stdout:
        line = line.decode().rstrip("\n")
        out[i]["stdout"].append(line)
        if line == "ready":
            ready[i].set()


threads = [threading.Thread(target=read_stdout, args=(i,)) for i in range(len(procs))]
for t in threads:
    t.start()
if a.group_signal:
    for e in ready:
        if not e.wait(300):
            sys.exit("a rank never said ready")
    os.killpg(group["pgid"], a.group_signal)
for i, p in enumerate(procs):
    p.wait()
    out[i]["stderr"] = p.stderr.read().decode()
    with os.fdopen(pipes[i]) as f:
        out[i]["extra"] = f.read()
    out[i]["returncode"] = p.returncode
for t in threads:
    t.join()
print("LAUNCHER " + json.dumps(out), flush=True)
time.sleep(0.1)
