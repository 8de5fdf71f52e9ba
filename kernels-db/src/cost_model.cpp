#include "phantora/kernels/cost_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace phantora::kernels {

std::string_view to_string(CostSource source) {
  switch (source) {
    case CostSource::kPinned:
      return "pinned";
    case CostSource::kMeasured:
      return "measured";
    case CostSource::kModelled:
      return "modelled";
    case CostSource::kDefault:
      return "default";
  }
  return "unknown";
}

uint64_t resident_blocks_per_sm(const KernelLaunchInfo& launch, const wire::DeviceSpec& device) {
  const uint64_t threads = std::max<uint64_t>(
      1, uint64_t{launch.block[0]} * uint64_t{launch.block[1]} * uint64_t{launch.block[2]});
  uint64_t fit = static_cast<uint64_t>(device.max_blocks_per_multiprocessor);
  fit = std::min(fit, static_cast<uint64_t>(device.max_threads_per_multiprocessor) / threads);
  if (launch.shared_mem > 0) {
    // Each resident block also holds the driver's reserved shared memory.
    const uint64_t per_block = launch.shared_mem + device.reserved_shared_mem_per_block;
    fit = std::min(fit, device.shared_mem_per_multiprocessor / per_block);
  }
  return std::max<uint64_t>(1, fit);
}

uint64_t waves(const KernelLaunchInfo& launch, const wire::DeviceSpec& device) {
  const uint64_t blocks =
      uint64_t{launch.grid[0]} * uint64_t{launch.grid[1]} * uint64_t{launch.grid[2]};
  const uint64_t per_wave =
      std::max<uint64_t>(1, static_cast<uint64_t>(device.multiprocessor_count) *
                                resident_blocks_per_sm(launch, device));
  return std::max<uint64_t>(1, (blocks + per_wave - 1) / per_wave);
}

SimTime default_kernel_cost(const KernelLaunchInfo& launch, const GpuPreset& gpu,
                            const CostParams& params) {
  return params.kernel_floor +
         params.kernel_per_wave * static_cast<int64_t>(waves(launch, gpu.device));
}

CostModel::CostModel(CostParams params, KernelTimes pinned)
    : params_(params), pinned_(std::move(pinned)) {}

KernelCost CostModel::cost_of_kernel(const KernelLaunchInfo& launch, const GpuPreset& gpu) const {
  if (const std::optional<SimTime> t = pinned_.lookup(launch.mangled_name)) {
    return {*t, CostSource::kPinned};
  }
  return {default_kernel_cost(launch, gpu, params_), CostSource::kDefault};
}

SimTime CostModel::copy_cost(wire::CopyKind kind, Bytes bytes, bool pinned_host,
                             const GpuPreset& gpu) const {
  switch (kind) {
    case wire::CopyKind::kHostToDevice:
    case wire::CopyKind::kDeviceToHost: {
      const double factor = pinned_host ? 1.0 : params_.pageable_factor;
      const Bandwidth bw = Bandwidth::bytes_per_s(gpu.perf.pcie.as_bytes_per_s() * factor);
      return params_.host_device_latency + bw.transfer_time(bytes);
    }
    case wire::CopyKind::kDeviceToDevice:
      // Every byte is read from and written back to HBM.
      return params_.device_local_latency + gpu.perf.hbm.transfer_time(bytes + bytes);
    case wire::CopyKind::kPeer: {
      // A part without NVLink (a preset file may say 0) copies between peers over PCIe.
      const Bandwidth bw = gpu.perf.nvlink_links > 0 && gpu.perf.nvlink.as_bytes_per_s() > 0
                               ? gpu.perf.nvlink
                               : gpu.perf.pcie;
      return params_.device_local_latency + bw.transfer_time(bytes);
    }
    case wire::CopyKind::kHostToHost:
      return params_.host_to_host.transfer_time(bytes);
  }
  throw std::invalid_argument("copy_cost: unknown copy kind");
}

SimTime CostModel::memset_cost(Bytes bytes, const GpuPreset& gpu) const {
  return params_.device_local_latency + gpu.perf.hbm.transfer_time(bytes);
}

}  // namespace phantora::kernels
