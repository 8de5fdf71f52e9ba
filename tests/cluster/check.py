#!/usr/bin/env python3
"""Ranks that reach the simulator over TCP (docs/cluster-launch.md), one scenario per run:

  tcp_same_as_unix  the 2 x 2 reliability job (rel_job, 4 ranks, pinned kernel times,
                    --cpu-time model) through `--listen 127.0.0.1:0` gives the figures of the
                    same run over the Unix socket, and so does a one-process program over
                    IPv6 loopback where the machine has it; the token of --token-file appears
                    in no output
  tcp_refusals      a `phantora serve` daemon refuses a wrong token, and the rank says so; a
                    rank without a token, at a bad address or at a port nobody listens on
                    fails with a message naming the cause; then a rank with the right token
                    runs and the daemon ends the run by itself (status ok, launcher serve)
  serve_by_hand     `phantora serve` plus two `phantora __host` processes (what the Kubernetes
                    pods run) give the local launcher's figures for the 2 x 2 job
  k8s_manifests     `--launcher k8s` renders manifests for 2 hosts that pass the Kubernetes
                    OpenAPI schema (kubernetes-validate, --strict) where the validator is
                    installed, and structural checks always
  bad_frames_tcp    tests/reliability/bad_frames.py over TCP: every malformed conversation
                    (and a stranger's oversized first frame) is closed by the daemon, which
                    lives on for the 2 x 2 job that follows
  bad_cli           wrong launcher options are refused naming the culprit, writing nothing

Usage: check.py --phantora BIN --programs DIR --integration DIR --launcher SH --times CSV
                --topologies DIR --work DIR <case>
Python 3.11+ standard library only.
"""

import argparse
import glob
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

ARGS = None
FAILURES = []
TOKEN = "c0ffee0123456789abcdef0123456789"


def check(cond, message):
    if cond:
        print(f"ok: {message}")
    else:
        FAILURES.append(message)
        print(f"FAIL: {message}", file=sys.stderr)
    return cond


def workdir(name):
    work = os.path.join(ARGS.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return work


def token_file(work, token=TOKEN):
    path = os.path.join(work, "token")
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)
    return path


def rel_job(ids):
    os.makedirs(ids, exist_ok=True)
    return [ARGS.launcher, os.path.join(ARGS.programs, "rel_job"), "-n", "6", "-k", "4", "-s",
            "64M", "-u", ids]


TWO_BY_TWO = ["--hosts", "2", "--gpus-per-host", "2", "--cpu-time", "model"]


def phantora(argv, timeout=120, env=None, label=None):
    full_env = dict(os.environ, **(env or {}))
    print("$", " ".join([ARGS.phantora, *argv]), flush=True)
    start = time.monotonic()
    p = subprocess.run([ARGS.phantora, *argv], capture_output=True, text=True, timeout=timeout,
                       env=full_env)
    print(f"  exit {p.returncode} in {time.monotonic() - start:.1f} s")
    if label is not None and not check(p.returncode == 0, f"{label}: exits 0"):
        print(p.stdout, p.stderr, sep="\n", file=sys.stderr)
    return p


def run_local(work, name, extra=(), command=None):
    out = os.path.join(work, name)
    command = command or rel_job(os.path.join(work, f"ids-{name}"))
    p = phantora(["run", "--out", out, *TWO_BY_TWO, "--kernel-times", ARGS.times, *extra, "--",
                  *command], label=f"{name} run")
    return out, p


def same(a, b, a_launcher, b_launcher, what, **kw):
    problems = figures.differences(a, b, a_launcher, b_launcher, **kw)
    for p in problems:
        print(f"  {p}", file=sys.stderr)
    check(not problems, what)


class Serve:
    """A `phantora serve` in the background; its port is read from what it prints."""

    def __init__(self, work, flags):
        self.out = os.path.join(work, "serve-out")
        self.err = open(os.path.join(work, "serve.err"), "w+")
        argv = [ARGS.phantora, "serve", "--listen", "127.0.0.1:0", "--out", self.out, *flags]
        print("$", " ".join(argv), "&", flush=True)
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.err)
        self.port = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.proc.poll() is None:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.stderr())
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        check(self.port is not None, "phantora serve says where it listens")

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def host(self, index, command, env=None, timeout=60):
        full_env = dict(os.environ, PHANTORA_ADDRESS=f"127.0.0.1:{self.port}",
                        PHANTORA_TOKEN=TOKEN, TEST_HOST_INDEX=str(index))
        full_env.update(env or {})
        for k, v in list(full_env.items()):
            if v is None:
                del full_env[k]
        argv = [ARGS.phantora, "__host", "--host-from", "TEST_HOST_INDEX", *self.shape,
                "--", *command]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=full_env)

    def wait(self, timeout=60):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            check(False, f"phantora serve ended by itself within {timeout} s")
            return None


def finish(p, timeout=60):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return p.returncode, out, err


# ---------------------------------------------------------------------------------------------


def case_tcp_same_as_unix():
    work = workdir("tcp_same_as_unix")
    unix, _ = run_local(work, "unix")
    tcp, p = run_local(work, "tcp", ["--listen", "127.0.0.1:0", "--token-file",
                                     token_file(work)])
    check(re.search(r"listens on 127\.0\.0\.1:\d+ \(ranks connect to 127\.0\.0\.1:\d+\)",
                    p.stderr) is not None, "the port chosen is printed")
    same(tcp, unix, "local", "local", "TCP gives the Unix socket's figures (4 ranks)", ranks=4)
    seen = [f for f in glob.glob(os.path.join(work, "**", "*"), recursive=True)
            if os.path.isfile(f) and os.path.basename(f) != "token"
            and TOKEN in open(f, errors="replace").read()]
    check(TOKEN not in p.stdout + p.stderr and not seen,
          f"the token appears in no output (files with it: {seen})")

    # IPv6 loopback, where this machine has it: a single-process program.
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        have_v6 = True
    except OSError:
        have_v6 = False
    if not have_v6:
        print("ok: (no IPv6 loopback here; the IPv6 run is skipped)")
        return
    two_streams = [os.path.join(ARGS.integration, "two_streams")]
    flags = ["--hosts", "1", "--gpus-per-host", "1", "--cpu-time", "model"]
    v4 = os.path.join(work, "v6-unix")
    v6 = os.path.join(work, "v6")
    phantora(["run", "--out", v4, *flags, "--", *two_streams], label="two_streams over Unix")
    p = phantora(["run", "--out", v6, *flags, "--listen", "[::1]:0", "--", *two_streams],
                 label="two_streams over [::1]")
    check("ranks connect to [::1]:" in p.stderr, "the IPv6 address is printed in brackets")
    same(v6, v4, "local", "local", "IPv6 loopback gives the Unix socket's figures", ranks=1,
         compare_logs=False)
    with open(os.path.join(v6, "job.log")) as a, open(os.path.join(v4, "job.log")) as b:
        check(a.read() == b.read(), "and the program prints the same event timings")


def case_tcp_refusals():
    work = workdir("tcp_refusals")
    serve = Serve(work, ["--hosts", "1", "--gpus-per-host", "1", "--cpu-time", "model",
                         "--token-file", token_file(work), "--timeout", "60"])
    serve.shape = ["--hosts", "1", "--gpus-per-host", "1", "--cpu-time", "model"]
    program = [os.path.join(ARGS.integration, "two_streams")]

    rc, out, err = finish(serve.host(0, program, env={"PHANTORA_TOKEN": "0" * 32}))
    check(rc == 70 and "refused this process: client presented a wrong run token" in err
          and "PHANTORA_TOKEN must be the run's token" in err,
          f"a wrong token is refused, and the rank says why (rc {rc}: {err.strip()})")
    rc, out, err = finish(serve.host(0, program, env={"PHANTORA_TOKEN": None}))
    check(rc == 2 and "PHANTORA_TOKEN is not set" in err,
          f"__host needs the token (rc {rc}: {err.strip()})")
    for label, address, pattern in [
            ("a port nobody listens on", "127.0.0.1:1",
             r"cannot reach the simulator at 127\.0\.0\.1:1 .*tried for 1 s: .*refused"),
            ("a name that does not resolve", "no-such-host.invalid:29620",
             r"cannot resolve 'no-such-host\.invalid'"),
            ("no port", "127.0.0.1", r"PHANTORA_ADDRESS='127\.0\.0\.1' is not HOST:PORT")]:
        start = time.monotonic()
        rc, out, err = finish(serve.host(0, program, env={"PHANTORA_ADDRESS": address,
                                                           "PHANTORA_CONNECT_TIMEOUT_S": "1"}))
        check(rc == 70 and re.search(pattern, err) is not None and time.monotonic() - start < 15,
              f"{label}: the rank fails naming the cause (rc {rc}: {err.strip()})")

    rc, out, err = finish(serve.host(0, program))
    check(rc == 0 and "elapsed_us" in out, f"the right token runs the program (rc {rc})")
    check(serve.wait() == 0, "phantora serve ends by itself once its one host has finished")
    log = serve.stderr()
    check(re.search(r"rejected a connection from 127\.0\.0\.1:\d+: .*wrong run token", log)
          is not None, "the daemon logs the refusal with the peer's address")
    check(TOKEN not in log, "the daemon does not print the token")
    r = figures.load(serve.out)
    check(r["status"] == "ok" and r["launcher"] == "serve" and len(r["ranks"]) == 1,
          f"report: status {r['status']}, launcher {r['launcher']}, {len(r['ranks'])} rank")


def case_serve_by_hand():
    work = workdir("serve_by_hand")
    local, _ = run_local(work, "local")
    serve = Serve(work, [*TWO_BY_TWO, "--kernel-times", ARGS.times, "--token-file",
                         token_file(work), "--timeout", "90"])
    serve.shape = TWO_BY_TWO
    ids = os.path.join(work, "ids-serve")
    hosts = [serve.host(h, rel_job(ids)) for h in (1, 0)]  # in any order
    outs = [finish(h, 90) for h in hosts]
    check(all(rc == 0 for rc, _, _ in outs), f"both hosts exit 0 ({[o[0] for o in outs]})")
    rc = serve.wait(90)
    check(rc == 0, f"phantora serve ends by itself with 0 (got {rc})")
    # The serve run has no job.log: compare the ranks' printed step times by hand.
    lines = sorted(line for _, out, _ in outs for line in out.splitlines()
                   if line.startswith("rank "))
    check(lines == figures.rank_lines(local), "the ranks print the local run's step times")
    same(serve.out, local, "serve", "local",
         "serve + __host gives the local launcher's figures (4 ranks)", ranks=4,
         compare_logs=False)
    check(sorted(os.listdir(serve.out)) == ["links.csv", "report.json", "trace.json"],
          f"serve wrote report.json, trace.json, links.csv ({sorted(os.listdir(serve.out))})")


def validator():
    """kubernetes-validate from PHANTORA_K8S_VALIDATE, the cached venv, or PATH."""
    for c in (os.environ.get("PHANTORA_K8S_VALIDATE"),
              os.path.join(os.environ.get("PHANTORA_K8S_VALIDATE_VENV",
                                          os.path.expanduser("~/.cache/phantora/"
                                                             "k8s-validate-venv")),
                           "bin", "kubernetes-validate"),
              shutil.which("kubernetes-validate")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def case_k8s_manifests():
    work = workdir("k8s_manifests")
    out = os.path.join(work, "manifests")
    topology = os.path.join(ARGS.topologies, "shared_nic.toml")
    p = phantora(["run", "--launcher", "k8s", "--k8s-image", "registry.example/phantora:test",
                  "--k8s-out", out, "--k8s-name", "sim", "--k8s-phantora",
                  "/opt/phantora/bin/phantora", "--topology", topology, "--kernel-times",
                  ARGS.times, "--cpu-time", "model", "--token-file", token_file(work), "--",
                  ARGS.launcher, "/opt/job/rel_job", "-u", "/tmp/ids"], label="render")
    check(f"kubectl apply -f {out}" in p.stdout, "the kubectl command is printed")
    check(TOKEN not in p.stdout + p.stderr, "the token is not printed")
    files = sorted(os.listdir(out))
    check(files == ["00-token-secret.json", "01-inputs-configmap.json", "02-daemon-service.json",
                    "03-daemon-job.json", "04-ranks-service.json", "05-ranks-job.json"],
          f"one file per object, the Secret first ({files})")
    secret_mode = stat.S_IMODE(os.stat(os.path.join(out, "00-token-secret.json")).st_mode)
    check(secret_mode == 0o600, f"the Secret's file is readable by its owner only ({secret_mode:o})")
    objs = {}
    for f in files:
        with open(os.path.join(out, f)) as fh:
            o = json.load(fh)
        objs[(o["kind"], o["metadata"]["name"])] = o

    # Against the Kubernetes API schema, where the validator is installed (scripts/setup.sh).
    v = validator()
    if v:
        r = subprocess.run([v, "--strict", *[os.path.join(out, f) for f in files]],
                           capture_output=True, text=True, timeout=120)
        print(r.stdout, r.stderr)
        passed = len(re.findall(r"^INFO .* passed", r.stdout, re.M))
        check(r.returncode == 0 and passed == len(files),
              f"kubernetes-validate --strict: {passed} of {len(files)} objects pass the schema")
    elif os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        # In CI a partial check must not pass for the whole one (docs/testing.md).
        check(False, "kubernetes-validate is not installed (CI=true needs it: scripts/setup.sh "
                     "puts it in ~/.cache/phantora/k8s-validate-venv)")
    else:
        print("NOTE: kubernetes-validate is not installed (scripts/setup.sh puts it in "
              "~/.cache/phantora/k8s-validate-venv); structural checks only")

    # Structure: what the schema cannot say.
    secret = objs.get(("Secret", "sim-token"), {})
    check(secret.get("stringData", {}).get("token") == TOKEN, "the Secret holds the token")
    inputs = objs.get(("ConfigMap", "sim-inputs"), {}).get("data", {})
    with open(topology) as f:
        check(inputs.get("topology.toml") == f.read(), "the ConfigMap carries the topology file")
    service = objs.get(("Service", "sim-daemon"), {})
    daemon = objs.get(("Job", "sim-daemon"), {})
    dpod = daemon.get("spec", {}).get("template", {})
    dcont = dpod.get("spec", {}).get("containers", [{}])[0]
    port = service.get("spec", {}).get("ports", [{}])[0].get("port")
    check(port == dcont.get("ports", [{}])[0].get("containerPort") == 29620,
          f"Service port {port} == the daemon container's port")
    selector = service.get("spec", {}).get("selector", {})
    check(selector and all(dpod["metadata"]["labels"].get(k) == v for k, v in selector.items()),
          "the Service selects the daemon's pod")
    cmd = dcont.get("command", [])
    check(cmd[:2] == ["/opt/phantora/bin/phantora", "serve"] and "0.0.0.0:29620" in cmd
          and "/etc/phantora/inputs/topology.toml" in cmd
          and "/etc/phantora/inputs/kernel-times.csv" in cmd and "--hosts" in cmd
          and cmd[cmd.index("--hosts") + 1] == "2",
          f"the daemon serves 2 hosts on the Service's port with the inputs ({cmd})")
    vols = {v["name"]: v for v in dpod["spec"].get("volumes", [])}
    check(vols.get("token", {}).get("secret", {}).get("secretName") == "sim-token"
          and "--token-file" in cmd and cmd[cmd.index("--token-file") + 1].startswith(
              next(m["mountPath"] for m in dcont["volumeMounts"] if m["name"] == "token")),
          "the daemon reads its token from the Secret")
    ranks = objs.get(("Job", "sim-ranks"), {}).get("spec", {})
    check(ranks.get("completionMode") == "Indexed" and ranks.get("completions") == 2
          and ranks.get("parallelism") == 2,
          "ranks: an Indexed Job, completions == parallelism == hosts == 2")
    rcont = ranks.get("template", {}).get("spec", {}).get("containers", [{}])[0]
    env = {e["name"]: e for e in rcont.get("env", [])}
    check(env.get("PHANTORA_ADDRESS", {}).get("value") == f"sim-daemon:{port}",
          "PHANTORA_ADDRESS names the daemon's Service and port")
    check(env.get("PHANTORA_TOKEN", {}).get("valueFrom", {}).get("secretKeyRef")
          == {"name": "sim-token", "key": "token"}, "PHANTORA_TOKEN comes from the Secret")
    rcmd = rcont.get("command", [])
    check(rcmd[:4] == ["/opt/phantora/bin/phantora", "__host", "--host-from",
                       "JOB_COMPLETION_INDEX"] and rcmd[rcmd.index("--") + 1:]
          == [ARGS.launcher, "/opt/job/rel_job", "-u", "/tmp/ids"],
          "each pod is host $JOB_COMPLETION_INDEX running the command")
    headless = objs.get(("Service", "sim-ranks"), {}).get("spec", {})
    check(headless.get("clusterIP") == "None"
          and ranks["template"]["spec"].get("subdomain") == "sim-ranks",
          "pods are addressable as sim-ranks-<i>.sim-ranks")
    for (kind, name), o in objs.items():
        if kind != "Secret":
            check(TOKEN not in json.dumps(o), f"{kind} {name} does not contain the token")


def case_bad_frames_tcp():
    work = workdir("bad_frames_tcp")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability",
                          "bad_frames.py")
    command = ["/bin/sh", "-c",
               f'if [ "$PHANTORA_HOST" = 0 ]; then "{sys.executable}" "{script}" || exit 3; fi; '
               f'exec "$@"', "sh", *rel_job(os.path.join(work, "ids"))]
    out, p = run_local(work, "out", ["--listen", "127.0.0.1:0"], command=command)
    print(p.stdout)
    check("bad_frames: all" in p.stdout, "every malformed frame over TCP was refused")
    check(p.stderr.count("rejected a connection from 127.0.0.1:") >= 250,
          "the daemon names each rejected TCP peer")
    r = figures.load(out)
    check(r["status"] == "ok" and len(r["ranks"]) == 4, "the job that follows runs to its end")


def case_bad_cli():
    work = workdir("bad_cli")
    out = os.path.join(work, "out")
    short = os.path.join(work, "short")
    with open(short, "w") as f:
        f.write("abc\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    cases = [
        ("bad --listen", ["run", "--listen", "nowhere", "--out", out, "--", "true"],
         r"--listen nowhere: expected HOST:PORT"),
        ("port out of range", ["run", "--listen", "127.0.0.1:70000", "--out", out, "--", "true"],
         r"--listen 127\.0\.0\.1:70000: the port"),
        ("unknown launcher", ["run", "--launcher", "mpi", "--out", out, "--", "true"],
         r"--launcher"),
        ("slurm outside an allocation", ["run", "--launcher", "slurm", "--out", out, "--",
                                         "true"], r"SLURM_JOB_ID is not set|srun is not on PATH"),
        ("short token", ["run", "--token-file", short, "--out", out, "--", "true"],
         r"--token-file .*short: a token has 16 to 32 characters"),
        ("missing token file", ["run", "--token-file", os.path.join(work, "none"), "--out", out,
                                "--", "true"], r"--token-file .*none: cannot read it"),
        ("srun option for local", ["run", "--srun-arg=--exclusive", "--out", out, "--", "true"],
         r"--srun-arg go with --launcher slurm"),
        ("k8s without image", ["run", "--launcher", "k8s", "--k8s-out", out, "--", "true"],
         r"--k8s-image"),
        ("k8s bad name", ["run", "--launcher", "k8s", "--k8s-image", "i", "--k8s-out", out,
                          "--k8s-name", "Bad_Name", "--", "true"], r"--k8s-name Bad_Name"),
        ("k8s with --baseline", ["run", "--launcher", "k8s", "--k8s-image", "i", "--k8s-out", out,
                                 "--baseline", short, "--", "true"], r"do not go with"),
        ("serve: bad --listen", ["serve", "--listen", "[::1", "--out", out], r"closing"),
    ]
    for label, argv, pattern in cases:
        p = subprocess.run([ARGS.phantora, *argv], capture_output=True, text=True, timeout=30,
                           env=env)
        text = p.stdout + p.stderr
        ok = check(p.returncode != 0 and re.search(pattern, text) is not None,
                   f"{label}: rc {p.returncode}, message matches /{pattern}/")
        if not ok:
            print(text, file=sys.stderr)
        check(not os.path.exists(out), f"{label}: nothing written")
    # Something listens on the port already: the message names the address.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = subprocess.run([ARGS.phantora, "run", "--listen", f"127.0.0.1:{port}", "--out", out,
                            "--", "true"], capture_output=True, text=True, timeout=30)
        check(p.returncode != 0 and f"cannot listen on 127.0.0.1:{port}: Address already in use"
              in p.stderr, f"a port in use is named ({p.stderr.strip()})")


CASES = {
    "tcp_same_as_unix": case_tcp_same_as_unix,
    "tcp_refusals": case_tcp_refusals,
    "serve_by_hand": case_serve_by_hand,
    "k8s_manifests": case_k8s_manifests,
    "bad_frames_tcp": case_bad_frames_tcp,
    "bad_cli": case_bad_cli,
}


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for a in ("--phantora", "--programs", "--integration", "--launcher", "--times",
              "--topologies", "--work"):
        ap.add_argument(a, required=True)
    ap.add_argument("case", choices=sorted(CASES))
    ARGS = ap.parse_args()
    ARGS.work = os.path.abspath(ARGS.work)
    os.makedirs(ARGS.work, exist_ok=True)
    CASES[ARGS.case]()
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed:", file=sys.stderr)
        for f in FAILURES:
            print(f"  {f}", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
