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

// Until kernels-db has its GEMM model: time at the dtype's dense tensor peak, which is a lower
// bound, marked as the default so the report shows it as unmeasured.
Cost KernelsCostProvider::gemm(const wire::Gemm& g) {
  const double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) *
                       static_cast<double>(g.k) * static_cast<double>(g.batch);
  double tflops = gpu_.perf.bf16_tflops;
  switch (g.compute_type) {
    case wire::DataType::kF32:
      tflops = gpu_.perf.fp32_tflops;
      break;
    case wire::DataType::kTF32:
      tflops = gpu_.perf.tf32_tflops;
      break;
    case wire::DataType::kFP8E4M3:
    case wire::DataType::kFP8E5M2:
      tflops = gpu_.perf.fp8_tflops;
      break;
    default:
      break;
  }
  const double seconds = flops / (tflops * 1e12);
  return Cost{std::max(SimTime::seconds(seconds), SimTime::us(2)), CostSource::kDefault};
}

}  // namespace phantora::sim
