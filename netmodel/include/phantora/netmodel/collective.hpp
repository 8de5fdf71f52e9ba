// The vocabulary of collectives: operations, NCCL algorithms and protocols, a request as the
// daemon hands it over, and the nccl-tests bus-bandwidth convention.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "phantora/netmodel/topology.hpp"
#include "phantora/units.hpp"

namespace phantora::net {

enum class CollOp { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };
// NCCL's algorithm names. Ring, Tree and NVLS are modelled; the others parse (so that an
// NCCL_ALGO value naming them is understood) but are never available. P2P marks send/recv and
// all-to-all plans, which NCCL runs outside its collective tuner.
enum class Algorithm { Ring, Tree, Nvls, NvlsTree, CollNetDirect, CollNetChain, Pat, P2p };
enum class Protocol { LL, LL128, Simple };

std::string_view to_string(CollOp op);
std::string_view to_string(Algorithm a);
std::string_view to_string(Protocol p);

// NCCL_ALGO / NCCL_PROTO / NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS, as plain data in NCCL's
// syntax ("Ring,Tree", "^LL128"); empty or 0 means unset. The library never reads the
// environment; the caller passes what the job had.
struct TuningOverrides {
  std::string algo{};
  std::string proto{};
  int min_channels = 0;
  int max_channels = 0;
};

struct CollectiveRequest {
  CollOp op = CollOp::AllReduce;
  // Member GPUs in communicator-rank order. SendRecv: {sender, receiver}.
  std::vector<GpuId> ranks;
  // count x dtype size of the per-rank buffer, as the NCCL call states it:
  //   AllReduce, Broadcast, Reduce, SendRecv: count (the whole buffer);
  //   AllGather: sendcount (each rank's contribution; the output is n times larger);
  //   ReduceScatter: recvcount (each rank's share; the input is n times larger);
  //   AllToAll: the count sent to each peer (the send buffer is n times larger).
  Bytes bytes;
  int root = 0;  // rank index (not GPU id) for Broadcast and Reduce
  TuningOverrides tuning;
};

// nccl-tests' busbw = algbw x factor (src/*.cu, doc/PERFORMANCE.md):
// AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll (n-1)/n; the rest 1.
double bus_bandwidth_factor(CollOp op, int n);
// nccl-tests' S for algbw = S / t: the whole array for AllGather/ReduceScatter/AllToAll.
Bytes algbw_bytes(CollOp op, Bytes bytes, int n);
// The size NCCL's tuner sees (nBytes in enqueue.cc): AllGather/ReduceScatter count x n.
Bytes nccl_tuning_bytes(CollOp op, Bytes bytes, int n);

}  // namespace phantora::net
