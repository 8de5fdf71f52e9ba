"""A rank for warm_ranks.py: reports what it sees of its start (as JSON on fd 1, a note on fd 2
and on an inherited descriptor), then ends as its first argument says:
  exit:N    exits with N          signal:S  kills itself with signal S
  wait      waits until a signal ends it (prints "ready" first)
  raise     raises an exception it does not catch
  finish    ends with sys.exit("a message") while a non-daemon thread still runs, an atexit
            callback is registered and a file it wrote is left open (the interpreter prints the
            message, joins the thread, runs the callback and flushes the file, in that order),
            and a weak proxy whose object is gone is still alive (torchtitan's jobs leave some)
"""
import json
import os
import resource
import signal
import sys
import time

warmed = "torch" in sys.modules  # a warm rank starts with the server's imports
mode = sys.argv[1]
seen = {
    "rank": os.environ.get("RANK"), "pid": os.getpid(), "warmed": warmed,
    "argv": sys.argv, "cwd": os.getcwd(), "path": sys.path, "tag": os.environ.get("WARM_TAG"),
    "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)), "umask": os.umask(0),
    "main_file": __file__, "name": __name__,
    "sigint": str(signal.getsignal(signal.SIGINT)),
    "sigusr2": str(signal.getsignal(signal.SIGUSR2)),
}
print(json.dumps(seen), flush=True)
print(f"stderr of rank {seen['rank']}", file=sys.stderr, flush=True)
extra = int(os.environ.get("WARM_EXTRA_FD", "-1"))
if extra >= 0:
    os.write(extra, f"extra fd of rank {seen['rank']}\n".encode())
    os.close(extra)
kind, _, value = mode.partition(":")
if kind == "exit":
    sys.exit(int(value))
if kind == "signal":
    os.kill(os.getpid(), int(value))
    time.sleep(60)
if kind == "wait":
    print("ready", flush=True)
    while True:
        signal.pause()
if kind == "raise":
    raise RuntimeError("raised by the rank")
if kind == "finish":
    import atexit
    import threading

    def late():
        time.sleep(0.3)
        print("thread joined", file=sys.stderr, flush=True)

    threading.Thread(target=late).start()
    atexit.register(lambda: print("atexit ran", file=sys.stderr, flush=True))
    left_open = open(f"left-open-{os.getpid()}.txt", "w", encoding="utf-8")
    left_open.write("flushed at exit\n")
    import weakref

    class Gone:
        pass

    gone = Gone()
    proxies = [weakref.proxy(gone)]
    del gone
    sys.exit("the rank's exit message")
