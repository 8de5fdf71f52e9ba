#include "phantora/simcore/kernels_cost_provider.hpp"

#include <optional>

namespace phantora::sim {

Cost KernelsCostProvider::tally(Cost cost, std::string_view family) {
  const std::string_view from_signature = kernels::signature_family(cost.signature);
  Priced& p = priced_[{std::string(from_signature.empty() ? family : from_signature), cost.source}];
  ++p.count;
  p.time += cost.duration;
  return cost;
}

Cost KernelsCostProvider::kernel(const KernelLaunch& launch) {
  return tally(price_kernel(launch), "kernel");
}

Cost KernelsCostProvider::price_kernel(const KernelLaunch& launch) {
  std::string key(launch.mangled_name);
  key += '|';
  for (uint32_t v : launch.grid) key += std::to_string(v) + ',';
  for (uint32_t v : launch.block) key += std::to_string(v) + ',';
  key += std::to_string(launch.shared_mem);
  const std::optional<kernels::AttentionDesc> attention = kernels::attention_desc(launch.work);
  const std::optional<kernels::ConvDesc> conv = kernels::conv_desc(launch.work);
  const std::optional<kernels::MemoryOpDesc> work =
      kernels::memory_op_desc(launch.work.kind, launch.work.bytes_read, launch.work.bytes_written);
  if (attention) {
    key += '|' + kernels::signature(*attention);
  } else if (conv) {
    key += '|' + kernels::signature(*conv);
  } else if (work) {
    key += '|' + std::to_string(work->bytes_read) + ',' + std::to_string(work->bytes_written);
  }
  auto it = kernel_cache_.find(key);
  if (it != kernel_cache_.end()) {
    const Cost& c = it->second;
    model_.note_repeat(c.signature, c.duration, c.source, gpu_);
    return c;
  }
  const kernels::KernelCost c = model_.cost_of_kernel(
      kernels::KernelLaunchInfo{launch.mangled_name, launch.grid, launch.block, launch.shared_mem},
      gpu_, work ? &*work : nullptr, attention ? &*attention : nullptr, conv ? &*conv : nullptr);
  return kernel_cache_.emplace(std::move(key), Cost{c.duration, c.source, c.signature, c.hbm_bytes})
      .first->second;
}

// Copies and memsets: a measured row of the kernel database first (`phantora db profile`
// measures them), then the bandwidth figures of the GPU preset.
Cost KernelsCostProvider::copy(wire::CopyKind kind, uint64_t bytes, bool pinned) {
  const kernels::KernelCost c = model_.cost_of_copy(kernels::CopyDesc{kind, bytes, pinned}, gpu_);
  return tally(Cost{c.duration, c.source, c.signature}, "copy");
}

Cost KernelsCostProvider::memset(uint64_t bytes) {
  const kernels::KernelCost c = model_.cost_of_memset(Bytes(bytes), gpu_);
  return tally(Cost{c.duration, c.source, c.signature}, "memset");
}

namespace {

// cuBLASLt epilogue bits (cublasLtEpilogue_t): RELU 2, BIAS 4, GELU 32, with AUX/GRAD variants.
std::string epilogue_name(uint8_t e) {
  if (e == 0 || e == 1) return "none";
  std::string name;
  if (e & 32) name = "gelu";
  if (e & 2) name = "relu";
  if (e & 4) name = name.empty() ? "bias" : name + "_bias";
  return name.empty() ? "none" : name;
}

}  // namespace

Cost KernelsCostProvider::gemm(const wire::Gemm& g) {
  kernels::GemmDesc d;
  d.m = static_cast<uint64_t>(g.m);
  d.n = static_cast<uint64_t>(g.n);
  d.k = static_cast<uint64_t>(g.k);
  d.batch = static_cast<uint64_t>(g.batch);
  d.a = kernels::dtype_of(g.a_type);
  d.b = kernels::dtype_of(g.b_type);
  d.c = kernels::dtype_of(g.c_type);
  d.compute = kernels::dtype_of(g.compute_type);
  d.trans_a = g.trans_a != 0;
  d.trans_b = g.trans_b != 0;
  d.accumulate = g.accumulate != 0;
  d.epilogue = epilogue_name(g.epilogue);
  const kernels::KernelCost c = model_.cost_of_gemm(d, gpu_);
  return tally(Cost{c.duration, c.source, c.signature, c.hbm_bytes}, "gemm");
}

}  // namespace phantora::sim
