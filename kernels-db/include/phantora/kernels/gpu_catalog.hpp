// GPU presets: the figures a simulated GPU model reports to programs (DeviceLimits) and
// the peak rates the cost models use. The table lives in kernels-db/data/gpus.toml, which is
// compiled into the library; GpuCatalog::from_file loads another one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "phantora/protocol.hpp"
#include "phantora/units.hpp"

namespace phantora::kernels {

// Dense peak rates (no sparsity) and link bandwidths, each per direction.
struct GpuPerf {
  double bf16_tflops = 0;
  double fp16_tflops = 0;
  double fp8_tflops = 0;  // 0 where the part has no FP8 tensor cores
  double tf32_tflops = 0;
  double fp32_tflops = 0;
  Bandwidth hbm;
  Bandwidth pcie;    // effective host<->device rate with page-locked host memory
  Bandwidth nvlink;  // all links of one GPU together
  int nvlink_links = 0;
  // SM clocks (MHz): the one the datasheet's TFLOPS figures above are computed at, and the one
  // the part holds under a sustained training load at its power limit. Compute-bound kernel
  // costs scale with the sustained clock (analytical_model.hpp); memory-bound ones do not.
  double tensor_peak_clock_mhz = 0;
  double sustained_clock_mhz = 0;
};

// What a simulated GPU model reports to programs (cudaGetDeviceProperties, device attributes):
// the [gpu.<key>.device] table of gpus.toml, field for field. The daemon hands it to the shim
// as wire::DeviceSpec (to_device_spec); the cost models read it here.
struct DeviceLimits {
  std::string name;               // e.g. "NVIDIA H100 80GB HBM3", as the real part reports it
  uint64_t total_global_mem = 0;  // bytes
  int32_t cc_major = 0, cc_minor = 0;
  int32_t multiprocessor_count = 0;
  int32_t max_threads_per_block = 0;
  int32_t max_threads_per_multiprocessor = 0;
  int32_t max_blocks_per_multiprocessor = 0;
  int32_t regs_per_block = 0, regs_per_multiprocessor = 0;
  uint64_t shared_mem_per_block = 0;
  uint64_t shared_mem_per_block_optin = 0;
  uint64_t shared_mem_per_multiprocessor = 0;
  uint64_t reserved_shared_mem_per_block = 0;
  int32_t l2_cache_bytes = 0;
  int32_t persisting_l2_cache_max_bytes = 0;
  int32_t memory_bus_width_bits = 0;
  int32_t memory_clock_khz = 0;
  int32_t clock_khz = 0;
  int32_t async_engine_count = 0;
  int32_t pci_device_id = 0;  // PCI device id of the part, e.g. 0x2330 for H100 SXM5
  int32_t pci_subsystem_id = 0;
  int32_t cooperative_launch = 1;
  int32_t cluster_launch = 0;  // thread block clusters (sm_90+)
};

struct GpuPreset {
  std::string key;                   // canonical name, e.g. "h100"
  std::vector<std::string> aliases;  // lower case
  std::string description;
  DeviceLimits device;  // what the daemon sends to the shim (to_device_spec)
  GpuPerf perf;

  std::string_view device_name() const { return device.name; }
};

class GpuCatalog {
 public:
  // The table compiled into the binary (parsed once, on first use).
  static const GpuCatalog& builtin();
  static GpuCatalog from_file(const std::filesystem::path& path);
  // `source` names the text in error messages.
  static GpuCatalog from_string(std::string_view toml_text, std::string_view source);

  // By key or alias, case-insensitively. Throws DataError listing the known names.
  const GpuPreset& find(std::string_view name) const;
  const GpuPreset* try_find(std::string_view name) const;

  std::vector<std::string> names() const;  // canonical keys, in file order
  const std::vector<GpuPreset>& presets() const { return presets_; }

 private:
  std::vector<GpuPreset> presets_;
};

// The preset's limits as the wire carries them to the shim.
wire::DeviceSpec to_device_spec(const GpuPreset& preset);

// A human-readable listing of one preset (for `phantora db gpus` and logs).
std::string format_preset(const GpuPreset& preset);

}  // namespace phantora::kernels
