// The daemon's CostProvider backed by kernels-db: pinned kernel times, then the models.
#pragma once

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

 private:
  kernels::CostModel model_;
  const kernels::GpuPreset& gpu_;
};

}  // namespace phantora::sim
