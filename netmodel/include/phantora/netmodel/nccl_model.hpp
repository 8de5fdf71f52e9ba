// The NCCL algorithm model: which algorithm, protocol and channel count NCCL would pick for a
// collective, and the flows it becomes on the topology's links.
//
// Selection follows NCCL's tuner (src/graph/tuning.cc): time = latency + bytes / bandwidth per
// (algorithm, protocol), minimum wins. Where NCCL takes its bandwidth from its topology search,
// we take it from the planned flows themselves: the most loaded host link (NVLink port or NIC)
// of the plan gives the raw bandwidth, and NCCL's refinements (protocol factors, per-channel
// caps, the tree correction) scale it. A collective simulated alone on a non-blocking fabric
// therefore ends exactly at the model's time; fabric effects (oversubscription, ECMP
// collisions) and other traffic only show up in the simulation.
#pragma once

#include <string>
#include <vector>

#include "phantora/netmodel/collective.hpp"
#include "phantora/netmodel/topology.hpp"
#include "phantora/units.hpp"

namespace phantora::net {

inline constexpr GpuId kSwitch = -1;  // flow endpoint: the NVSwitch (NVLS multicast/reduce)

struct PlannedFlow {
  GpuId src = kSwitch;
  GpuId dst = kSwitch;
  int channel = 0;
  double bytes = 0;  // payload; the flow moves bytes / plan.efficiency on the wire
  std::vector<LinkId> path;
};

// One row of the tuner's table.
struct AlgoCost {
  Algorithm algorithm;
  Protocol protocol;
  double latency_us;
  double bandwidth_us;  // bytes / refined bandwidth
  double total_us() const { return latency_us + bandwidth_us; }
};

struct CollectivePlan {
  CollOp op = CollOp::AllReduce;
  int n_ranks = 0;
  int n_nodes = 0;
  Bytes request_bytes;  // as in the request
  Bytes tuning_bytes;   // what NCCL's tuner sees
  Bytes algbw_bytes;    // nccl-tests' S
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  int channels = 0;
  // Fixed term added after the last flow finishes: NCCL's latency model.
  SimTime latency;
  // Payload bytes per wire byte (protocol overheads, per-channel caps, tree correction).
  double efficiency = 1.0;
  // latency + the flows' time on the hosts' links alone: NCCL's view of the duration, and what
  // the simulator gives when nothing else runs and the fabric does not get in the way.
  SimTime predicted;
  std::vector<PlannedFlow> flows;
  std::vector<AlgoCost> candidates;  // every (algorithm, protocol) the tuner weighed

  double wire_bytes(const PlannedFlow& f) const { return f.bytes / efficiency; }
  std::string describe(const Topology& topo, size_t max_flows = 16) const;
};

// Plans `req` on `topo`. flow_seed varies the ECMP hashes (the simulator passes the transfer
// id). Throws std::invalid_argument for a malformed request (unknown GPU, repeated member, bad
// root, unknown NCCL_ALGO/NCCL_PROTO token).
CollectivePlan plan_collective(const Topology& topo, const CollectiveRequest& req,
                               uint64_t flow_seed = 0);

}  // namespace phantora::net
