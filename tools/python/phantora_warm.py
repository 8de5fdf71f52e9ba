"""Ranks started from a warmed process (docs/scale.md, "Ranks from a warmed process").

Two roles, both in the job's own interpreter:

* the stub: the Python process a launcher (torchrun, a shell loop) started for a rank. The
  start-up hook (sitecustomize.py) calls `run_as_stub()` before anything of the job runs. The
  stub asks this machine's warm server to fork the rank, hands it its command line,
  environment, working directory, umask, resource limits, sys.path, signal dispositions and
  inherited file descriptors (SCM_RIGHTS), then only relays signals to the rank and ends with
  the rank's exit status. If the server refuses (another interpreter, environment or command
  form), the stub returns and the process runs the job itself, as without this mechanism.
* the server: one per machine and run, started by the first stub that finds none. It
  imports PHANTORA_WARM_MODULES (default: torch,torch._dynamo) once, then forks a rank per
  request, so that the ranks share the imported pages copy-on-write. It never makes a CUDA call
  itself (the shim refuses to connect where PHANTORA_WARM_SERVER is set); each rank it forks
  calls the shim's phantora_fresh_process() before the job runs, so that its clocks start as a
  new process's.
"""
import json
import os
import signal
import socket
import struct
import sys

ROLE = "PHANTORA_WARM_SERVER"
_HERE = os.path.dirname(os.path.abspath(__file__))
# Environment variables that can change what an import does or how the interpreter starts;
# a stub whose values differ from the server's starts normally. The rest (RANK, MASTER_ADDR,
# CUDA_VISIBLE_DEVICES, NCCL_*) is read after start-up and simply becomes the rank's.
_PREFIXES = ("PYTHON", "PYTORCH", "TORCH", "LD_", "PHANTORA_", "OMP_", "MKL_", "KMP_",
             "GOMP_", "OPENBLAS_", "MALLOC_", "LC_")
_NAMES = ("LANG", "HOME", "VIRTUAL_ENV")
# Signals the stub passes on to the rank (SIGKILL cannot be caught: the server sees the stub's
# connection close and kills the rank).
_RELAYED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
            signal.SIGUSR2, signal.SIGALRM, signal.SIGCONT, signal.SIGWINCH)
_IDLE_POLLS = 10        # the server ends after this many 1 s polls with no rank and no stub
_FIRST_POLLS = 120      # ... or this many before the first stub connects


def _note(text):
    sys.stderr.write(f"phantora: warm ranks: {text}\n")
    sys.stderr.flush()


# torch._dynamo too: torch imports it at the first call of a function marked
# torch._disable_dynamo (DDP's and autocast's among them) or at a compile, and it brings in
# about 900 modules (sympy, triton, torch._inductor): 44 MiB of Python objects and 2 s of CPU
# time in every GPT DDP rank, which the server makes once (docs/performance.md).
_DEFAULT_MODULES = "torch,torch._dynamo"


def _modules():
    raw = os.environ.get("PHANTORA_WARM_MODULES", _DEFAULT_MODULES)
    return [m.strip() for m in raw.split(",") if m.strip()]


def _address():
    # Abstract socket (no file to clean up; one namespace per machine): one server per user and
    # run (token) on each machine, whichever simulated hosts' ranks run there.
    import hashlib
    token = os.environ.get("PHANTORA_TOKEN", "")
    key = hashlib.sha256(f"{token}/{os.environ.get('PHANTORA_SOCKET', '')}".encode()).hexdigest()
    return f"\0phantora-warm/{os.getuid()}/{key[:32]}"


def _flags():
    names = [n for n in dir(sys.flags) if not n.startswith("_") and
             n not in ("count", "index", "n_fields", "n_sequence_fields", "n_unnamed_fields")]
    # -u only decides how the standard streams buffer, and phantora's hook sets that anyway.
    return {n: getattr(sys.flags, n) for n in names if n != "unbuffered"}


def _relevant_env(env):
    # torchrun's per-worker TORCHELASTIC_* variables are read when the worker records an error,
    # PHANTORA_HOST when the rank connects to the simulator.
    return {k: v for k, v in env.items()
            if (k.startswith(_PREFIXES) or k in _NAMES) and k not in (ROLE, "PHANTORA_HOST")
            and not k.startswith("TORCHELASTIC_")}


def _fingerprint(origins):
    return {"executable": os.path.realpath(sys.executable), "version": sys.version,
            "flags": _flags(), "env": _relevant_env(os.environ), "modules": origins}


def _same_user(sock):
    """Whether the process at the other end runs as this user (SO_PEERCRED, unix(7)): an
    abstract socket's name is visible to every user of the machine in /proc/net/unix."""
    pid_uid_gid = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", pid_uid_gid)[1] == os.getuid()


def _send(sock, message, fds=()):
    data = json.dumps(message).encode()
    data = struct.pack("!I", len(data)) + data
    if fds:
        import array
        sent = sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                      array.array("i", fds))])
        data = data[sent:]
    sock.sendall(data)


def _recv_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def _recv(sock, with_fds=False):
    """A message (and the descriptors sent with it), or (None, []) at end of stream."""
    fds = []
    if with_fds:
        import array
        data, ancillary, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(253 * 4))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(payload[:len(payload) - len(payload) % a.itemsize])
                fds.extend(a)
        if not data:
            return None, fds
    else:
        data = _recv_exact(sock, 4)
        if data is None:
            return None, fds
    while len(data) < 4:
        more = _recv_exact(sock, 4 - len(data))
        if more is None:
            return None, fds
        data += more
    length = struct.unpack("!I", data[:4])[0]
    body = data[4:]
    if len(body) < length:
        rest = _recv_exact(sock, length - len(body))
        if rest is None:
            return None, fds
        body += rest
    return json.loads(body), fds


# ---------------------------------------------------------------------------------------------
# The stub


def _invocation(orig_argv):
    """(interpreter options, "script" or "module", target, sys.argv) or None for other forms."""
    opts, i = [], 1
    while i < len(orig_argv):
        a = orig_argv[i]
        if a in ("-W", "-X"):
            opts += orig_argv[i:i + 2]
            i += 2
        elif a.startswith(("-W", "-X")):
            opts.append(a)
            i += 1
        elif a == "-m" and i + 1 < len(orig_argv):
            return opts, "module", orig_argv[i + 1], ["-m"] + orig_argv[i + 2:]
        elif a.startswith("-m") and len(a) > 2:
            return opts, "module", a[2:], ["-m"] + orig_argv[i + 1:]
        elif a[:1] == "-" and a != "--" and len(a) > 1 and all(c in "bBdEIOqsSuv" for c in a[1:]):
            opts.append(a)
            i += 1
        elif a.startswith("-"):
            return None  # -c, -i, -, --: not a script run
        else:
            return opts, "script", a, orig_argv[i:]
    return None


def _inherited_fds():
    """The descriptors the launcher left open across exec (without close-on-exec)."""
    import fcntl
    out = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
                out.append(fd)
        except OSError:  # the listing's own descriptor, now closed
            pass
    return sorted(out)


def _origins(path):
    import importlib.machinery
    out = {}
    for m in _modules():
        spec = importlib.machinery.PathFinder.find_spec(m.split(".")[0], path)
        out[m] = spec.origin if spec is not None else None
    return out


def _start_server(opts):
    """Starts this host's server (its own session, outside the launcher's process tree) and
    waits until it listens, or has found another one listening."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            os.close(r)
            os.dup2(w, 3)
            os.closerange(4, 65536)  # the launcher's descriptors stay with the launcher's ranks
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.close(devnull)
            env = dict(os.environ)
            env[ROLE] = "1"
            os.execve(sys.executable, [sys.executable] + opts +
                      [os.path.join(_HERE, "phantora_warm_server.py"), "3"], env)
        finally:
            os._exit(127)
    os.close(w)
    os.waitpid(pid, 0)
    os.read(r, 1)  # a byte once it listens; nothing if it ended (another server listens)
    os.close(r)


def _connect(opts):
    for attempt in range(2):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(_address())
            if not _same_user(s):
                s.close()
                return None
            return s
        except OSError:
            s.close()
            if attempt == 0:
                _start_server(opts)
    return None


def _exit_like(status):
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        os._exit(code)
    sig = -code
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)


def run_as_stub():
    """Runs this process's job in a rank forked by the warm server and ends with its status;
    returns (the job then runs here) if that cannot be done."""
    how = _invocation(getattr(sys, "orig_argv", []))
    if how is None:
        return
    opts, kind, target, argv = how
    if kind == "script":
        path0 = os.path.dirname(os.path.realpath(target))
        main_file = os.path.abspath(target)
    else:
        path0 = os.getcwd()
        main_file = None
    path = list(sys.path) if sys.flags.safe_path else [path0] + sys.path
    import resource
    limits = {}
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            limits[name] = resource.getrlimit(getattr(resource, name))
    fds = _inherited_fds()
    request = {
        "fingerprint": _fingerprint(_origins(path)),
        "kind": kind, "target": target, "main_file": main_file, "argv": argv,
        "orig_argv": sys.orig_argv, "env": dict(os.environ), "cwd": os.getcwd(),
        "umask": os.umask(0o022), "rlimits": limits, "sys_path": path, "fds": fds,
        "ignored": [int(s) for s in _RELAYED + (signal.SIGPIPE, signal.SIGCHLD)
                    if signal.getsignal(s) == signal.SIG_IGN],
        "blocked": [int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])],
    }
    os.umask(request["umask"])
    sock = _connect(opts)
    if sock is None:
        _note("no warm server for this host; this rank starts normally")
        return
    try:
        _send(sock, request, fds)
        reply, _ = _recv(sock)
    except OSError as e:
        reply = {"refused": f"the server failed ({e})"}
    if reply is None or "refused" in reply:
        sock.close()
        why = "the server ended (see above)" if reply is None else reply["refused"]
        _note(f"{why}; this rank starts normally")
        return
    rank = reply["pid"]

    def relay(sig, _frame):
        try:
            os.kill(rank, sig)
        except ProcessLookupError:
            pass

    for s in _RELAYED:
        if signal.getsignal(s) != signal.SIG_IGN:
            signal.signal(s, relay)
    try:
        message, _ = _recv(sock)
    except OSError:
        message = None
    if message is None:
        # The server died; its ranks die with it (PR_SET_PDEATHSIG).
        _note("the warm server ended while this rank ran")
        _exit_like(signal.SIGKILL)
    _exit_like(message["status"])


# ---------------------------------------------------------------------------------------------
# The server


class _Server:
    def __init__(self, ready_fd):
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.listener.bind(_address())
        except OSError:  # another stub's server won the race
            os._exit(0)
        self.listener.listen(512)
        os.write(ready_fd, b"1")
        os.close(ready_fd)
        import importlib
        import time
        env = _relevant_env(os.environ)  # as the stubs see theirs: before any import
        for m in _modules():
            importlib.import_module(m)
        origins = {}
        for m in _modules():
            top = sys.modules[m.split(".")[0]]
            origins[m] = getattr(getattr(top, "__spec__", None), "origin", None)
        self.fingerprint = dict(_fingerprint(origins), env=env)
        # What the imports made is kept out of the collector's reach (gc.freeze), so that a
        # collection in a rank does not write to, and so copy, every page that holds them.
        import gc
        gc.collect()
        gc.freeze()
        # Measured mode charges the imports to each rank, as a rank's own import would be.
        self.startup_cpu_ns = time.thread_time_ns()
        # From here on, nothing holds the first stub's output pipes open.
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
        self.by_fd = {}   # fd -> ("stub", socket, pid) or ("rank", pidfd, socket)
        self.served = 0

    def refuse(self, sock, why):
        try:
            _send(sock, {"refused": why})
        except OSError:
            pass
        sock.close()

    def check(self, request):
        mine, theirs = self.fingerprint, request["fingerprint"]
        for key in ("executable", "version", "flags", "modules"):
            if mine[key] != theirs[key]:
                return f"its {key} differs from the warm server's ({theirs[key]} vs {mine[key]})"
        if mine["env"] != theirs["env"]:
            keys = sorted(k for k in set(mine["env"]) | set(theirs["env"])
                          if mine["env"].get(k) != theirs["env"].get(k))
            return f"its environment differs from the warm server's in {', '.join(keys)}"
        import resource
        for name, (soft, hard) in request["rlimits"].items():
            mine_hard = resource.getrlimit(getattr(resource, name))[1]
            if mine_hard != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or
                                                        hard > mine_hard):
                return f"its {name} hard limit is above the warm server's"
        return None

    def accept(self):
        sock, _ = self.listener.accept()
        if not _same_user(sock):
            sock.close()
            return
        try:
            request, fds = _recv(sock, with_fds=True)
        except (OSError, ValueError):
            request, fds = None, []
        if request is None:
            for fd in fds:
                os.close(fd)
            sock.close()
            return
        why = self.check(request)
        if why is not None or len(fds) != len(request["fds"]):
            for fd in fds:
                os.close(fd)
            self.refuse(sock, why or "its descriptors did not arrive")
            return
        sys.stdout.flush()
        sys.stderr.flush()
        # What the rank must not keep: the listener, every stub's connection, the pidfds.
        owned = [self.listener, sock] + [e[2] for e in self.by_fd.values() if e[0] == "stub"]
        owned += [fd for fd, e in self.by_fd.items() if e[0] == "rank"]
        pid = os.fork()
        if pid == 0:
            _become_rank(request, fds, owned, self.startup_cpu_ns)  # never returns
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.by_fd[pidfd] = ("rank", pid, sock)
        self.by_fd[sock.fileno()] = ("stub", pid, sock)
        self.served += 1
        try:
            _send(sock, {"pid": pid})
        except OSError:
            os.kill(pid, signal.SIGKILL)

    def rank_ended(self, pidfd, pid, sock):
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        del self.by_fd[pidfd]
        self.by_fd.pop(sock.fileno(), None)
        try:
            _send(sock, {"status": status})
        except OSError:
            pass
        sock.close()

    def stub_readable(self, fd, pid, sock):
        try:
            gone = sock.recv(1) == b""
        except OSError:
            gone = True
        if gone:  # the stub was killed (SIGKILL of the launcher's group): so is its rank
            del self.by_fd[fd]
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def run(self):
        import select
        idle = 0
        while True:
            poller = select.poll()
            poller.register(self.listener, select.POLLIN)
            for fd in self.by_fd:
                poller.register(fd, select.POLLIN)
            events = poller.poll(1000)
            if not events and not self.by_fd:
                idle += 1
                if idle >= (_IDLE_POLLS if self.served else _FIRST_POLLS):
                    return
                continue
            idle = 0
            for fd, _ in events:
                if fd == self.listener.fileno():
                    self.accept()
                elif fd in self.by_fd:
                    entry = self.by_fd[fd]
                    if entry[0] == "rank":
                        self.rank_ended(fd, entry[1], entry[2])
                    else:
                        self.stub_readable(fd, entry[1], entry[2])


def serve(ready_fd):
    _Server(ready_fd).run()


# ---------------------------------------------------------------------------------------------
# The rank, in the forked child


def _place_fds(targets, received, owned):
    import fcntl
    # Out of the way of every target first (the rank's descriptor limit may be low).
    base = max(list(targets) + list(received)) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base) for fd in received]
    for fd in received:
        os.close(fd)
    for thing in owned:  # socket objects through close(), so that nothing closes them again
        if isinstance(thing, int):
            os.close(thing)
        else:
            thing.close()
    for target, fd in zip(targets, moved):
        os.dup2(fd, target, inheritable=True)
    for fd in moved:
        os.close(fd)
    for fd in (0, 1, 2):  # a stream the launcher had closed is closed in the rank too
        if fd not in targets:
            try:
                os.close(fd)
            except OSError:
                pass


def _apply(request, fds, owned, startup_cpu_ns):
    import ctypes
    import resource
    libc = ctypes.CDLL(None, use_errno=True)
    server = os.getppid()
    os.setsid()  # signals reach the rank through its stub only
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: dies with the server
    if os.getppid() != server:
        os._exit(70)
    fresh = getattr(libc, "phantora_fresh_process", None)
    if fresh is not None:
        fresh.argtypes = [ctypes.c_longlong]
        fresh(startup_cpu_ns)
    # At exit, the C++ static destructors of what the server imported would free its data
    # structures and so copy the pages the rank shares with it (the shim says more).
    end = getattr(libc, "phantora_end_without_inherited_exit_handlers", None)
    if end is not None:
        end()
    _place_fds(request["fds"], fds, owned)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    for name, (soft, hard) in request["rlimits"].items():
        try:
            resource.setrlimit(getattr(resource, name), (soft, hard))
        except (ValueError, OSError):
            pass
    os.environ.clear()
    os.environ.update(request["env"])
    for s in signal.valid_signals():
        if s in (signal.SIGKILL, signal.SIGSTOP):
            continue
        want = signal.SIG_DFL
        if s in request["ignored"] or s in (signal.SIGPIPE, signal.SIGXFSZ):
            want = signal.SIG_IGN  # as the launcher left it; Python ignores these two itself
        elif s == signal.SIGINT:
            want = signal.default_int_handler
        try:
            if signal.getsignal(s) != want:
                signal.signal(s, want)
        except (OSError, ValueError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, request["blocked"])
    sys.path[:] = request["sys_path"]
    sys.argv[:] = request["argv"]
    sys.orig_argv[:] = request["orig_argv"]
    # Generators seeded from entropy at import would otherwise repeat in every rank.
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()


def _become_rank(request, fds, owned, startup_cpu_ns):
    # Until the descriptors are in place, the rank's stderr is the one the stub sent (kept
    # above every descriptor number the rank will have).
    import fcntl
    err = -1
    if 2 in request["fds"]:
        err = fcntl.fcntl(fds[request["fds"].index(2)], fcntl.F_DUPFD_CLOEXEC,
                          max(list(request["fds"]) + list(fds)) + 1)
    try:
        _apply(request, fds, owned, startup_cpu_ns)
    except BaseException as e:  # the rank cannot start: say why on its stderr
        try:
            import traceback
            os.write(err, ("phantora: warm ranks: could not start the rank: " +
                           "".join(traceback.format_exception(e))).encode())
        finally:
            os._exit(70)
    if err >= 0:
        os.close(err)
    import types
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    try:
        if request["kind"] == "module":
            import runpy
            runpy._run_module_as_main(request["target"], alter_argv=True)
        else:
            import builtins
            import importlib.machinery
            path = request["main_file"]
            main.__dict__.update(__builtins__=builtins, __file__=path, __cached__=None,
                                 __loader__=importlib.machinery.SourceFileLoader("__main__", path))
            with open(path, "rb") as f:
                source = f.read()
            code = compile(source, path, "exec", dont_inherit=True)
            del source
            exec(code, main.__dict__)
    except SystemExit as e:
        _end(e.code)
    except BaseException as e:
        # As the interpreter reports an uncaught exception, without this module's frames.
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_globals is globals():
            tb = tb.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        if isinstance(e, KeyboardInterrupt):
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        _end(1)
    _end(0)


def _end(code):
    """Ends the rank as the interpreter's shutdown would (Py_FinalizeEx, then exit(3)) but for
    its teardown of every module and object. That would release the objects the rank inherited
    from the server, and every reference count and free it writes copies a page the rank shares
    with the server and the other ranks (a GPT DDP rank whose teardown ran grew from 22 to 121
    MiB of private memory as it ended: docs/performance.md); and extension modules that look
    for leaks at shutdown (nanobind's, in triton) would report the server's objects, frozen and
    so never collected, as leaked, dozens of lines per rank. What the teardown did that a job may
    rely on is done here in the same order: non-daemon threads are joined, atexit callbacks run
    (logging, multiprocessing, weakref.finalize and tempfile clean up there), files the job left
    open are flushed (their deallocation would have flushed them) and so are the standard
    streams. What is not: __del__ methods of objects still
    alive at exit, which Python does not promise to call (the data model's object.__del__)."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # as the interpreter reports sys.exit("message")
        try:
            print(code, file=sys.stderr)
        except BaseException:
            pass
        status = 1
    import threading
    try:
        threading._shutdown()
    except BaseException:
        pass
    import atexit
    atexit._run_exitfuncs()
    import gc
    import io
    # The rank's own objects only: what the server made is frozen out of get_objects (gc.freeze).
    for obj in gc.get_objects():
        try:  # (isinstance itself raises on a weak proxy whose object is gone)
            if isinstance(obj, io.IOBase) and not obj.closed:
                obj.flush()
        except BaseException:
            pass
    try:
        sys.stdout.flush()
    except BaseException:
        status = status or 120  # as Py_FinalizeEx when sys.stdout cannot be flushed
    try:
        sys.stderr.flush()
    except BaseException:
        pass
    # exit(3) with the interpreter lock held (PyDLL): the C-level handlers still run, the shim's
    # exit report among them (phantora_end_without_inherited_exit_handlers).
    import ctypes
    ctypes.PyDLL(None).exit(ctypes.c_int(status))
