// Devices: count, selection, properties and attributes, peer access, limits, versions.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

#include "../device_props.hpp"
#include "context.hpp"

using namespace phantora;
using namespace phantora::shim;
using namespace phantora::intercept;

namespace {

// What the simulated driver and runtime report: the toolkit's major.minor the shim was built
// against (CUDART_VERSION), so version checks in libraries take their current code paths.
constexpr int kDriverVersion = CUDART_VERSION;

cudaError_t check_ordinal(int device) {
  return physical_device(device) < 0 ? set_error(cudaErrorInvalidDevice) : cudaSuccess;
}

// Limits the runtime lets programs read and set; values are those of a fresh Hopper context.
struct Limits {
  size_t stack_size = 1024;
  size_t printf_fifo = 1 << 20;
  size_t malloc_heap = 8 << 20;
  size_t sync_depth = 2;
  size_t pending_launches = 2048;
  size_t max_l2_fetch = 64;
  size_t persisting_l2 = 0;
};
Limits g_limits;

size_t* limit_slot(cudaLimit limit) {
  switch (limit) {
    case cudaLimitStackSize:
      return &g_limits.stack_size;
    case cudaLimitPrintfFifoSize:
      return &g_limits.printf_fifo;
    case cudaLimitMallocHeapSize:
      return &g_limits.malloc_heap;
    case cudaLimitDevRuntimeSyncDepth:
      return &g_limits.sync_depth;
    case cudaLimitDevRuntimePendingLaunchCount:
      return &g_limits.pending_launches;
    case cudaLimitMaxL2FetchGranularity:
      return &g_limits.max_l2_fetch;
    case cudaLimitPersistingL2CacheSize:
      return &g_limits.persisting_l2;
    default:
      return nullptr;
  }
}

unsigned g_device_flags = cudaDeviceScheduleAuto;

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  ApiCall call;
  if (count == nullptr) return set_error(cudaErrorInvalidValue);
  *count = visible_device_count();
  return *count > 0 ? cudaSuccess : set_error(cudaErrorNoDevice);
}

cudaError_t cudaGetDevice(int* device) {
  ApiCall call;
  if (device == nullptr) return set_error(cudaErrorInvalidValue);
  *device = current_device();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  ApiCall call;
  if (cudaError_t e = check_ordinal(device)) return e;
  set_current_device(device);
  return cudaSuccess;
}

cudaError_t cudaInitDevice(int device, unsigned int, unsigned int) {
  ApiCall call;
  return check_ordinal(device);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  g_device_flags = flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  if (flags == nullptr) return set_error(cudaErrorInvalidValue);
  *flags = g_device_flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  ApiCall call;
  if (prop == nullptr) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_ordinal(device)) return e;
  const wire::Welcome& w = Runtime::get().welcome();
  fill_device_prop_v13(prop, w.device, physical_device(device), Runtime::get().host(),
                       w.gpus_per_host);
  return cudaSuccess;
}

// CUDA 12 programs reach this name (their header maps cudaGetDeviceProperties to it) with the
// CUDA 12 struct layout.
cudaError_t cudaGetDeviceProperties_v2(void* prop, int device) {
  ApiCall call;
  if (prop == nullptr) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_ordinal(device)) return e;
  const wire::Welcome& w = Runtime::get().welcome();
  fill_device_prop_v12(prop, w.device, physical_device(device), Runtime::get().host(),
                       w.gpus_per_host);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  ApiCall call;
  if (value == nullptr) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_ordinal(device)) return e;
  const wire::Welcome& w = Runtime::get().welcome();
  return set_error(device_attribute(value, attr, w.device, physical_device(device),
                                    Runtime::get().host(), w.gpus_per_host));
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  ApiCall call;
  if (can == nullptr) return set_error(cudaErrorInvalidValue);
  if (check_ordinal(device) || check_ordinal(peer)) return set_error(cudaErrorInvalidDevice);
  // Every GPU of a host sits on the same NVLink/NVSwitch fabric.
  *can = device != peer ? 1 : 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  ApiCall call;
  if (flags != 0) return set_error(cudaErrorInvalidValue);
  if (check_ordinal(peer) || peer == current_device()) return set_error(cudaErrorInvalidDevice);
  return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer) {
  ApiCall call;
  return check_ordinal(peer);
}

cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attr, int src, int dst) {
  ApiCall call;
  if (value == nullptr) return set_error(cudaErrorInvalidValue);
  if (check_ordinal(src) || check_ordinal(dst) || src == dst)
    return set_error(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevP2PAttrPerformanceRank:
      *value = 0;
      break;
    case cudaDevP2PAttrAccessSupported:
      *value = 1;
      break;
    case cudaDevP2PAttrNativeAtomicSupported:
      *value = 1;
      break;
    case cudaDevP2PAttrCudaArrayAccessSupported:
      *value = 1;
      break;
    default:
      return set_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char* bus_id, int len, int device) {
  ApiCall call;
  if (bus_id == nullptr || len <= 0) return set_error(cudaErrorInvalidValue);
  if (cudaError_t e = check_ordinal(device)) return e;
  cudaDeviceProp p;
  const wire::Welcome& w = Runtime::get().welcome();
  fill_device_prop_v13(&p, w.device, physical_device(device), Runtime::get().host(),
                       w.gpus_per_host);
  std::snprintf(bus_id, static_cast<size_t>(len), "%08X:%02X:%02X.0", p.pciDomainID, p.pciBusID,
                p.pciDeviceID);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* bus_id) {
  ApiCall call;
  if (device == nullptr || bus_id == nullptr) return set_error(cudaErrorInvalidValue);
  for (int i = 0; i < visible_device_count(); ++i) {
    char mine[32];
    cudaDeviceGetPCIBusId(mine, sizeof(mine), i);
    // Accept the short form "bb:dd.f" as well as "dddddddd:bb:dd.f", case-insensitively.
    const size_t n = std::strlen(bus_id);
    const size_t m = std::strlen(mine);
    if (n <= m && strcasecmp(mine + (m - n), bus_id) == 0) {
      *device = i;
      return cudaSuccess;
    }
  }
  return set_error(cudaErrorInvalidDevice);
}

cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp*) {
  if (device == nullptr) return set_error(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  size_t* slot = limit_slot(limit);
  if (slot == nullptr) return set_error(cudaErrorUnsupportedLimit);
  *slot = value;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  size_t* slot = limit_slot(limit);
  if (value == nullptr) return set_error(cudaErrorInvalidValue);
  if (slot == nullptr) return set_error(cudaErrorUnsupportedLimit);
  *value = *slot;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
  if (config == nullptr) return set_error(cudaErrorInvalidValue);
  *config = cudaFuncCachePreferNone;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) {
  return cudaSuccess;
}

cudaError_t cudaDeviceReset(void) {
  // Waits for the device like cudaDeviceSynchronize; allocations stay accounted (a reset that
  // really dropped them would leave dangling addresses in the program).
  return cudaDeviceSynchronize();
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return set_error(cudaErrorInvalidValue);
  *version = kDriverVersion;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return set_error(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
  return take_last_error();
}
cudaError_t cudaPeekAtLastError(void) {
  return peek_last_error();
}

cudaError_t cudaProfilerStart(void) {
  return cudaSuccess;
}
cudaError_t cudaProfilerStop(void) {
  return cudaSuccess;
}

}  // extern "C"
