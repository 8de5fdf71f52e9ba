#include "phantora/kernels/gpu_probe.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

namespace phantora::kernels {
namespace {

// The few driver API entry points we need, declared here so that no CUDA header or library is
// needed to build. CUresult and CUdevice are ints in the driver API.
using CuInit = int (*)(unsigned int);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDriverGetVersion = int (*)(int*);

}  // namespace

GpuProbe probe_gpus() {
  GpuProbe probe;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    probe.reason = fmt::format("no NVIDIA driver: cannot load libcuda.so.1 ({})",
                               err != nullptr ? err : "not found");
    return probe;
  }
  auto init = reinterpret_cast<CuInit>(dlsym(lib, "cuInit"));
  auto count_fn = reinterpret_cast<CuDeviceGetCount>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<CuDeviceGet>(dlsym(lib, "cuDeviceGet"));
  auto name_fn = reinterpret_cast<CuDeviceGetName>(dlsym(lib, "cuDeviceGetName"));
  auto version_fn = reinterpret_cast<CuDriverGetVersion>(dlsym(lib, "cuDriverGetVersion"));
  if (init == nullptr || count_fn == nullptr || get == nullptr || name_fn == nullptr ||
      version_fn == nullptr) {
    probe.reason = "libcuda.so.1 lacks the driver API entry points (cuInit, cuDeviceGetCount)";
    dlclose(lib);
    return probe;
  }
  if (const int rc = init(0); rc != 0) {
    probe.reason = fmt::format("cuInit failed with CUresult {} (no usable GPU)", rc);
    dlclose(lib);
    return probe;
  }
  int count = 0;
  if (count_fn(&count) != 0 || count <= 0) {
    probe.reason = "the NVIDIA driver reports no GPU";
    dlclose(lib);
    return probe;
  }
  version_fn(&probe.driver_version);
  for (int i = 0; i < count; ++i) {
    int dev = 0;
    char name[256] = {};
    if (get(&dev, i) == 0 && name_fn(name, sizeof(name) - 1, dev) == 0) {
      probe.devices.emplace_back(name);
    } else {
      probe.devices.emplace_back("unknown");
    }
  }
  probe.available = true;
  // The library stays loaded: a measuring caller needs it next.
  return probe;
}

}  // namespace phantora::kernels
