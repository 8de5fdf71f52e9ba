"""Train DLRM-DCNv2 (the MLPerf recommendation model) with table-wise or DMT sharding.

Plain PyTorch, no TorchRec: embedding tables live on the GPUs and are looked up with
F.embedding_bag; every collective is an autograd Function whose backward issues the transposed
collective, as TorchRec does. Run it with torchrun on N GPUs of H hosts (L = N/H per host):

    torchrun --nnodes 2 --nproc-per-node 8 ... dlrm.py --sharding dmt --compression 4

--sharding table-wise  (the baseline) each table on one GPU (largest first, to the least loaded).
    Forward: world all-to-all of the ids (lengths and values) to the tables' owners, lookups,
    world all-to-all of the pooled embeddings back to the samples' GPUs. Dense parts (bottom
    MLP, DCN v2, top MLP) are trained with DDP over the world.
--sharding dmt  Disaggregated Multi-Tower (Luo et al., MLSys 2024): one tower of features per
    host. Ids go to the tower's host over the cross-host group of same-local-rank GPUs (H peers);
    the tower's tables are row-sharded over the host's GPUs, looked up after an intra-host
    all-to-all of the ids and combined with an intra-host reduce-scatter over NVLink; a tower
    module compresses each tower's output by --compression before the cross-host all-to-all of
    the compressed embeddings back to the samples' GPUs. Tower modules are trained with DDP over
    the host, the dense parts with DDP over the world.

Embedding gradients are applied in the backward pass (row-wise SGD on the rows looked up, like a
fused embedding optimizer), never as dense gradients of whole tables. Ids are synthetic and
uniform (the MLPerf multi-hot generator is uniform); the host never holds a table. Rank 0 prints
each step's time and samples/s; every rank prints its peak GPU memory at the end.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

# MLPerf DLRM-DCNv2 (mlcommons/training recommendation_v2/torchrec_dlrm): 26 sparse features.
MLPERF_ROWS = [40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956,
               405282, 10, 2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152,
               12973, 108, 36]
MLPERF_HOTS = [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1]
DENSE_FEATURES = 13


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sharding", choices=["table-wise", "dmt"], default="table-wise")
    p.add_argument("--features", type=int, default=26,
                   help="sparse features; beyond 26 the MLPerf tables repeat")
    p.add_argument("--batch-size", type=int, default=2048, help="samples per GPU per step")
    p.add_argument("--embedding-dim", type=int, default=128)
    p.add_argument("--rows-scale", type=float, default=1.0,
                   help="scale every table's rows (1.0: the MLPerf sizes)")
    p.add_argument("--compression", type=int, default=4, help="DMT tower module compression c")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.01)
    args = p.parse_args(argv)
    if args.features < 1 or args.batch_size < 1 or args.steps < 1 or args.compression < 1:
        p.error("--features, --batch-size, --steps and --compression must be at least 1")
    return args


def feature_tables(args):
    """(rows, hotness) of each sparse feature."""
    out = []
    for f in range(args.features):
        rows = max(1, int(MLPERF_ROWS[f % 26] * args.rows_scale))
        out.append((rows, MLPERF_HOTS[f % 26]))
    return out


# ---- collectives as autograd functions -------------------------------------------------------

class AllToAll(torch.autograd.Function):
    """all_to_all_single with splits (first dimension); backward sends the gradients back."""

    @staticmethod
    def forward(ctx, x, out_splits, in_splits, group):
        ctx.splits = (out_splits, in_splits)
        ctx.group = group
        out = x.new_empty((sum(out_splits),) + tuple(x.shape[1:]))
        dist.all_to_all_single(out, x.contiguous(), out_splits, in_splits, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        out_splits, in_splits = ctx.splits
        back = grad.new_empty((sum(in_splits),) + tuple(grad.shape[1:]))
        dist.all_to_all_single(back, grad.contiguous(), in_splits, out_splits, group=ctx.group)
        return back, None, None, None


class ReduceScatter(torch.autograd.Function):
    """reduce_scatter_tensor over the first dimension; backward is the all-gather."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        n = dist.get_world_size(group)
        out = x.new_empty((x.shape[0] // n,) + tuple(x.shape[1:]))
        dist.reduce_scatter_tensor(out, x.contiguous(), group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        n = dist.get_world_size(ctx.group)
        full = grad.new_empty((grad.shape[0] * n,) + tuple(grad.shape[1:]))
        dist.all_gather_into_tensor(full, grad.contiguous(), group=ctx.group)
        return full, None


class PooledLookup(torch.autograd.Function):
    """Sum-pooled lookup: ids[i] belongs to bag bag_of_id[i], bags start at offsets. The backward
    pass applies the rows' update in place (row-wise SGD, as a fused embedding optimizer does)
    and returns no table gradient. Shapes never depend on id values."""

    @staticmethod
    def forward(ctx, marker, table, ids, offsets, bag_of_id, lr):
        ctx.save_for_backward(ids, bag_of_id)
        ctx.table, ctx.lr = table, lr
        return F.embedding_bag(ids, table, offsets, mode="sum")

    @staticmethod
    def backward(ctx, grad):
        ids, bag_of_id = ctx.saved_tensors
        ctx.table.index_add_(0, ids, grad.index_select(0, bag_of_id), alpha=-ctx.lr)
        return grad.new_zeros(()), None, None, None, None, None


def lookup(table, ids, bags, lr, marker):
    """`ids` spread evenly over `bags` bags (bag of id i: i * bags // n)."""
    n = ids.numel()
    i = torch.arange(bags, device=ids.device)
    offsets = (i * n + bags - 1) // bags
    bag_of_id = torch.arange(n, device=ids.device) * bags // max(n, 1)
    # `marker` (a scalar that requires grad) puts the lookup on the autograd graph, so that the
    # backward pass reaches it and updates the table.
    return PooledLookup.apply(marker, table, ids, offsets, bag_of_id, lr)


def exchange(blocks, widths, group, peers):
    """All-to-all of row blocks of different widths: `blocks` is [peers * B, w] (B rows for each
    peer), peer p answers with B rows of widths[p]; returns [B, sum(widths)]."""
    B = blocks.shape[0] // peers
    w = blocks.shape[1]
    flat = AllToAll.apply(blocks.reshape(-1), [B * x for x in widths], [B * w] * peers, group)
    parts = torch.split(flat, [B * x for x in widths])
    return torch.cat([part.view(B, x) for part, x in zip(parts, widths)], dim=1)


# ---- dense parts -------------------------------------------------------------------------------

def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


class LowRankCross(nn.Module):
    """DCN v2 cross layer, low rank: x_{l+1} = x0 * (U (V x_l) + b) + x_l."""

    def __init__(self, width, rank):
        super().__init__()
        self.v = nn.Linear(width, rank, bias=False)
        self.u = nn.Linear(rank, width)

    def forward(self, x0, x):
        return x0 * self.u(self.v(x)) + x


class Dense(nn.Module):
    """Bottom MLP 512-256-D, DCN v2 (3 low-rank cross layers, rank 512), top MLP
    1024-1024-512-256-1, on [bottom output, embeddings]."""

    def __init__(self, embedding_width, dim):
        super().__init__()
        self.bottom = mlp([DENSE_FEATURES, 512, 256, dim])
        width = dim + embedding_width
        self.cross = nn.ModuleList(LowRankCross(width, 512) for _ in range(3))
        self.top = mlp([width, 1024, 1024, 512, 256, 1])

    def forward(self, dense, embeddings):
        x0 = torch.cat([self.bottom(dense), embeddings], dim=1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        return self.top(x).squeeze(1)


# ---- sharding schemes ------------------------------------------------------------------------

def balanced_owners(weights, bins):
    """Largest first, each to the least loaded bin."""
    load = [0] * bins
    owner = [0] * len(weights)
    for f in sorted(range(len(weights)), key=lambda f: -weights[f]):
        b = min(range(bins), key=lambda i: load[i])
        owner[f] = b
        load[b] += weights[f]
    return owner


class TableWise(nn.Module):
    def __init__(self, args, tables, rank, world, device):
        super().__init__()
        self.args, self.tables_spec = args, tables
        self.rank, self.world = rank, world
        self.owner = balanced_owners([rows for rows, _ in tables], world)
        self.mine = [f for f in range(len(tables)) if self.owner[f] == rank]
        # Tables on the GPU, uninitialised (values do not matter to the simulation).
        self.tables = [torch.empty(tables[f][0], args.embedding_dim, device=device)
                       for f in self.mine]
        self.marker = nn.Parameter(torch.zeros((), device=device))
        self.dense = Dense(len(tables) * args.embedding_dim, args.embedding_dim).to(device)

    def embeddings(self, ids):
        """ids[f]: this GPU's batch of feature f, [B * hot_f]. Returns [B, F * D]."""
        a, B, D = self.args, self.args.batch_size, self.args.embedding_dim
        # Ids to the tables' owners: per-peer counts first, then lengths and values.
        per_peer = [sum(B * self.tables_spec[f][1] for f in range(len(ids)) if self.owner[f] == p)
                    for p in range(self.world)]
        counts = torch.tensor(per_peer, device=ids[0].device)
        peer_counts = torch.empty_like(counts)
        dist.all_to_all_single(peer_counts, counts)
        lengths = torch.cat([torch.full((B,), self.tables_spec[f][1], device=ids[0].device)
                             for p in range(self.world) for f in range(len(ids))
                             if self.owner[f] == p])
        mine_lengths = [B * len(self.mine)] * self.world
        sent_lengths = [B * sum(1 for f in range(len(ids)) if self.owner[f] == p)
                        for p in range(self.world)]
        got_lengths = lengths.new_empty(sum(mine_lengths))
        dist.all_to_all_single(got_lengths, lengths, mine_lengths, sent_lengths)
        values = torch.cat([ids[f] for p in range(self.world) for f in range(len(ids))
                            if self.owner[f] == p])
        mine_ids = sum(B * self.tables_spec[f][1] for f in self.mine)
        got = values.new_empty(mine_ids * self.world)
        dist.all_to_all_single(got, values, [mine_ids] * self.world, per_peer)
        # Lookups for the whole world's batch: [world * B, F_mine * D].
        pooled, at = [], 0
        src = got.view(self.world, mine_ids)
        for table, f in zip(self.tables, self.mine):
            hot = self.tables_spec[f][1]
            chunk = src[:, at:at + B * hot].reshape(-1)
            pooled.append(lookup(table, chunk, self.world * B, a.lr, self.marker))
            at += B * hot
        mine = (torch.cat(pooled, dim=1) if pooled
                else self.marker.new_zeros(self.world * B, 0) + self.marker)
        # Pooled embeddings back to the samples' GPUs: [B, F * D], owners' features in turn.
        widths = [D * sum(1 for f in range(len(ids)) if self.owner[f] == p)
                  for p in range(self.world)]
        return exchange(mine, widths, None, self.world), None


class Dmt(nn.Module):
    def __init__(self, args, tables, rank, world, local, per_host, device):
        super().__init__()
        self.args, self.tables_spec = args, tables
        self.hosts = world // per_host
        self.host, self.local, self.per_host = rank // per_host, local, per_host
        H, L = self.hosts, per_host
        # Process groups: every GPU joins every group's creation (torch.distributed's rule).
        self.intra = self.cross = None
        for h in range(H):
            g = dist.new_group([h * L + l for l in range(L)])
            if h == self.host:
                self.intra = g
        for l in range(L):
            g = dist.new_group([h * L + l for h in range(H)])
            if l == local:
                self.cross = g
        # Towers: features split over the hosts, balanced by ids per sample.
        self.tower = balanced_owners([hot for _, hot in tables], H)
        self.features_of = [[f for f in range(len(tables)) if self.tower[f] == t] for t in range(H)]
        D, c = args.embedding_dim, args.compression
        mine = self.features_of[self.host]
        # This host's tables, row-sharded over its GPUs.
        self.shards = [torch.empty(max(1, tables[f][0] // L), D, device=device) for f in mine]
        self.marker = nn.Parameter(torch.zeros((), device=device))
        width = max(1, len(mine) * D)
        self.tower_module = nn.Linear(width, max(1, width // c)).to(device)
        self.tower_widths = [max(1, max(1, len(fs) * D) // c) for fs in self.features_of]
        self.tower_call = self.tower_module  # replaced by its DDP wrapper in main()
        self.dense = Dense(sum(self.tower_widths), D).to(device)

    def embeddings(self, ids):
        a, B, D = self.args, self.args.batch_size, self.args.embedding_dim
        H, L = self.hosts, self.per_host
        dev = ids[0].device
        # 1. Ids of tower t's features to host t over the cross group (H peers).
        per_tower = [sum(B * self.tables_spec[f][1] for f in fs) for fs in self.features_of]
        values = torch.cat([ids[f] for fs in self.features_of for f in fs])
        mine = per_tower[self.host]
        got = values.new_empty(mine * H)
        dist.all_to_all_single(got, values, [mine] * H, per_tower, group=self.cross)
        # 2. Inside the host: ids to the row shards' owners (uniform ids: an equal share each,
        #    padded to a multiple of L), lookups of partial bags for all L * H * B bags of the
        #    host, reduce-scatter of the partial sums over NVLink.
        share = -(-mine * H // L)
        padded = F.pad(got, (0, share * L - got.numel()))
        routed = padded.new_empty(share * L)
        dist.all_to_all_single(routed, padded, group=self.intra)
        pooled, at = [], 0
        for shard, f in zip(self.shards, self.features_of[self.host]):
            n = H * B * self.tables_spec[f][1]  # this feature's ids, from all L peers together
            pooled.append(lookup(shard, routed[at:at + n], L * H * B, a.lr, self.marker))
            at += n
        partial = (torch.cat(pooled, dim=1) if pooled
                   else self.marker.new_zeros(L * H * B, D) + self.marker)
        tower_out = ReduceScatter.apply(partial, self.intra)  # [H * B, F_t * D]
        # 3. The tower module compresses the tower's output by c (DDP over the host).
        compressed = self.tower_call(tower_out)  # [H * B, F_t * D / c]
        # 4. Compressed embeddings back to the samples' GPUs over the cross group.
        return exchange(compressed, self.tower_widths, self.cross, H), None


def main(argv=None):
    args = parse_args(argv)
    rank = int(os.environ["RANK"])
    local = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    per_host = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=device)
    if world % per_host:
        raise SystemExit(f"WORLD_SIZE {world} is not a multiple of LOCAL_WORLD_SIZE {per_host}")
    tables = feature_tables(args)

    if args.sharding == "table-wise":
        model = TableWise(args, tables, rank, world, device)
        dense = nn.parallel.DistributedDataParallel(model.dense)
        dense_params = list(model.dense.parameters())
    else:
        model = Dmt(args, tables, rank, world, local, per_host, device)
        dense = nn.parallel.DistributedDataParallel(model.dense)
        model.tower_call = nn.parallel.DistributedDataParallel(model.tower_module,
                                                               process_group=model.intra)
        dense_params = list(model.dense.parameters()) + list(model.tower_module.parameters())
    optimizer = torch.optim.Adagrad(dense_params, lr=args.lr)
    B = args.batch_size

    def log(msg):
        if rank == 0:
            print(msg, flush=True)

    log(f"DLRM-DCNv2, {args.sharding} sharding: {len(tables)} features, {world} GPUs "
        f"({world // per_host} host(s) x {per_host}), batch {B} per GPU"
        + (f", compression {args.compression}" if args.sharding == "dmt" else ""))
    times = []
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        ids = [torch.randint(0, rows, (B * hot,), device=device) for rows, hot in tables]
        dense_in = torch.randn(B, DENSE_FEATURES, device=device)
        labels = torch.randint(0, 2, (B,), device=device).float()
        emb, _ = model.embeddings(ids)
        logits = dense(dense_in, emb)
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        times.append(dt)
        log(f"step {step:4d}/{args.steps} | step time {dt * 1e3:.2f} ms | "
            f"samples/s {B * world / dt:,.0f}")
    kept = times[1:] if len(times) > 1 else times
    avg = sum(kept) / len(kept)
    log(f"average over {len(kept)} step(s): step time {avg * 1e3:.2f} ms | "
        f"samples/s {B * world / avg:,.0f}")
    print(f"rank {rank}: peak memory allocated "
          f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
