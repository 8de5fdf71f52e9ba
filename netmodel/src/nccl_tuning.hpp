// Internal: NCCL's tuning model (src/graph/tuning.cc, src/enqueue.cc) over a communicator shape.
#pragma once

#include <vector>

#include "nccl_flows.hpp"
#include "phantora/netmodel/collective.hpp"
#include "phantora/netmodel/topology.hpp"

namespace phantora::net::detail {

struct TuneContext {
  const Topology& topo;
  const CommShape& shape;
  CollOp op;
  double nbytes;  // NCCL's nBytes
  int channels;   // the communicator's channel count for this algorithm
};

// Algorithms and protocols NCCL would consider, after NCCL_ALGO / NCCL_PROTO. Throws
// std::invalid_argument for a token it does not know. No algorithm left: Ring, as in NCCL.
// No protocol left for an algorithm: empty (the planner falls back to Ring).
std::vector<Algorithm> candidate_algorithms(const TuneContext& ctx, const TuningOverrides& o);
std::vector<Protocol> candidate_protocols(const TuneContext& ctx, Algorithm a,
                                          const TuningOverrides& o);

// The communicator's channel count for an algorithm after NCCL_MIN/MAX_NCHANNELS.
int comm_channels(const Topology& topo, Algorithm a, const TuningOverrides& o);
// Fewer channels for small sizes (enqueue.cc): while bytes < channels x threads x threshold.
int channels_for_size(const TuneContext& ctx, Algorithm a, Protocol p);

// NCCL's latency (us) for one operation.
double latency_us(const TuneContext& ctx, Algorithm a, Protocol p);
// Refined / raw bus bandwidth: protocol factors, per-channel caps and tree correction. `raw`
// is the plan's uncontended bandwidth as NCCL's busBw (GB/s).
double efficiency(const TuneContext& ctx, Algorithm a, Protocol p, double raw_bus_gbs);
// NCCL's algorithm-to-bus bandwidth ratio: Ring n/nsteps, Tree 1/2, NVLS 1 (no caps apply).
double bus_ratio(const TuneContext& ctx, Algorithm a);

}  // namespace phantora::net::detail
