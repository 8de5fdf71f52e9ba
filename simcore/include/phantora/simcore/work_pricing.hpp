// What each GPU operation a client sends costs: the cost provider's answer for a kernel launch,
// a library GEMM, a copy or a memset, and for a CUDA graph the longest chain of its nodes, each
// priced exactly as the same work outside a graph. Knows nothing of streams, the engine or the
// run's statistics; rejects what cannot be priced (an undefined kernel, a negative size).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "phantora/protocol.hpp"
#include "phantora/simcore/cost_provider.hpp"

namespace phantora::sim {

class WorkPricing {
 public:
  // A client's kernels by the ids its DefineKernel records gave them.
  using KernelNames = std::map<uint32_t, std::string>;

  explicit WorkPricing(CostProvider& costs) : costs_(costs) {}

  Cost launch(const KernelNames& kernels, const wire::Launch& launch);
  Cost gemm(const wire::Gemm& gemm);
  Cost copy(const wire::Copy& copy);
  Cost memset(const wire::Memset& memset);
  // Nodes are topologically ordered (each depends on earlier ones only).
  SimTime graph(const KernelNames& kernels, const std::vector<wire::GraphNode>& nodes);

 private:
  Cost kernel(const KernelNames& kernels, uint32_t kernel, const uint32_t (&grid)[3],
              const uint32_t (&block)[3], uint64_t shared_mem, const wire::KernelWork& work);
  SimTime node(const KernelNames& kernels, const wire::GraphNode& n);

  CostProvider& costs_;
};

}  // namespace phantora::sim
