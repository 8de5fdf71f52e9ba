// GPU presets: the figures a simulated GPU model reports to programs (as wire::DeviceSpec) and
// the peak rates the cost models use. The table lives in kernels-db/data/gpus.toml, which is
// compiled into the library; GpuCatalog::from_file loads another one.
#pragma once

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

struct GpuPreset {
  std::string key;                   // canonical name, e.g. "h100"
  std::vector<std::string> aliases;  // lower case
  std::string description;
  wire::DeviceSpec device;  // exactly what the daemon sends to the shim
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

wire::DeviceSpec to_device_spec(const GpuPreset& preset);

// A human-readable listing of one preset (for `phantora db gpus` and logs).
std::string format_preset(const GpuPreset& preset);

}  // namespace phantora::kernels
