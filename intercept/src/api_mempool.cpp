// The stream-ordered allocator (cudaMallocAsync / cudaFreeAsync) and memory pools. Allocation
// happens when the call is made, against the device's capacity like cudaMalloc: the simulated
// program sees the memory it would hold. Pools keep the attributes programs set and read, and
// count what their allocations use; the reserve a real pool keeps cached beyond that is not
// modelled (it never makes an allocation fail that would succeed, since nothing is cached).
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

#include "context.hpp"
#include "memory.hpp"
#include "pt_variants.hpp"

using namespace phantora;
using namespace phantora::shim;

struct CUmemPoolHandle_st {
  int ordinal = 0;
  uint64_t release_threshold = 0;
  int reuse_follow_event_dependencies = 1;
  int reuse_allow_opportunistic = 1;
  int reuse_allow_internal_dependencies = 1;
  uint64_t used = 0;
  uint64_t used_high = 0;
};

namespace {

struct Pools {
  std::mutex mu;
  std::map<int, CUmemPoolHandle_st*> defaults;                      // by device ordinal
  std::map<int, CUmemPoolHandle_st*> current;                       // cudaDeviceSetMemPool
  std::map<void*, std::pair<CUmemPoolHandle_st*, uint64_t>> owner;  // allocation -> pool, bytes
};

Pools& pools() {
  static Pools* p = new Pools();
  return *p;
}

CUmemPoolHandle_st* default_pool_locked(Pools& p, int ordinal) {
  auto& slot = p.defaults[ordinal];
  if (slot == nullptr) slot = new CUmemPoolHandle_st{ordinal};
  return slot;
}

cudaError_t pool_malloc(void** ptr, size_t size, CUmemPoolHandle_st* pool) {
  if (ptr == nullptr) return set_error(cudaErrorInvalidValue);
  const int saved = current_device();
  set_current_device(pool->ordinal);
  const cudaError_t e = device_malloc(ptr, size);
  set_current_device(saved);
  if (e != cudaSuccess) return e;
  Pools& p = pools();
  std::lock_guard lock(p.mu);
  p.owner[*ptr] = {pool, size};
  pool->used += size;
  pool->used_high = std::max(pool->used_high, pool->used);
  return cudaSuccess;
}

cudaError_t cudaMallocAsync_impl(bool, void** ptr, size_t size, cudaStream_t) {
  ApiCall call;
  CUmemPoolHandle_st* pool = nullptr;
  {
    Pools& p = pools();
    std::lock_guard lock(p.mu);
    auto it = p.current.find(current_device());
    pool = it != p.current.end() ? it->second : default_pool_locked(p, current_device());
  }
  return pool_malloc(ptr, size, pool);
}

cudaError_t cudaMallocFromPoolAsync_impl(bool, void** ptr, size_t size, cudaMemPool_t pool,
                                         cudaStream_t) {
  ApiCall call;
  if (pool == nullptr) return set_error(cudaErrorInvalidValue);
  return pool_malloc(ptr, size, pool);
}

cudaError_t cudaFreeAsync_impl(bool, void* ptr, cudaStream_t) {
  ApiCall call;
  if (ptr == nullptr) return cudaSuccess;
  {
    Pools& p = pools();
    std::lock_guard lock(p.mu);
    if (auto it = p.owner.find(ptr); it != p.owner.end()) {
      it->second.first->used -= it->second.second;
      p.owner.erase(it);
    }
  }
  return device_free(ptr);
}

}  // namespace

extern "C" {

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr) return set_error(cudaErrorInvalidValue);
  if (physical_device(device) < 0) return set_error(cudaErrorInvalidDevice);
  Pools& p = pools();
  std::lock_guard lock(p.mu);
  *pool = default_pool_locked(p, device);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr) return set_error(cudaErrorInvalidValue);
  if (physical_device(device) < 0) return set_error(cudaErrorInvalidDevice);
  Pools& p = pools();
  std::lock_guard lock(p.mu);
  auto it = p.current.find(device);
  *pool = it != p.current.end() ? it->second : default_pool_locked(p, device);
  return cudaSuccess;
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  if (pool == nullptr) return set_error(cudaErrorInvalidValue);
  if (physical_device(device) < 0 || pool->ordinal != device)
    return set_error(cudaErrorInvalidDevice);
  Pools& p = pools();
  std::lock_guard lock(p.mu);
  p.current[device] = pool;
  return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  if (pool == nullptr || props == nullptr) return set_error(cudaErrorInvalidValue);
  if (props->location.type != cudaMemLocationTypeDevice) return set_error(cudaErrorNotSupported);
  if (physical_device(props->location.id) < 0) return set_error(cudaErrorInvalidDevice);
  *pool = new CUmemPoolHandle_st{props->location.id};
  return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  if (pool == nullptr) return set_error(cudaErrorInvalidValue);
  Pools& p = pools();
  std::lock_guard lock(p.mu);
  for (const auto& [dev, d] : p.defaults) {
    if (d == pool) return set_error(cudaErrorInvalidValue);  // the default pool cannot be destroyed
  }
  for (auto it = p.current.begin(); it != p.current.end();) {
    it = it->second == pool ? p.current.erase(it) : std::next(it);
  }
  // Allocations still made from it stay valid until freed, as CUDA specifies.
  bool in_use = false;
  for (const auto& [ptr, owner] : p.owner) in_use = in_use || owner.first == pool;
  if (!in_use) delete pool;
  return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
  // Nothing is cached beyond live allocations, so there is nothing to release.
  return pool != nullptr ? cudaSuccess : set_error(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  if (pool == nullptr || value == nullptr) return set_error(cudaErrorInvalidValue);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
      pool->reuse_follow_event_dependencies = *static_cast<int*>(value);
      break;
    case cudaMemPoolReuseAllowOpportunistic:
      pool->reuse_allow_opportunistic = *static_cast<int*>(value);
      break;
    case cudaMemPoolReuseAllowInternalDependencies:
      pool->reuse_allow_internal_dependencies = *static_cast<int*>(value);
      break;
    case cudaMemPoolAttrReleaseThreshold:
      pool->release_threshold = *static_cast<uint64_t*>(value);
      break;
    // Only a reset to zero is allowed for the high-water marks (CUDA Runtime API).
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
      if (*static_cast<uint64_t*>(value) != 0) return set_error(cudaErrorInvalidValue);
      pool->used_high = pool->used;
      break;
    default:
      return set_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  if (pool == nullptr || value == nullptr) return set_error(cudaErrorInvalidValue);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
      *static_cast<int*>(value) = pool->reuse_follow_event_dependencies;
      break;
    case cudaMemPoolReuseAllowOpportunistic:
      *static_cast<int*>(value) = pool->reuse_allow_opportunistic;
      break;
    case cudaMemPoolReuseAllowInternalDependencies:
      *static_cast<int*>(value) = pool->reuse_allow_internal_dependencies;
      break;
    case cudaMemPoolAttrReleaseThreshold:
      *static_cast<uint64_t*>(value) = pool->release_threshold;
      break;
    // Reserved equals used: nothing is cached beyond live allocations.
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrUsedMemCurrent:
      *static_cast<uint64_t*>(value) = pool->used;
      break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
      *static_cast<uint64_t*>(value) = pool->used_high;
      break;
    default:
      return set_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descs, size_t count) {
  if (pool == nullptr || (descs == nullptr && count > 0)) return set_error(cudaErrorInvalidValue);
  return cudaSuccess;  // peer access within a host is always possible (NVSwitch)
}

cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool,
                                 cudaMemLocation* location) {
  if (flags == nullptr || pool == nullptr || location == nullptr)
    return set_error(cudaErrorInvalidValue);
  *flags = cudaMemAccessFlagsProtReadWrite;
  return cudaSuccess;
}

}  // extern "C"

PHANTORA_DEFINE_PT(cudaMallocAsync, _ptsz, (void** ptr, size_t size, cudaStream_t stream),
                   (ptr, size, stream))
PHANTORA_DEFINE_PT(cudaFreeAsync, _ptsz, (void* ptr, cudaStream_t stream), (ptr, stream))
PHANTORA_DEFINE_PT(cudaMallocFromPoolAsync, _ptsz,
                   (void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream),
                   (ptr, size, pool, stream))
