"""torch.distributed's object collectives on the simulated GPUs (run by torchrun, 2+ ranks).

They pickle objects into byte tensors, exchange the sizes with collectives, and compute on the
GPU with the sizes (torch.cat, torch.sum(...).item(), max().item(), `offset += size`) before
exchanging the bytes: this passes only when those tiny kernels are computed (docs/pytorch.md,
"Values"). Every received object is compared with what its sender built.
"""
import os

import torch
import torch.distributed as dist


def payload(rank):
    # Different sizes per rank, so that padding to the largest size is exercised.
    return {"rank": rank, "text": "x" * (17 * rank + 3), "nested": [rank, (rank, 2.5), None]}


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

    for src in range(world):
        objs = [payload(src), list(range(src + 5)), "end"] if rank == src else [None] * 3
        dist.broadcast_object_list(objs, src=src)
        assert objs == [payload(src), list(range(src + 5)), "end"], (rank, src, objs)

    gathered = [None] * world
    dist.all_gather_object(gathered, payload(rank))
    assert gathered == [payload(r) for r in range(world)], (rank, gathered)

    dst = world - 1
    out = [None] * world if rank == dst else None
    dist.gather_object(payload(rank), out, dst=dst)
    if rank == dst:
        assert out == [payload(r) for r in range(world)], out

    received = [None]
    scattered = [payload(r) for r in range(world)] if rank == 0 else None
    dist.scatter_object_list(received, scattered, src=0)
    assert received == [payload(rank)], (rank, received)

    dist.barrier()
    print(f"rank {rank}: object collectives ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
