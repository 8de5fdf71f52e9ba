// cudaGetErrorName / cudaGetErrorString (the loud failure of every entry point the shim does
// not implement is unimplemented.cpp).
#include <cuda_runtime_api.h>

#include "error_names.hpp"
#include "runtime.hpp"

namespace {

// Descriptions as the CUDA runtime documents them (driver_types.h comments) for the errors
// programs most often print; others fall back to their name.
const char* description(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInitializationError:
      return "initialization error";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidDeviceFunction:
      return "invalid device function";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidSymbol:
      return "invalid device symbol";
    case cudaErrorInvalidMemcpyDirection:
      return "invalid copy direction for memcpy";
    case cudaErrorNotSupported:
      return "operation not supported";
    case cudaErrorStreamCaptureUnsupported:
      return "operation not permitted when stream is capturing";
    default:
      return nullptr;
  }
}

}  // namespace

extern "C" {

const char* cudaGetErrorName(cudaError_t e) {
  const char* name = phantora::shim::error_name(static_cast<int>(e));
  return name != nullptr ? name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
  const char* d = description(e);
  if (d != nullptr) return d;
  const char* name = phantora::shim::error_name(static_cast<int>(e));
  return name != nullptr ? name : "unrecognized error code";
}

// The rank's simulated host clock in nanoseconds, for the start-up hook that makes Python's
// time functions follow simulated time (tools/python/sitecustomize.py).
int64_t phantora_virtual_time_ns(void) {
  return phantora::shim::Runtime::get().virtual_time_ns();
}

}  // extern "C"
