#!/usr/bin/env python3
"""Sends a running daemon malformed frames; every connection must be closed by it, never crash it.

Runs as (part of) a job under `phantora run`, which puts the daemon's socket (or, with
--listen, its TCP address) and the run's token in the environment (PHANTORA_SOCKET or
PHANTORA_ADDRESS, PHANTORA_TOKEN). Each case opens a connection of
its own, sends something wrong (layouts from protocol/include/phantora/protocol.hpp) and expects
the daemon to close it within a few seconds. Prints "bad_frames: all N refused" on success,
else the cases that were not, and exits 1. Python 3.11+ standard library only.
"""

import os
import random
import socket
import struct
import sys

MAGIC = 0x50484E54


def protocol_version():
    # wire::kVersion, read from the header so that this script follows protocol changes.
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol",
                          "include", "phantora", "protocol.hpp")
    with open(header) as f:
        for line in f:
            if "constexpr uint16_t kVersion" in line:
                return int(line.split("=")[1].split(";")[0])
    raise SystemExit("bad_frames: kVersion not found in " + header)


VERSION = protocol_version()
HELLO, WELCOME, BATCH, REPLY, BYE, PAYLOAD, REFUSED = 1, 2, 3, 4, 5, 6, 7
ADDRESS = os.environ.get("PHANTORA_ADDRESS", "")
PATH = os.environ.get("PHANTORA_SOCKET", "")
TOKEN = os.environ["PHANTORA_TOKEN"].encode()


def frame(ftype, payload, magic=MAGIC, version=VERSION, length=None):
    # FrameHeader: uint32 magic, uint16 version, uint16 type, uint32 length (12 bytes)
    n = len(payload) if length is None else length
    return struct.pack("<IHHI", magic, version, ftype, n) + payload


def hello(token=TOKEN, host=0, size=None):
    # wire::Hello: char token[32], int32 host, pid, global_rank, local_rank, world_size (52
    # bytes); rank -1 so that the report does not take these connections for ranks of the job.
    body = token.ljust(32, b"\0")[:32] + struct.pack("<iiiii", host, os.getpid(), -1, -1, -1)
    return frame(HELLO, body if size is None else body[:size])


def record(rtype, body, request=0, host_ps=0, size=None):
    # RecordHeader: uint16 type, uint16 pad, uint32 size, uint64 request, int64 host_time_ps,
    # int64 bound_ps (a single-threaded client: its clock, or none while it waits for a reply)
    n = len(body) if size is None else size
    bound = (1 << 63) - 1 if request else host_ps
    return struct.pack("<HHIQqq", rtype, 0, n, request, host_ps, bound) + body


def connect():
    if ADDRESS:
        host, port = ADDRESS.rsplit(":", 1)
        s = socket.create_connection((host.strip("[]"), int(port)), timeout=5)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(PATH)
    return s


def read_frame(s):
    head = b""
    while len(head) < 12:
        chunk = s.recv(12 - len(head))
        if not chunk:
            return None
        head += chunk
    magic, _, ftype, n = struct.unpack("<IHHI", head)
    body = b""
    while len(body) < n:
        chunk = s.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return ftype, body


def closed_by_daemon(s):
    """True when the daemon closes the connection (EOF) within the socket's timeout."""
    try:
        while True:
            data = s.recv(4096)
            if not data:
                return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def attempt(greet, *payloads):
    s = connect()
    try:
        if greet:
            s.sendall(hello())
            f = read_frame(s)
            if f is None or f[0] != WELCOME:
                return False
        for p in payloads:
            try:
                s.sendall(p)
            except (BrokenPipeError, ConnectionResetError):
                return True  # closed already
        return closed_by_daemon(s)
    finally:
        s.close()


# wire::Launch: stream, device, kernel, grid[3], block[3], shared_mem, bytes_read,
# bytes_written, work kind + 7 bytes padding, dims[6]; undefined kernel 12345.
LAUNCH = struct.pack("<QiI3I3IQQQB7x6I", 1, 0, 12345, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0,
                     0, 0, 0, 0, 0, 0)
STREAM_CREATE_DEV99 = struct.pack("<QiIiI", 1 << 16, 99, 0, 0, 0)


CASES = [
    ("bad magic", False, [frame(HELLO, b"x" * 48, magic=0xDEADBEEF)]),
    ("bad version", False, [frame(HELLO, b"x" * 48, version=99)]),
    ("frame over the size limit", False, [frame(BATCH, b"", length=1 << 30)]),
    ("batch before hello", False, [frame(BATCH, record(14, b"\0" * 16))]),
    ("bye before hello", False, [frame(BYE, b"\0" * 8)]),
    ("hello of the wrong size", False, [hello(size=40)]),
    ("wrong token", False, [hello(token=b"0" * 32)]),
    ("empty token", False, [hello(token=b"")]),
    ("host out of range", False, [hello(host=99)]),
    ("negative host", False, [hello(host=-1)]),
    ("welcome sent to the daemon", False, [frame(WELCOME, b"\0" * 16)]),
    ("second hello", True, [hello()]),
    ("unknown frame type", True, [frame(77, b"")]),
    ("reply frame from a client", True, [frame(REPLY, b"\0" * 32)]),
    ("truncated record header", True, [frame(BATCH, b"\0" * 10)]),
    ("record longer than the batch", True, [frame(BATCH, record(14, b"\0" * 8, size=1000))]),
    ("unknown record type", True, [frame(BATCH, record(999, b""))]),
    ("record type 0", True, [frame(BATCH, record(0, b""))]),
    ("negative host time", True, [frame(BATCH, record(14, b"\0" * 16, host_ps=-5))]),
    ("host-clock of the wrong size", True, [frame(BATCH, record(14, b"\0" * 3))]),
    ("launch of an undefined kernel", True, [frame(BATCH, record(4, LAUNCH))]),
    ("stream on device 99", True, [frame(BATCH, record(2, STREAM_CREATE_DEV99))]),
    ("define-kernel name overrun", True,
     [frame(BATCH, record(1, struct.pack("<II", 1, 1 << 31) + b"abc"))]),
    ("collective with 2^32-1 ops", True,
     [frame(BATCH, record(22, struct.pack("<QiI", 1, 0, 0xFFFFFFFF)))]),
    ("collective with no ops", True, [frame(BATCH, record(22, struct.pack("<QiI", 1, 0, 0)))]),
    ("graph with 2^32-1 nodes", True,
     [frame(BATCH, record(15, struct.pack("<QII", 1, 0xFFFFFFFF, 0)))]),
    ("launch of an unknown graph", True,
     [frame(BATCH, record(16, struct.pack("<QQiI", 7, 1, 0, 0)))]),
    ("comm-init that is no request", True, [frame(BATCH, record(19, b"\0" * 256))]),
    ("bye of the wrong size", True, [frame(BYE, b"\0" * 3)]),
    ("payload shorter than announced, then silence", True, [frame(BATCH, b"\0" * 5,
                                                                length=100)]),
]


def refusal_says_why():
    """A hello with a wrong token is answered with the reason (kRefused), then closed."""
    s = connect()
    try:
        s.sendall(hello(token=b"0" * 32))
        f = read_frame(s)
        return f is not None and f[0] == REFUSED and b"token" in f[1] and closed_by_daemon(s)
    finally:
        s.close()


def main():
    failed = []
    if not refusal_says_why():
        failed.append("a refused hello gets its reason")
    for name, greet, payloads in CASES:
        if name.endswith("then silence"):
            # The daemon waits for the rest of the frame; closing our end must end it cleanly.
            s = connect()
            s.sendall(hello())
            read_frame(s)
            s.sendall(payloads[0])
            s.close()
            continue
        if not attempt(greet, *payloads):
            failed.append(name)
    rng = random.Random(6)
    for i in range(200):
        # Random frames with a valid header: the hello decoder and the frame switch.
        body = rng.randbytes(rng.randrange(0, 300))
        ftype = rng.choice([HELLO, BATCH, BYE, rng.randrange(0, 1 << 16)])
        if not attempt(False, frame(ftype, body)):
            failed.append(f"random frame {i}")
    for i in range(50):
        # Random bytes, header included.
        if not attempt(False, rng.randbytes(rng.randrange(12, 200))):
            failed.append(f"random bytes {i}")
    total = len(CASES) + 251
    if failed:
        print(f"bad_frames: {len(failed)} of {total} not refused: {', '.join(failed)}")
        return 1
    print(f"bad_frames: all {total} refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
