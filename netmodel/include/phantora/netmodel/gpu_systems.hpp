// The system each GPU model ships in, and so the network `--gpu` gets when no --topology is
// given: one row per GPU of the GPU catalog (kernels-db/data/gpus.toml), keyed by its canonical
// key. tests/tools checks that every catalog GPU has a row, so none falls back silently.
#pragma once

#include <span>
#include <string_view>

namespace phantora::net {

struct GpuSystem {
  std::string_view gpu;       // GPU catalog key: "a100-80gb", "h100", ...
  std::string_view topology;  // topology preset, netmodel/data/<topology>.toml
  std::string_view source;    // the vendor document saying the GPU ships in that system
};

std::span<const GpuSystem> gpu_systems();

// The row of `gpu_key` (exact catalog key), or null.
const GpuSystem* system_of_gpu(std::string_view gpu_key);

}  // namespace phantora::net
