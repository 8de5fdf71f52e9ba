// Collective -> flows, per algorithm. Each channel is an independent copy of the algorithm's
// communication pattern carrying 1/channels of the data.
#include "nccl_flows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace phantora::net::detail {

namespace {

uint64_t flow_hash(uint64_t seed, int channel, int index) {
  return seed * 0x9e3779b97f4a7c15ULL + (static_cast<uint64_t>(channel) << 32) +
         static_cast<uint64_t>(index);
}

void add_flow(const FlowJob& job, GpuId src, GpuId dst, int channel, double bytes, int index,
              std::vector<PlannedFlow>& out) {
  PlannedFlow f{.src = src, .dst = dst, .channel = channel, .bytes = bytes, .path = {}};
  append_net_path(job.topo, src, dst, flow_hash(job.seed, channel, index), f.path);
  out.push_back(std::move(f));
}

// Ring order for one channel. In one node every order is equivalent (NVSwitch). Across nodes
// a channel enters each node at one GPU and leaves from another; alternating (enter a, leave
// b) and (enter b, leave a) from node to node keeps every inter-node hop on one rail, and
// rotating a and b with the channel spreads channels over all NICs, as NCCL's rings do.
void ring_order(const CommShape& s, int channel, std::vector<GpuId>& order) {
  order.clear();
  if (s.n_nodes == 1) {
    order = s.by_node[0];
    return;
  }
  for (int pos = 0; pos < s.n_nodes; ++pos) {
    const auto& l = s.by_node[pos];
    const int m = static_cast<int>(l.size());
    if (m == 1) {
      order.push_back(l[0]);
      continue;
    }
    const GpuId a = l[channel % m], b = l[(channel + 1) % m];
    std::vector<GpuId> middle;
    for (int k = 2; k < m; ++k) middle.push_back(l[(channel + k) % m]);
    const bool even = pos % 2 == 0;
    order.push_back(even ? a : b);
    if (even)
      order.insert(order.end(), middle.begin(), middle.end());
    else
      order.insert(order.end(), middle.rbegin(), middle.rend());
    order.push_back(even ? b : a);
  }
}

void ring_flows(const FlowJob& job, std::vector<PlannedFlow>& out) {
  const CommShape& s = job.shape;
  const int n = static_cast<int>(s.ranks.size());
  const double per_channel = job.tuning_bytes / job.channels;
  // Bytes each ring edge carries per channel (each rank sends this to its successor).
  double edge = per_channel;  // Broadcast / Reduce: a pipelined chain moves everything once
  if (job.op == CollOp::AllReduce) edge = 2.0 * (n - 1) / n * per_channel;
  if (job.op == CollOp::AllGather || job.op == CollOp::ReduceScatter)
    edge = static_cast<double>(n - 1) / n * per_channel;
  const GpuId root_gpu = s.ranks[job.root];
  std::vector<GpuId> order;
  for (int c = 0; c < job.channels; ++c) {
    ring_order(s, c, order);
    for (int i = 0; i < n; ++i) {
      const GpuId u = order[i], v = order[(i + 1) % n];
      // The chain of Broadcast starts at the root (no edge into it); that of Reduce ends there.
      if (job.op == CollOp::Broadcast && v == root_gpu) continue;
      if (job.op == CollOp::Reduce && u == root_gpu) continue;
      add_flow(job, u, v, c, edge, i, out);
    }
  }
}

// In-order binary tree over node positions 0..n-1, the shape NCCL's double binary tree uses:
// node i with lowest set bit b has children i - b/2 and i + b/2 (the right one halved until it
// exists); node 0 is the root with the one child that covers everything else. Most edges join
// nearby positions, so most tree traffic stays under one leaf switch.
std::vector<int> btree_parents(int n) {
  std::vector<int> parent(n, -1);
  auto right_child = [n](int i, int half) {
    while (half > 0 && i + half >= n) half >>= 1;
    return half > 0 ? i + half : -1;
  };
  if (n > 1) {
    int top = 1;
    while (top * 2 <= n - 1) top *= 2;
    parent[top] = 0;
  }
  for (int i = 1; i < n; ++i) {
    const int half = (i & -i) >> 1;
    if (half == 0) continue;
    parent[i - half] = i;
    if (const int r = right_child(i, half); r >= 0) parent[r] = i;
  }
  return parent;
}

// Tree AllReduce: inside each node a chain from the node's head GPU, between nodes NCCL's
// double binary tree (the second tree is the first mirrored, so a node interior in one is a
// leaf in the other). Channel c uses tree (c / ppn) % 2 and head GPU c % ppn, so each NIC
// carries channels of both trees. Every edge carries the channel's data once up (reduce) and
// once down (broadcast).
void tree_flows(const FlowJob& job, std::vector<PlannedFlow>& out) {
  const CommShape& s = job.shape;
  const double bytes = job.tuning_bytes / job.channels;
  const int nodes = s.n_nodes;
  const std::vector<int> parent = btree_parents(nodes);
  int index = 0;
  std::vector<GpuId> heads(nodes);
  for (int c = 0; c < job.channels; ++c) {
    for (int pos = 0; pos < nodes; ++pos) {
      const auto& l = s.by_node[pos];
      const int m = static_cast<int>(l.size());
      heads[pos] = l[c % m];
      for (int k = 0; k + 1 < m; ++k) {
        const GpuId up = l[(c + k) % m], down = l[(c + k + 1) % m];
        add_flow(job, down, up, c, bytes, index++, out);  // reduce towards the head
        add_flow(job, up, down, c, bytes, index++, out);  // broadcast away from it
      }
    }
    const bool mirrored = (c / std::max(1, s.ppn)) % 2 == 1;
    for (int pos = 0; pos < nodes; ++pos) {
      if (parent[pos] < 0) continue;
      const int child_node = mirrored ? nodes - 1 - pos : pos;
      const int parent_node = mirrored ? nodes - 1 - parent[pos] : parent[pos];
      add_flow(job, heads[child_node], heads[parent_node], c, bytes, index++, out);
      add_flow(job, heads[parent_node], heads[child_node], c, bytes, index++, out);
    }
  }
}

// NVLS AllReduce in one node (NVLink domain): every GPU's buffer is read once by the switch's
// reduction (multimem.ld_reduce of each rank's 1/n share) and each rank's reduced share is
// written once and multicast to all (multimem.st). Per GPU: S + S/n leave it, S/n + S reach it.
void nvls_flows(const FlowJob& job, std::vector<PlannedFlow>& out) {
  const CommShape& s = job.shape;
  const double n = static_cast<double>(s.ranks.size());
  const double bytes = job.tuning_bytes / job.channels * (1.0 + 1.0 / n);
  for (int c = 0; c < job.channels; ++c) {
    for (GpuId g : s.by_node[0]) {
      out.push_back(
          {.src = g, .dst = kSwitch, .channel = c, .bytes = bytes, .path = {job.topo.gpu_tx(g)}});
      out.push_back(
          {.src = kSwitch, .dst = g, .channel = c, .bytes = bytes, .path = {job.topo.gpu_rx(g)}});
    }
  }
}

void p2p_flows(const FlowJob& job, std::vector<PlannedFlow>& out) {
  const auto& r = job.shape.ranks;
  if (job.op == CollOp::SendRecv) {
    add_flow(job, r[0], r[1], 0, job.peer_bytes, 0, out);
    return;
  }
  int index = 0;
  for (GpuId src : r)
    for (GpuId dst : r)
      if (src != dst) add_flow(job, src, dst, 0, job.peer_bytes, index++, out);
}

}  // namespace

CommShape make_shape(const Topology& topo, const std::vector<GpuId>& ranks) {
  CommShape s;
  s.ranks = ranks;
  std::map<int, std::vector<GpuId>> nodes;
  for (GpuId g : ranks) {
    if (g < 0 || g >= topo.num_gpus())
      throw std::invalid_argument(
          fmt::format("GPU {} is not in the {}-GPU topology", g, topo.num_gpus()));
    nodes[topo.domain_of(g)].push_back(g);
  }
  for (auto& [node, gpus] : nodes) {
    std::sort(gpus.begin(), gpus.end());
    if (std::adjacent_find(gpus.begin(), gpus.end()) != gpus.end())
      throw std::invalid_argument(fmt::format("GPU {} appears twice in the communicator",
                                              *std::adjacent_find(gpus.begin(), gpus.end())));
    s.ppn = std::max(s.ppn, static_cast<int>(gpus.size()));
    s.by_node.push_back(std::move(gpus));
  }
  s.n_nodes = static_cast<int>(s.by_node.size());
  return s;
}

void append_net_path(const Topology& topo, GpuId src, GpuId dst, uint64_t hash,
                     std::vector<LinkId>& out) {
  if (topo.domain_of(src) != topo.domain_of(dst) && topo.spec().leaf_kind == LeafKind::Rail &&
      topo.nic_of(src) != topo.nic_of(dst)) {
    const GpuId proxy = topo.gpu_on_rail(topo.host_of(src), topo.nic_of(dst));
    topo.append_route(src, proxy, hash, out);
    src = proxy;
  }
  topo.append_route(src, dst, hash, out);
}

void build_flows(const FlowJob& job, std::vector<PlannedFlow>& out) {
  out.clear();
  switch (job.algo) {
    case Algorithm::Ring:
      ring_flows(job, out);
      break;
    case Algorithm::Tree:
      tree_flows(job, out);
      break;
    case Algorithm::Nvls:
      nvls_flows(job, out);
      break;
    case Algorithm::P2p:
      p2p_flows(job, out);
      break;
    default:
      throw std::logic_error(fmt::format("no flow model for algorithm {}", to_string(job.algo)));
  }
}

double bottleneck_seconds(const Topology& topo, const std::vector<PlannedFlow>& flows) {
  std::vector<double> load(topo.links().size(), 0.0);
  for (const auto& f : flows)
    for (LinkId l : f.path) load[l] += f.bytes;
  double worst = 0;
  for (size_t l = 0; l < load.size(); ++l) {
    const LinkKind k = topo.link(l).kind;
    if (k == LinkKind::LeafToSpine || k == LinkKind::SpineToLeaf) continue;
    if (load[l] > 0) worst = std::max(worst, load[l] / topo.link(l).capacity.as_bytes_per_s());
  }
  return worst;
}

}  // namespace phantora::net::detail
