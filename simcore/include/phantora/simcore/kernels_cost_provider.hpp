// The daemon's CostProvider backed by kernels-db: pinned kernel times, then the models.
#pragma once

#include <string>
#include <unordered_map>

#include "phantora/kernels/cost_model.hpp"
#include "phantora/simcore/cost_provider.hpp"

namespace phantora::sim {

class KernelsCostProvider : public CostProvider {
 public:
  KernelsCostProvider(kernels::CostModel model, const kernels::GpuPreset& gpu)
      : model_(std::move(model)), gpu_(gpu) {}

  Cost kernel(const KernelLaunch& launch) override;
  Cost copy(wire::CopyKind kind, uint64_t bytes, bool pinned) override;
  Cost memset(uint64_t bytes) override;
  Cost gemm(const wire::Gemm& gemm) override;

  const kernels::CostModel& model() const { return model_; }

 private:
  kernels::CostModel model_;
  const kernels::GpuPreset& gpu_;
  // A training step launches the same kernels with the same shapes over and over; name
  // matching (demangling) is done once per distinct launch.
  std::unordered_map<std::string, Cost> kernel_cache_;
};

}  // namespace phantora::sim
