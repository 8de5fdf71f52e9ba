// What the simulation asks of a cost model. The daemon wires kernels-db behind it; tests can
// supply their own. Every answer is a positive duration and the source it came from.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "phantora/protocol.hpp"
#include "phantora/simcore/engine.hpp"

namespace phantora::sim {

struct Cost {
  Cost() = default;
  Cost(SimTime d, CostSource s, std::string sig = {}, double hbm = 0)
      : duration(d), source(s), signature(std::move(sig)), hbm_bytes(hbm) {}
  SimTime duration;
  CostSource source = CostSource::kDefault;
  std::string signature;  // library calls: the canonical signature the cost was looked up by
  // Kernels: bytes moved to and from HBM by the launch's description (0: unknown); what the
  // kernel asks of HBM beside a collective (gpu_sharing.hpp).
  double hbm_bytes = 0;
};

struct KernelLaunch {
  std::string_view mangled_name;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint64_t shared_mem = 0;
  // What the shim decoded from the launch (wire::Launch, wire::GraphNode); kNone if unknown.
  wire::KernelWork work{};
};

class CostProvider {
 public:
  virtual ~CostProvider() = default;
  virtual Cost kernel(const KernelLaunch& launch) = 0;
  virtual Cost copy(wire::CopyKind kind, uint64_t bytes, bool pinned) = 0;
  virtual Cost memset(uint64_t bytes) = 0;
  virtual Cost gemm(const wire::Gemm& gemm) = 0;
};

}  // namespace phantora::sim
