#include "phantora/netmodel/hbm_traffic.hpp"

#include <unordered_map>

namespace phantora::net {

double reduced_share(CollOp op, Algorithm algorithm) {
  if (algorithm == Algorithm::Nvls || algorithm == Algorithm::NvlsTree) return 0;
  switch (op) {
    case CollOp::AllReduce:
      return 0.5;
    case CollOp::ReduceScatter:
    case CollOp::Reduce:
      return 1;
    case CollOp::AllGather:
    case CollOp::Broadcast:
    case CollOp::AllToAll:
    case CollOp::SendRecv:
      return 0;
  }
  return 0;
}

std::vector<double> hbm_traffic_bytes(const CollectivePlan& plan, std::span<const GpuId> gpus) {
  std::unordered_map<GpuId, size_t> index;
  for (size_t i = 0; i < gpus.size(); ++i) index.emplace(gpus[i], i);
  std::vector<double> sent(gpus.size()), received(gpus.size());
  for (const PlannedFlow& f : plan.flows) {
    if (auto it = index.find(f.src); it != index.end()) sent[it->second] += f.bytes;
    if (auto it = index.find(f.dst); it != index.end()) received[it->second] += f.bytes;
  }
  const double read_back = 1 + reduced_share(plan.op, plan.algorithm);
  std::vector<double> bytes(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    // A GPU named twice counts once (its first entry); the others are left 0.
    bytes[i] = index.at(gpus[i]) == i ? sent[i] + received[i] * read_back : 0;
  }
  return bytes;
}

double hbm_traffic_bytes(const CollectivePlan& plan, GpuId gpu) {
  return hbm_traffic_bytes(plan, std::span<const GpuId>(&gpu, 1)).front();
}

}  // namespace phantora::net
