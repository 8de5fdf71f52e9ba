#include <ctime>

#include <fmt/format.h>

#include "phantora/profiler/measure.hpp"

namespace phantora::profiler {
namespace {

std::string version_text(int v) {  // CUDA's 1000 * major + 10 * minor
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

kernels::Provenance read_provenance(const CudaApi& api, int device) {
  if (api.cu_init(0) != CUDA_SUCCESS) throw std::runtime_error("cuInit failed: no usable GPU");
  CUdevice dev = 0;
  if (api.cu_device_get(&dev, device) != CUDA_SUCCESS) {
    throw std::runtime_error(fmt::format("cuDeviceGet({}) failed: no such GPU", device));
  }
  char name[256] = {};
  api.cu_device_get_name(name, sizeof(name) - 1, dev);
  int driver = 0, runtime = 0, major = 0, minor = 0, patch = 0, sm_khz = 0, mem_khz = 0;
  api.cu_driver_get_version(&driver);
  api.runtime_get_version(&runtime);
  api.blas_get_property(MAJOR_VERSION, &major);
  api.blas_get_property(MINOR_VERSION, &minor);
  api.blas_get_property(PATCH_LEVEL, &patch);
  // The maximum clocks the device reports; the clock during a measurement may be lower.
  api.cu_device_get_attribute(&sm_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  api.cu_device_get_attribute(&mem_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
  kernels::Provenance p;
  p.device_name = name;
  p.driver_version = fmt::format("cuda-driver-api {}", version_text(driver));
  p.library_versions =
      fmt::format("cudart={};cublas={}.{}.{};sm_clock_mhz={};mem_clock_mhz={}",
                  version_text(runtime), major, minor, patch, sm_khz / 1000, mem_khz / 1000);
  p.recorded_at = utc_now();
  return p;
}

}  // namespace phantora::profiler
