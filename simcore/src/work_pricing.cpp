#include "phantora/simcore/work_pricing.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "phantora/simcore/protocol_error.hpp"

namespace phantora::sim {

Cost WorkPricing::kernel(const KernelNames& kernels, uint32_t kernel, const uint32_t (&grid)[3],
                         const uint32_t (&block)[3], uint64_t shared_mem,
                         const wire::KernelWork& work) {
  auto name = kernels.find(kernel);
  if (name == kernels.end())
    throw ProtocolError(fmt::format("launch of undefined kernel {}", kernel));
  return costs_.kernel(KernelLaunch{
      name->second, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, shared_mem, work});
}

Cost WorkPricing::launch(const KernelNames& kernels, const wire::Launch& l) {
  return kernel(kernels, l.kernel, l.grid, l.block, l.shared_mem, l.work);
}

Cost WorkPricing::gemm(const wire::Gemm& g) {
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 1) throw ProtocolError("gemm with negative size");
  return costs_.gemm(g);
}

Cost WorkPricing::copy(const wire::Copy& c) {
  return costs_.copy(c.kind, c.bytes, c.pinned != 0);
}

Cost WorkPricing::memset(const wire::Memset& m) {
  return costs_.memset(m.bytes);
}

SimTime WorkPricing::node(const KernelNames& kernels, const wire::GraphNode& n) {
  switch (n.kind) {
    case wire::GraphNodeKind::kKernel:
      return kernel(kernels, n.kernel, n.grid, n.block, n.shared_mem, n.work).duration;
    case wire::GraphNodeKind::kGemm:
      return gemm(n.gemm).duration;
    case wire::GraphNodeKind::kCopy:
      // Captured copies are from pinned memory: a pageable copy cannot be captured.
      return costs_.copy(n.copy_kind, n.bytes, true).duration;
    case wire::GraphNodeKind::kMemset:
      return costs_.memset(n.bytes).duration;
    case wire::GraphNodeKind::kEmpty:
      return SimTime{};
  }
  throw ProtocolError(fmt::format("graph node of unknown kind {}", static_cast<int>(n.kind)));
}

SimTime WorkPricing::graph(const KernelNames& kernels, const std::vector<wire::GraphNode>& nodes) {
  // One pass gives each node's earliest finish; the graph takes as long as its longest
  // dependency chain.
  std::vector<SimTime> finish(nodes.size());
  SimTime longest;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const wire::GraphNode& n = nodes[i];
    SimTime ready;
    for (int d = 0; d < n.dep_count; ++d) ready = std::max(ready, finish[n.deps[d]]);
    finish[i] = ready + node(kernels, n);
    longest = std::max(longest, finish[i]);
  }
  return longest;
}

}  // namespace phantora::sim
