// Internal: how each NCCL algorithm maps onto flows (ring neighbours, tree up/down, NVLS to and
// from the switch, point-to-point pairs). Volumes are payload bytes for `channels` channels.
#pragma once

#include <vector>

#include "phantora/netmodel/collective.hpp"
#include "phantora/netmodel/nccl_model.hpp"
#include "phantora/netmodel/topology.hpp"

namespace phantora::net::detail {

// The communicator's layout on the cluster.
struct CommShape {
  std::vector<GpuId> ranks;  // as requested
  // Members per node, nodes ascending, GPUs ascending. A node is what NCCL calls one: an NVLink
  // domain (a host, or several sharing an NVLink fabric as in a GB200 NVL72 rack).
  std::vector<std::vector<GpuId>> by_node;
  int n_nodes = 0;
  int ppn = 0;  // most members on one node
};

CommShape make_shape(const Topology& topo, const std::vector<GpuId>& ranks);

struct FlowJob {
  const Topology& topo;
  const CommShape& shape;
  CollOp op;
  Algorithm algo;
  int channels;
  double tuning_bytes;  // NCCL's nBytes
  double peer_bytes;    // AllToAll: bytes to each peer; SendRecv: the message
  int root;             // rank index
  uint64_t seed;
};

void build_flows(const FlowJob& job, std::vector<PlannedFlow>& out);

// Time (s) for the flows to finish alone at efficiency 1, judged by the most loaded link a host
// owns (NVLink ports and NICs). Like NCCL's topology search, the tuner sees the nodes, not the
// switch fabric: spine oversubscription and ECMP collisions show up only in the simulation.
double bottleneck_seconds(const Topology& topo, const std::vector<PlannedFlow>& flows);

// Inter-node path with PXN: on a rail-optimised network a flow whose destination sits on
// another rail first crosses NVLink to the source host's GPU on that rail, as NCCL's PXN does.
void append_net_path(const Topology& topo, GpuId src, GpuId dst, uint64_t hash,
                     std::vector<LinkId>& out);

}  // namespace phantora::net::detail
