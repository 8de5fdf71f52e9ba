#include "phantora/simcore/kernels_cost_provider.hpp"

namespace phantora::sim {
namespace {

CostSource from_kernels(kernels::CostSource s) {
  switch (s) {
    case kernels::CostSource::kPinned:
      return CostSource::kPinned;
    case kernels::CostSource::kMeasured:
      return CostSource::kMeasured;
    case kernels::CostSource::kModelled:
      return CostSource::kModelled;
    case kernels::CostSource::kDefault:
      return CostSource::kDefault;
  }
  return CostSource::kDefault;
}

}  // namespace

Cost KernelsCostProvider::kernel(const KernelLaunch& launch) {
  const kernels::KernelCost c = model_.cost_of_kernel(
      kernels::KernelLaunchInfo{launch.mangled_name, launch.grid, launch.block, launch.shared_mem},
      gpu_);
  return Cost{c.duration, from_kernels(c.source)};
}

// Copies and memsets are costed from bandwidth figures of the GPU preset: modelled.
Cost KernelsCostProvider::copy(wire::CopyKind kind, uint64_t bytes, bool pinned) {
  return Cost{model_.copy_cost(kind, Bytes(bytes), pinned, gpu_), CostSource::kModelled};
}

Cost KernelsCostProvider::memset(uint64_t bytes) {
  return Cost{model_.memset_cost(Bytes(bytes), gpu_), CostSource::kModelled};
}

}  // namespace phantora::sim
