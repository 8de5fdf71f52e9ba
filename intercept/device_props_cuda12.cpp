// cudaGetDeviceProperties_v2 for programs built with CUDA 12: the same device as
// fill_device_prop_v13, written in CUDA 12's struct layout.
#include "device_props_cuda12.hpp"
#include "device_props_common.hpp"

namespace phantora::intercept {

void fill_device_prop_v12(void* out, const wire::DeviceSpec& spec, int ordinal, int host,
                          int gpus_per_host) {
  auto& p = *static_cast<Cuda12DeviceProp*>(out);
  detail::fill_common(p, spec, gpu_identity(ordinal, host, gpus_per_host));
  // Fields CUDA 13 removed.
  p.clockRate = spec.clock_khz;
  p.memoryClockRate = spec.memory_clock_khz;
  p.deviceOverlap = 1;
  p.kernelExecTimeoutEnabled = 0;
  p.computeMode = 0;  // cudaComputeModeDefault
  p.maxTexture1DLinear = detail::CommonLimits::kTex1DLinear;
  p.singleToDoublePrecisionPerfRatio = detail::CommonLimits::kSingleToDoubleRatio;
  p.cooperativeMultiDeviceLaunch = spec.cooperative_launch;
}

}  // namespace phantora::intercept
