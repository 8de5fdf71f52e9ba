// Whether this machine has a real NVIDIA GPU, found without any link-time dependency on NVIDIA
// libraries: dlopen("libcuda.so.1"), cuInit, cuDeviceGetCount. Used by `phantora db profile`.
#pragma once

#include <string>
#include <vector>

namespace phantora::kernels {

struct GpuProbe {
  bool available = false;
  std::string reason;                // why not, when !available
  int driver_version = 0;            // cuDriverGetVersion, e.g. 12040
  std::vector<std::string> devices;  // cuDeviceGetName per ordinal
};

GpuProbe probe_gpus();

}  // namespace phantora::kernels
