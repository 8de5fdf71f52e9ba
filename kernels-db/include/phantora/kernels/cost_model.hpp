// What a kernel launch or a copy costs when nothing better is known. The daemon asks here;
// later sources (the measured database, analytical models) slot in before the default.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_times.hpp"
#include "phantora/protocol.hpp"
#include "phantora/units.hpp"

namespace phantora::kernels {

// Where a duration came from; the report counts time by source.
enum class CostSource : uint8_t {
  kPinned = 0,    // the user's CSV of kernel times
  kMeasured = 1,  // the kernel database (measured on a real GPU)
  kModelled = 2,  // an analytical model (GEMM roofline, known kernel families)
  kDefault = 3,   // the last-resort default by grid size
};
std::string_view to_string(CostSource source);

struct KernelLaunchInfo {
  std::string_view mangled_name;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint64_t shared_mem = 0;  // dynamic shared memory per block, bytes
};

struct KernelCost {
  SimTime duration;
  CostSource source = CostSource::kDefault;
};

// Constants of the default model, from kernels-db/data/cost_model.toml (reasoning there).
struct CostParams {
  SimTime kernel_floor;
  SimTime kernel_per_wave;
  SimTime host_device_latency;
  SimTime device_local_latency;
  double pageable_factor = 0;
  Bandwidth host_to_host;

  static const CostParams& builtin();
  static CostParams from_file(const std::filesystem::path& path);
  static CostParams from_string(std::string_view toml_text, std::string_view source);
};

// Blocks of this launch that fit on one SM at once: limited by the SM's block slots, its
// threads and its shared memory (registers are unknown here, so ignored). At least 1.
uint64_t resident_blocks_per_sm(const KernelLaunchInfo& launch, const wire::DeviceSpec& device);
// ceil(blocks / (SMs × resident blocks per SM)), at least 1.
uint64_t waves(const KernelLaunchInfo& launch, const wire::DeviceSpec& device);
// floor + per-wave cost × waves: never zero, grows with the grid.
SimTime default_kernel_cost(const KernelLaunchInfo& launch, const GpuPreset& gpu,
                            const CostParams& params);

class CostModel {
 public:
  explicit CostModel(CostParams params = CostParams::builtin(), KernelTimes pinned = {});

  KernelCost cost_of_kernel(const KernelLaunchInfo& launch, const GpuPreset& gpu) const;
  // H2D/D2H over PCIe (pageable host memory at pageable_factor of the pinned rate); D2D reads
  // and writes HBM (2 × bytes / HBM); peer over NVLink; host-to-host at a memcpy rate. Each
  // plus a fixed latency.
  SimTime copy_cost(wire::CopyKind kind, Bytes bytes, bool pinned_host, const GpuPreset& gpu) const;
  // bytes / HBM bandwidth + the device-local latency.
  SimTime memset_cost(Bytes bytes, const GpuPreset& gpu) const;

  const CostParams& params() const { return params_; }

 private:
  CostParams params_;
  KernelTimes pinned_;
};

}  // namespace phantora::kernels
