// GPU -> the DGX system it ships in. Data, not branches: a GPU added to the catalog gets a row
// here (and a preset in data/) or the tools test that walks the catalog fails.
#include "phantora/netmodel/gpu_systems.hpp"

#include <algorithm>

namespace phantora::net {

namespace {

constexpr GpuSystem kGpuSystems[] = {
    {"a100-80gb", "dgx-a100",
     "NVIDIA DGX A100 User Guide, 'Hardware Overview': 8 x A100 SXM4 "
     "(https://docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html)"},
    {"a100-40gb", "dgx-a100",
     "NVIDIA DGX A100 User Guide, 'Hardware Overview': 8 x A100 SXM4, 40 GB each in the 320 GB "
     "system (https://docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html)"},
    {"a100-80gb-330w", "dgx-a100",
     "pytorch/torchtitan pull request #1351 (commit db52d57): 8 x NVIDIA PG509-210 on one Meta "
     "host; their links are taken as the DGX A100's (8 x A100 SXM4, NVSwitch, 200 Gb/s per GPU)"},
    {"h100", "dgx-h100",
     "NVIDIA DGX H100/H200 User Guide, 'Hardware Overview': 8 x H100 SXM5 "
     "(https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html)"},
    {"h100-500w", "dgx-h100",
     "NVIDIA DGX H100/H200 User Guide, 'Hardware Overview': 8 x H100 SXM5 "
     "(https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html); a power "
     "limit changes no link"},
    {"h100-96gb-500w", "dgx-h100",
     "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md: Grand Teton hosts of 8 x "
     "H100 fully connected with NVLink, 400 Gb/s RDMA per GPU (the DGX H100's links)"},
    {"h200", "dgx-h200",
     "NVIDIA DGX H100/H200 User Guide, 'Hardware Overview': 8 x H200 SXM "
     "(https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html)"},
    {"b200", "dgx-b200",
     "NVIDIA DGX B200 User Guide, 'Hardware Overview': 8 x B200 "
     "(https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html)"},
};

}  // namespace

std::span<const GpuSystem> gpu_systems() {
  return kGpuSystems;
}

const GpuSystem* system_of_gpu(std::string_view gpu_key) {
  const auto it = std::find_if(std::begin(kGpuSystems), std::end(kGpuSystems),
                               [gpu_key](const GpuSystem& s) { return s.gpu == gpu_key; });
  return it != std::end(kGpuSystems) ? it : nullptr;
}

}  // namespace phantora::net
