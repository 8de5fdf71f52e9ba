#!/usr/bin/env python3
"""Writes the protocol fuzzer's seed inputs (corpus/protocol/*.bin) in fuzz_protocol.cpp's format.

Each seed is a small valid conversation of 2-4 clients on the fuzzer's 2 x 2 cluster, using the
record layouts of protocol/include/phantora/protocol.hpp, so that mutations start deep in the
decoder (streams, kernels, graphs, communicators, collectives with payloads) rather than at the
frame header. Rerun after a protocol change; the seeds are committed. Python 3 stdlib only.
"""

import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "protocol")

(DEFINE_KERNEL, STREAM_CREATE, STREAM_DESTROY, LAUNCH, COPY, MEMSET, EVENT_RECORD, WAIT_EVENT,
 ALLOC, FREE, STREAM_SYNC, EVENT_SYNC, DEVICE_SYNC, HOST_CLOCK, DEFINE_GRAPH, GRAPH_LAUNCH,
 HOST_FUNC, GEMM, COMM_INIT, COMM_SPLIT, COMM_DESTROY, COLLECTIVE) = range(1, 23)
ALLREDUCE, BROADCAST, SEND, RECV = 1, 2, 7, 8
F32 = 2
USER_STREAM = 1 << 16


NO_BOUND = (1 << 63) - 1  # wire::kNoBound


def rec(rtype, body, request=0, t=0):
    # A single-threaded client: it bounds the network at its clock unless it waits for a reply.
    bound = NO_BOUND if request else t
    return struct.pack("<HHIQqq", rtype, 0, len(body), request, t, bound) + body


def coll_op(comm, kind, count, peer=0, payload=0, redop=0):
    return struct.pack("<QBBBBiQQQQ", comm, kind, F32, redop, 0, peer, count, 0x1000, 0x2000,
                       payload)


def collective(stream, device, ops, payloads=b""):
    return rec(COLLECTIVE, struct.pack("<QiI", stream, device, len(ops)) + b"".join(ops) +
               payloads, t=50_000)


def comm_init(comm, uid, nranks, rank, device, request):
    body = struct.pack("<Q128s5i32s32s4x", comm, uid, nranks, rank, device, 0, 0, b"", b"")
    return rec(COMM_INIT, body, request=request, t=20_000)


def client_work(i, device):
    s = USER_STREAM + 1
    name = b"_Z4stepPf"
    b = rec(DEFINE_KERNEL, struct.pack("<II", 1, len(name)) + name)
    b += rec(STREAM_CREATE, struct.pack("<QiIiI", s, device, 1, 0, 0), t=1000)
    b += rec(ALLOC, struct.pack("<QQiI", 0x7f0000000000 + i * 0x1000000, 1 << 20, device, 0),
             t=2000)
    # wire::Launch with decoded elementwise work (kind 1): 1 MiB read, 1 MiB written.
    b += rec(LAUNCH, struct.pack("<QiI3I3IQQQB7x6I", s, device, 1, 8, 1, 1, 256, 1, 1, 0, 1 << 20,
                                 1 << 20, 1, 0, 0, 0, 0, 0, 0), t=3000)
    # An attention launch (kind 6): batch 2, 8 heads, 1024 x 1024, head dim 64, causal, bf16.
    b += rec(LAUNCH, struct.pack("<QiI3I3IQQQB7x6I", s, device, 1, 8, 2, 8, 128, 1, 1, 0, 0, 0, 6,
                                 2, 8, 1024, 1024, 64, 3), t=3500)
    b += rec(EVENT_RECORD, struct.pack("<QQiI", 11, s, device, 0), t=4000)
    b += rec(WAIT_EVENT, struct.pack("<QQiI", 11, 1 + device, device, 0), t=4500)
    b += rec(MEMSET, struct.pack("<QiIQ", s, device, 0, 4096), t=5000)
    b += rec(COPY, struct.pack("<QiBBHQ", s, device, 1, 1, 0, 1 << 16), t=6000)
    b += rec(GEMM, struct.pack("<QiIqqqq8B", s, device, 1, 128, 256, 64, 1, 5, 5, 5, 2, 0, 1, 0,
                               0), t=7000)
    b += rec(HOST_FUNC, struct.pack("<QiI", s, device, 0), t=7500)
    b += rec(HOST_CLOCK, struct.pack("<QII", 0, 0, 0), t=8000)
    return b


def batch(client, body):
    return bytes([(client << 4) | 0]) + struct.pack("<H", len(body)) + body


def bye(client, t):
    return bytes([(client << 4) | 1]) + struct.pack("<q", t)


def drop(client):
    return bytes([(client << 4) | 2])


def devices(n):
    return [i // 2 for i in range(n)]  # client i: host i % 2, local device i // 2


def seed_allreduce():
    n, uid = 4, b"U" * 128
    out = bytes([n - 1])
    for i, d in enumerate(devices(n)):
        out += batch(i, client_work(i, d) + comm_init(100 + i, uid, n, i, d, 1))
    for i, d in enumerate(devices(n)):
        body = collective(USER_STREAM + 1, d, [coll_op(100 + i, ALLREDUCE, 1 << 20)])
        body += rec(STREAM_SYNC, struct.pack("<QiI", USER_STREAM + 1, d, 0), request=2, t=60_000)
        out += batch(i, body)
    for i in range(n):
        out += bye(i, 10**9)
    return out


def seed_payload_and_p2p():
    n, uid = 2, b"P" * 128
    out = bytes([n - 1])
    for i, d in enumerate(devices(n)):
        out += batch(i, client_work(i, d) + comm_init(7, uid, n, i, d, 1))
    for i, d in enumerate(devices(n)):
        small = coll_op(7, ALLREDUCE, 4, payload=16)
        p2p = coll_op(7, SEND if i == 0 else RECV, 1024, peer=1 - i)
        body = collective(USER_STREAM + 1, d, [small], b"\x01" * 16)
        body += collective(USER_STREAM + 1, d, [p2p])
        body += rec(COMM_SPLIT, struct.pack("<QQii", 7, 8, 0, i), request=3, t=70_000)
        body += rec(DEVICE_SYNC, struct.pack("<iI", d, 0), request=4, t=80_000)
        out += batch(i, body)
    out += drop(1) + bye(0, 10**9)
    return out


def seed_graph():
    out = bytes([0])
    nodes = b""
    for k in range(3):
        deps = [k - 1] if k else []
        nodes += struct.pack("<BBBBI3I3IQ8I", 1, 0, len(deps), 0, 1, 1, 1, 1, 32, 1, 1, 0,
                             *(deps + [0] * (8 - len(deps))))
    body = client_work(0, 0)
    body += rec(DEFINE_GRAPH, struct.pack("<QII", 5, 3, 0) + nodes)
    body += rec(GRAPH_LAUNCH, struct.pack("<QQiI", 5, USER_STREAM + 1, 0, 0), t=90_000)
    body += rec(EVENT_SYNC, struct.pack("<QQiI", 11, 0, 0, 0), request=9, t=91_000)
    body += rec(FREE, struct.pack("<QQiI", 0x7f0000000000, 0, 0, 0), t=92_000)
    body += rec(STREAM_DESTROY, struct.pack("<QiI", USER_STREAM + 1, 0, 0), t=93_000)
    out += batch(0, body) + bye(0, 10**6)
    return out


def seed_mismatch():
    n, uid = 2, b"M" * 128
    out = bytes([n - 1])
    for i, d in enumerate(devices(n)):
        out += batch(i, client_work(i, d) + comm_init(3, uid, n, i, d, 1))
    out += batch(0, collective(USER_STREAM + 1, 0, [coll_op(3, ALLREDUCE, 1024)]))
    out += batch(1, collective(USER_STREAM + 1, 0, [coll_op(3, BROADCAST, 1024, peer=1)]))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in (("allreduce", seed_allreduce()), ("payload_p2p", seed_payload_and_p2p()),
                       ("graph", seed_graph()), ("mismatch", seed_mismatch())):
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(data)
        print(f"{name}.bin: {len(data)} bytes")


if __name__ == "__main__":
    main()
