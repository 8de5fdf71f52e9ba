// The daemon's CostProvider backed by kernels-db: pinned kernel times, then the models.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <utility>

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

  // What this provider priced, by signature family (gemm, attn, mem, copy, kernel, or memset)
  // and source: how many operations and the time charged for them. Every call counts: each
  // launch, each graph node at each graph launch (a graph's own span is its longest chain, so
  // the sums may exceed the GPU's busy time).
  struct Priced {
    uint64_t count = 0;
    SimTime time;
  };
  using PricedByFamily = std::map<std::pair<std::string, CostSource>, Priced>;
  const PricedByFamily& priced() const { return priced_; }

 private:
  Cost price_kernel(const KernelLaunch& launch);
  // Adds the cost to priced_ under its signature's family, or `family` when it has none.
  Cost tally(Cost cost, std::string_view family);

  kernels::CostModel model_;
  PricedByFamily priced_;
  const kernels::GpuPreset& gpu_;
  // A training step launches the same kernels with the same shapes over and over; name
  // matching (demangling) is done once per distinct launch.
  std::unordered_map<std::string, Cost> kernel_cache_;
};

}  // namespace phantora::sim
