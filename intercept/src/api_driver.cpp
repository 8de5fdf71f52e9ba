// The driver entry points that programs fetch through cudaGetDriverEntryPoint(ByVersion):
// PyTorch's c10/cuda/driver_api.h resolves the virtual-memory calls behind expandable segments
// (cuMemAddressReserve / cuMemCreate / cuMemMap ...), cuDeviceGetAttribute, cuMemsetD32Async,
// cuStreamWriteValue32 and cuGetErrorString this way, and CUTLASS's Hopper kernels
// cuTensorMapEncodeTiled. The shim hands out its own functions; no driver is loaded.
//
// Names the shim does not implement:
//  - optional features a caller must probe for (green contexts, multicast objects, log
//    callbacks, device resources) are answered "not found", which PyTorch handles by not using
//    them (driver_api.h, C10_LIBCUDA_DRIVER_API_OPTIONAL);
//  - every other name gets a function that fails loudly, naming the symbol, when called.
//
// Physical memory from cuMemCreate counts against the device's capacity like cudaMalloc and is
// reported to the daemon as an allocation; reservations take addresses only.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../device_props.hpp"
#include "address_space.hpp"
#include "api_modules.hpp"
#include "context.hpp"
#include "memory.hpp"
#include "pt_variants.hpp"
#include "shadow.hpp"

extern "C" [[noreturn]] void phantora_unimplemented(const char* name);

using namespace phantora;
using namespace phantora::shim;

// The driver header only forward-declares the context type; the shim owns its layout.
struct CUctx_st {
  int unused = 0;
};

namespace {

// Granularity of physical allocations and mappings: 2 MiB, what the driver reports for device
// memory on current GPUs.
constexpr size_t kGranularity = 2u << 20;

// Allocation handles live in a number range of their own so that the daemon, which is told
// about them as allocations, never confuses one with a device address.
constexpr uint64_t kHandleBase = 1ull << 62;

struct Physical {
  int device = 0;  // physical index on the host
  uint64_t size = 0;
  CUmemAllocationProp prop{};
  int mappings = 0;
  bool released = false;
};

struct Mapping {
  uint64_t size = 0;
  CUmemGenericAllocationHandle handle = 0;
};

std::mutex g_mu;
uint64_t g_next_handle = kHandleBase;
std::map<CUmemGenericAllocationHandle, Physical>& physicals() {
  static auto* m = new std::map<CUmemGenericAllocationHandle, Physical>();
  return *m;
}
std::map<uint64_t, Mapping>& mappings() {  // mapped address -> what is mapped there
  static auto* m = new std::map<uint64_t, Mapping>();
  return *m;
}

void ensure_capacity_known() {
  static std::once_flag once;
  std::call_once(once, [] {
    AddressSpace::get().set_capacity(Runtime::get().welcome().device.total_global_mem);
  });
}

void send_memop(wire::RecordType type, uint64_t address, uint64_t bytes, int device) {
  wire::MemOp m{address, bytes, device, 0};
  Runtime::get().submit(type, &m, sizeof(m));
}

// Physical memory goes when it is both released and unmapped (cuMemRelease documentation).
void drop_if_unused_locked(CUmemGenericAllocationHandle h) {
  auto it = physicals().find(h);
  if (it == physicals().end() || !it->second.released || it->second.mappings > 0) return;
  AddressSpace::get().uncommit(it->second.device, it->second.size);
  send_memop(wire::RecordType::kFree, h, 0, it->second.device);
  physicals().erase(it);
}

CUresult check_prop(const CUmemAllocationProp* prop, int* physical) {
  if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  *physical = physical_device(prop->location.id);
  return *physical < 0 ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

// --- Errors and devices -------------------------------------------------------------------

std::pair<const char*, const char*> describe(CUresult e) {
  switch (e) {
    case CUDA_SUCCESS:
      return {"CUDA_SUCCESS", "no error"};
    case CUDA_ERROR_INVALID_VALUE:
      return {"CUDA_ERROR_INVALID_VALUE", "invalid argument"};
    case CUDA_ERROR_OUT_OF_MEMORY:
      return {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"};
    case CUDA_ERROR_NOT_INITIALIZED:
      return {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"};
    case CUDA_ERROR_INVALID_DEVICE:
      return {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"};
    case CUDA_ERROR_INVALID_HANDLE:
      return {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"};
    case CUDA_ERROR_NOT_FOUND:
      return {"CUDA_ERROR_NOT_FOUND", "named symbol not found"};
    case CUDA_ERROR_NOT_SUPPORTED:
      return {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"};
    case CUDA_ERROR_ALREADY_MAPPED:
      return {"CUDA_ERROR_ALREADY_MAPPED", "resource already mapped"};
    case CUDA_ERROR_NOT_MAPPED:
      return {"CUDA_ERROR_NOT_MAPPED", "resource not mapped"};
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
      return {"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
              "operation not permitted when stream is capturing"};
    default:
      return {nullptr, nullptr};
  }
}

CUresult drv_get_error_string(CUresult e, const char** str) {
  if (str == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *str = describe(e).second;
  return *str != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult drv_get_error_name(CUresult e, const char** str) {
  if (str == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *str = describe(e).first;
  return *str != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult drv_init(unsigned int flags) {
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult drv_driver_get_version(int* version) {
  return cudaDriverGetVersion(version) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// cuGetExportTable hands out the driver's private function tables, keyed by undocumented UUIDs;
// the real CUDA runtime and libraries that link it statically live on them. No such table
// exists here: every UUID is answered "not supported". NVRTC 13.0 asks for one while compiling
// (PyTorch 2.11's jitted kernels: erfinv in torch.nn.init.trunc_normal_) and compiles without
// it; a statically linked runtime fails on that answer with its own error.
CUresult drv_get_export_table(const void** table, const CUuuid* id) {
  if (table == nullptr || id == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult drv_device_get(CUdevice* device, int ordinal) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (physical_device(ordinal) < 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;  // a CUdevice is the ordinal, as in the real driver
  return CUDA_SUCCESS;
}

CUresult drv_device_get_count(int* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = visible_device_count();
  return CUDA_SUCCESS;
}

CUresult drv_device_get_attribute(int* value, CUdevice_attribute attr, CUdevice device) {
  ApiCall call;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (physical_device(device) < 0) return CUDA_ERROR_INVALID_DEVICE;
  const wire::Welcome& w = Runtime::get().welcome();
  // Attributes only the driver API has (no cudaDeviceAttr twin): virtual memory management and
  // POSIX-fd handles are supported on Linux since Pascal; GPUDirect RDMA with VMM memory, generic
  // compression and DMA-BUF host allocations on Ampere and later; Windows handles and the
  // decompression engine (Blackwell) are not modelled.
  switch (static_cast<int>(attr)) {
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
      *value = 1;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
      *value = w.device.cc_major >= 8 ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK:
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH:
      *value = 0;
      return CUDA_SUCCESS;
    default:
      break;
  }
  // Every other CUdevice_attribute has the number of its cudaDeviceAttr twin.
  const cudaError_t e =
      intercept::device_attribute(value, static_cast<cudaDeviceAttr>(attr), w.device,
                                  physical_device(device), Runtime::get().host(), w.gpus_per_host);
  return e == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// The primary context of a device is active once the process has used the device: it is the
// calling thread's current device or holds memory.
CUresult drv_device_primary_ctx_get_state(CUdevice device, unsigned int* flags, int* active) {
  if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const int physical = physical_device(device);
  if (physical < 0) return CUDA_ERROR_INVALID_DEVICE;
  unsigned int device_flags = 0;
  cudaGetDeviceFlags(&device_flags);
  *flags = device_flags;
  *active = device == current_device() || AddressSpace::get().used(physical) > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}

// Contexts: each device has one, its primary context; a thread's current context is its
// current device. A pushed context is remembered so that a pop restores the previous device.
CUcontext primary_context(int ordinal) {
  static CUctx_st contexts[wire::kMaxDevicesPerHost];
  return &contexts[ordinal];
}

int context_ordinal(CUcontext ctx) {
  const auto index = ctx - primary_context(0);
  return index >= 0 && index < wire::kMaxDevicesPerHost &&
                 physical_device(static_cast<int>(index)) >= 0
             ? static_cast<int>(index)
             : -1;
}

thread_local std::vector<int> t_context_stack;

CUresult drv_device_primary_ctx_retain(CUcontext* ctx, CUdevice device) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (physical_device(device) < 0) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = primary_context(device);
  return CUDA_SUCCESS;
}

CUresult drv_ctx_get_current(CUcontext* ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctx = primary_context(current_device());
  return CUDA_SUCCESS;
}

CUresult drv_ctx_set_current(CUcontext ctx) {
  if (ctx == nullptr) return CUDA_SUCCESS;  // "no context": the device stays as it is
  const int ordinal = context_ordinal(ctx);
  if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
  set_current_device(ordinal);
  return CUDA_SUCCESS;
}

CUresult drv_ctx_push_current(CUcontext ctx) {
  const int ordinal = context_ordinal(ctx);
  if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
  t_context_stack.push_back(current_device());
  set_current_device(ordinal);
  return CUDA_SUCCESS;
}

CUresult drv_ctx_pop_current(CUcontext* ctx) {
  if (t_context_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx != nullptr) *ctx = primary_context(current_device());
  set_current_device(t_context_stack.back());
  t_context_stack.pop_back();
  return CUDA_SUCCESS;
}

// --- Virtual memory management ------------------------------------------------------------

CUresult drv_mem_get_allocation_granularity(size_t* granularity, const CUmemAllocationProp* prop,
                                            CUmemAllocationGranularity_flags) {
  int physical = 0;
  if (granularity == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_prop(prop, &physical)) return e;
  *granularity = kGranularity;
  return CUDA_SUCCESS;
}

CUresult drv_mem_address_reserve(CUdeviceptr* ptr, size_t size, size_t alignment,
                                 CUdeviceptr /*hint: honoured by no caller that needs it*/,
                                 unsigned long long flags) {
  ApiCall call;
  if (ptr == nullptr || size == 0 || size % kGranularity != 0 || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  void* p = AddressSpace::get().reserve(physical_device(current_device()), size,
                                        alignment == 0 ? kGranularity : alignment);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult drv_mem_address_free(CUdeviceptr ptr, size_t size) {
  ApiCall call;
  auto owner = AddressSpace::get().owner(reinterpret_cast<void*>(ptr));
  if (!owner || owner->base != ptr || owner->size < size) return CUDA_ERROR_INVALID_VALUE;
  {
    std::lock_guard lock(g_mu);
    auto it = mappings().lower_bound(ptr);
    if (it != mappings().end() && it->first < ptr + owner->size) return CUDA_ERROR_INVALID_VALUE;
  }
  return AddressSpace::get().unreserve(reinterpret_cast<void*>(ptr)) ? CUDA_SUCCESS
                                                                     : CUDA_ERROR_INVALID_VALUE;
}

CUresult drv_mem_create(CUmemGenericAllocationHandle* handle, size_t size,
                        const CUmemAllocationProp* prop, unsigned long long flags) {
  ApiCall call;
  int physical = 0;
  if (handle == nullptr || size == 0 || size % kGranularity != 0 || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = check_prop(prop, &physical)) return e;
  ensure_capacity_known();
  if (!AddressSpace::get().commit(physical, size)) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard lock(g_mu);
  const CUmemGenericAllocationHandle h = g_next_handle++;
  physicals()[h] = Physical{physical, size, *prop, 0, false};
  send_memop(wire::RecordType::kAlloc, h, size, physical);
  *handle = h;
  return CUDA_SUCCESS;
}

CUresult drv_mem_release(CUmemGenericAllocationHandle handle) {
  ApiCall call;
  std::lock_guard lock(g_mu);
  auto it = physicals().find(handle);
  if (it == physicals().end() || it->second.released) return CUDA_ERROR_INVALID_VALUE;
  it->second.released = true;
  drop_if_unused_locked(handle);
  return CUDA_SUCCESS;
}

CUresult drv_mem_map(CUdeviceptr ptr, size_t size, size_t offset,
                     CUmemGenericAllocationHandle handle, unsigned long long flags) {
  ApiCall call;
  if (size == 0 || flags != 0 || ptr % kGranularity != 0 || size % kGranularity != 0)
    return CUDA_ERROR_INVALID_VALUE;
  auto owner = AddressSpace::get().owner(reinterpret_cast<void*>(ptr));
  if (!owner || ptr + size > owner->base + owner->size) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g_mu);
  auto h = physicals().find(handle);
  if (h == physicals().end() || h->second.released || offset != 0 || size > h->second.size)
    return CUDA_ERROR_INVALID_HANDLE;
  auto next = mappings().lower_bound(ptr);
  if (next != mappings().end() && next->first < ptr + size) return CUDA_ERROR_ALREADY_MAPPED;
  if (next != mappings().begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > ptr) return CUDA_ERROR_ALREADY_MAPPED;
  }
  mappings()[ptr] = Mapping{size, handle};
  ++h->second.mappings;
  return CUDA_SUCCESS;
}

CUresult drv_mem_unmap(CUdeviceptr ptr, size_t size) {
  ApiCall call;
  std::lock_guard lock(g_mu);
  auto it = mappings().find(ptr);
  if (it == mappings().end()) return CUDA_ERROR_INVALID_VALUE;
  // The range must cover whole mappings.
  const uint64_t end = ptr + size;
  for (auto m = it; m != mappings().end() && m->first < end; ++m) {
    if (m->first + m->second.size > end) return CUDA_ERROR_INVALID_VALUE;
  }
  while (it != mappings().end() && it->first < end) {
    ShadowStore::get().discard(it->first, it->second.size);
    const CUmemGenericAllocationHandle h = it->second.handle;
    it = mappings().erase(it);
    auto p = physicals().find(h);
    if (p != physicals().end()) --p->second.mappings;
    drop_if_unused_locked(h);
  }
  return CUDA_SUCCESS;
}

CUresult drv_mem_set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                            size_t count) {
  if (desc == nullptr || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        physical_device(desc[i].location.id) < 0)
      return CUDA_ERROR_INVALID_DEVICE;
  }
  std::lock_guard lock(g_mu);
  // Every byte of the range must be mapped.
  uint64_t at = ptr;
  auto it = mappings().upper_bound(ptr);
  if (it != mappings().begin()) --it;
  for (; it != mappings().end() && at < ptr + size; ++it) {
    if (it->first > at) break;
    at = std::max<uint64_t>(at, it->first + it->second.size);
  }
  return at >= ptr + size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult drv_mem_get_address_range(CUdeviceptr* base, size_t* size, CUdeviceptr ptr) {
  auto owner = AddressSpace::get().owner(reinterpret_cast<void*>(ptr));
  if (!owner) return CUDA_ERROR_NOT_FOUND;
  if (base != nullptr) *base = owner->base;
  if (size != nullptr) *size = owner->size;
  return CUDA_SUCCESS;
}

CUresult drv_mem_retain_allocation_handle(CUmemGenericAllocationHandle* handle, void* addr) {
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto a = reinterpret_cast<uint64_t>(addr);
  std::lock_guard lock(g_mu);
  auto it = mappings().upper_bound(a);
  if (it == mappings().begin()) return CUDA_ERROR_INVALID_VALUE;
  --it;
  if (a >= it->first + it->second.size) return CUDA_ERROR_INVALID_VALUE;
  auto p = physicals().find(it->second.handle);
  if (p == physicals().end()) return CUDA_ERROR_INVALID_VALUE;
  // Retaining returns the same handle with one more reference, released by cuMemRelease.
  if (p->second.released) {
    p->second.released = false;
  } else {
    return CUDA_ERROR_NOT_SUPPORTED;  // a second live reference is not tracked
  }
  *handle = it->second.handle;
  return CUDA_SUCCESS;
}

CUresult drv_mem_get_allocation_properties_from_handle(CUmemAllocationProp* prop,
                                                       CUmemGenericAllocationHandle handle) {
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g_mu);
  auto it = physicals().find(handle);
  if (it == physicals().end()) return CUDA_ERROR_INVALID_VALUE;
  *prop = it->second.prop;
  return CUDA_SUCCESS;
}

// --- Stream-ordered writes ----------------------------------------------------------------

template <bool PerThread>
CUresult drv_memset_d32_async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
  ApiCall call;
  if (dst % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t bytes = static_cast<uint64_t>(count) * 4;
  const unsigned char b0 = value & 0xff;
  const bool uniform = value == b0 * 0x01010101u;
  if (stream_memset(reinterpret_cast<void*>(dst), uniform ? b0 : 0, bytes,
                    resolve_stream(stream, PerThread)) != cudaSuccess)
    return CUDA_ERROR_INVALID_VALUE;
  if (!uniform && bytes <= ShadowStore::kMaxWrite) {
    for (size_t i = 0; i < count; ++i) ShadowStore::get().write(dst + 4 * i, &value, 4);
  }
  return CUDA_SUCCESS;
}

// A 4-byte write in stream order: a memset on the stream for timing, the value in the shadow
// store so that a later read sees it.
template <bool PerThread>
CUresult drv_stream_write_value32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                  unsigned int /*flags*/) {
  ApiCall call;
  if (addr % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (stream_memset(reinterpret_cast<void*>(addr), 0, 4, resolve_stream(stream, PerThread)) !=
      cudaSuccess)
    return CUDA_ERROR_INVALID_VALUE;
  ShadowStore::get().write(addr, &value, 4);
  return CUDA_SUCCESS;
}

// --- Tensor maps (TMA descriptors) ----------------------------------------------------------

// Bytes per element of a tensor map's data type; 0 for the packed sub-byte types.
size_t tensor_map_element_bytes(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8:
      return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
      return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
      return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

// cuTensorMapEncodeTiled: CUTLASS's Hopper kernels (PyTorch's torch._grouped_mm on sm_90, the
// grouped GEMM of MoE experts) build their TMA descriptors on the host with it before the
// launch. A descriptor is opaque and only read by the kernel, which the simulator does not run:
// the arguments are checked against the driver's documented requirements (cuda.h) and the
// descriptor records the address and shape, so that the call fails where the real one fails.
CUresult drv_tensor_map_encode_tiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                     void* address, const cuuint64_t* dims,
                                     const cuuint64_t* strides, const cuuint32_t* box,
                                     const cuuint32_t* element_strides,
                                     CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                     CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  ApiCall call;
  const auto addr = reinterpret_cast<uintptr_t>(address);
  const bool packed = type > CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
  if (map == nullptr || reinterpret_cast<uintptr_t>(map) % 64 != 0 || address == nullptr ||
      dims == nullptr || box == nullptr || element_strides == nullptr ||
      (rank > 1 && strides == nullptr))
    return CUDA_ERROR_INVALID_VALUE;
  if (type < CU_TENSOR_MAP_DATA_TYPE_UINT8 || type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B ||
      interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || interleave > CU_TENSOR_MAP_INTERLEAVE_32B ||
      swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B ||
      l2 < CU_TENSOR_MAP_L2_PROMOTION_NONE || l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
      oob < CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ||
      oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return CUDA_ERROR_INVALID_VALUE;
  if (rank == 0 || rank > 5 || (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3))
    return CUDA_ERROR_INVALID_VALUE;
  const bool align32 = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ||
                       type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B ||
                       type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;
  if (addr % (align32 ? 32 : 16) != 0) return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32)) return CUDA_ERROR_INVALID_VALUE;
    if (box[i] == 0 || box[i] > 256) return CUDA_ERROR_INVALID_VALUE;
    if (element_strides[i] == 0 || element_strides[i] > 8) return CUDA_ERROR_INVALID_VALUE;
  }
  for (cuuint32_t i = 0; i + 1 < rank; ++i) {
    if (strides[i] % (align32 ? 32 : 16) != 0 || strides[i] >= (1ull << 40))
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (!packed && interleave == CU_TENSOR_MAP_INTERLEAVE_NONE) {
    const uint64_t inner = static_cast<uint64_t>(box[0]) * tensor_map_element_bytes(type);
    if (inner % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t limit = swizzle == CU_TENSOR_MAP_SWIZZLE_32B    ? 32
                           : swizzle == CU_TENSOR_MAP_SWIZZLE_64B  ? 64
                           : swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ? UINT64_MAX
                                                                   : 128;
    if (inner > limit) return CUDA_ERROR_INVALID_VALUE;
  }
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_32B && swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
    return CUDA_ERROR_INVALID_VALUE;
  // The real descriptor's layout is the hardware's and undocumented; nothing here reads it
  // back. It is filled deterministically with what identifies the region.
  std::memset(map->opaque, 0, sizeof(map->opaque));
  map->opaque[0] = addr;
  map->opaque[1] = (static_cast<uint64_t>(type) << 8) | rank;
  for (cuuint32_t i = 0; i < rank; ++i) map->opaque[2 + i] = dims[i];
  return CUDA_SUCCESS;
}

// --- The table ------------------------------------------------------------------------------

struct Entry {
  std::string_view name;
  void* legacy;      // default stream 0 = the legacy stream
  void* per_thread;  // under cudaEnablePerThreadDefaultStream
};

template <typename F>
void* fn(F* f) {
  return reinterpret_cast<void*>(f);
}

const Entry kEntries[] = {
    {"cuGetErrorString", fn(drv_get_error_string), fn(drv_get_error_string)},
    {"cuGetErrorName", fn(drv_get_error_name), fn(drv_get_error_name)},
    {"cuInit", fn(drv_init), fn(drv_init)},
    {"cuDriverGetVersion", fn(drv_driver_get_version), fn(drv_driver_get_version)},
    {"cuGetExportTable", fn(drv_get_export_table), fn(drv_get_export_table)},
    {"cuDeviceGet", fn(drv_device_get), fn(drv_device_get)},
    {"cuDeviceGetCount", fn(drv_device_get_count), fn(drv_device_get_count)},
    {"cuDeviceGetAttribute", fn(drv_device_get_attribute), fn(drv_device_get_attribute)},
    {"cuDevicePrimaryCtxGetState", fn(drv_device_primary_ctx_get_state),
     fn(drv_device_primary_ctx_get_state)},
    {"cuDevicePrimaryCtxRetain", fn(drv_device_primary_ctx_retain),
     fn(drv_device_primary_ctx_retain)},
    {"cuCtxGetCurrent", fn(drv_ctx_get_current), fn(drv_ctx_get_current)},
    {"cuCtxSetCurrent", fn(drv_ctx_set_current), fn(drv_ctx_set_current)},
    {"cuCtxPushCurrent", fn(drv_ctx_push_current), fn(drv_ctx_push_current)},
    {"cuCtxPopCurrent", fn(drv_ctx_pop_current), fn(drv_ctx_pop_current)},
    {"cuMemGetAllocationGranularity", fn(drv_mem_get_allocation_granularity),
     fn(drv_mem_get_allocation_granularity)},
    {"cuMemAddressReserve", fn(drv_mem_address_reserve), fn(drv_mem_address_reserve)},
    {"cuMemAddressFree", fn(drv_mem_address_free), fn(drv_mem_address_free)},
    {"cuMemCreate", fn(drv_mem_create), fn(drv_mem_create)},
    {"cuMemRelease", fn(drv_mem_release), fn(drv_mem_release)},
    {"cuMemMap", fn(drv_mem_map), fn(drv_mem_map)},
    {"cuMemUnmap", fn(drv_mem_unmap), fn(drv_mem_unmap)},
    {"cuMemSetAccess", fn(drv_mem_set_access), fn(drv_mem_set_access)},
    {"cuMemGetAddressRange", fn(drv_mem_get_address_range), fn(drv_mem_get_address_range)},
    {"cuMemRetainAllocationHandle", fn(drv_mem_retain_allocation_handle),
     fn(drv_mem_retain_allocation_handle)},
    {"cuMemGetAllocationPropertiesFromHandle", fn(drv_mem_get_allocation_properties_from_handle),
     fn(drv_mem_get_allocation_properties_from_handle)},
    {"cuMemsetD32Async", fn(drv_memset_d32_async<false>), fn(drv_memset_d32_async<true>)},
    {"cuStreamWriteValue32", fn(drv_stream_write_value32<false>),
     fn(drv_stream_write_value32<true>)},
    // Modules and launches of code loaded at run time (Triton), api_modules.cpp.
    {"cuModuleLoad", fn(drv_module_load), fn(drv_module_load)},
    {"cuModuleLoadData", fn(drv_module_load_data), fn(drv_module_load_data)},
    {"cuModuleLoadDataEx", fn(drv_module_load_data_ex), fn(drv_module_load_data_ex)},
    {"cuModuleUnload", fn(drv_module_unload), fn(drv_module_unload)},
    {"cuModuleGetFunction", fn(drv_module_get_function), fn(drv_module_get_function)},
    {"cuFuncGetAttribute", fn(drv_func_get_attribute), fn(drv_func_get_attribute)},
    {"cuFuncSetAttribute", fn(drv_func_set_attribute), fn(drv_func_set_attribute)},
    {"cuFuncSetCacheConfig", fn(drv_func_set_cache_config), fn(drv_func_set_cache_config)},
    {"cuLaunchKernel", fn(drv_launch_kernel<false>), fn(drv_launch_kernel<true>)},
    {"cuLaunchKernelEx", fn(drv_launch_kernel_ex<false>), fn(drv_launch_kernel_ex<true>)},
    {"cuPointerGetAttribute", fn(drv_pointer_get_attribute), fn(drv_pointer_get_attribute)},
    {"cuTensorMapEncodeTiled", fn(drv_tensor_map_encode_tiled), fn(drv_tensor_map_encode_tiled)},
};

// Optional driver features that callers probe for and do without: answered "not found".
constexpr std::string_view kAbsent[] = {
    "cuCtxFromGreenCtx",           "cuGreenCtxCreate",
    "cuGreenCtxDestroy",           "cuGreenCtxStreamCreate",
    "cuDevSmResourceSplitByCount", "cuDeviceGetDevResource",
    "cuDevResourceGenerateDesc",   "cuMulticastAddDevice",
    "cuMulticastBindMem",          "cuMulticastCreate",
    "cuMulticastUnbind",           "cuMulticastGetGranularity",
    "cuLogsRegisterCallback",      "cuLogsUnregisterCallback",
};

// Every other name gets one of these: a function that names the symbol and aborts when called.
constexpr int kLoudSlots = 64;
std::array<std::string, kLoudSlots> g_loud_names;

template <int I>
CUresult loud() {
  phantora_unimplemented(g_loud_names[I].c_str());
}

template <int... I>
constexpr std::array<void*, kLoudSlots> loud_table(std::integer_sequence<int, I...>) {
  return {reinterpret_cast<void*>(&loud<I>)...};
}

void* loud_function(std::string_view name) {
  static const std::array<void*, kLoudSlots> slots =
      loud_table(std::make_integer_sequence<int, kLoudSlots>());
  std::lock_guard lock(g_mu);
  for (int i = 0; i < kLoudSlots; ++i) {
    if (g_loud_names[i] == name) return slots[i];
    if (g_loud_names[i].empty()) {
      g_loud_names[i] = name;
      return slots[i];
    }
  }
  fatal("more than " + std::to_string(kLoudSlots) +
        " unimplemented driver entry points were requested; the last was " + std::string(name));
}

void* implemented(std::string_view name, bool per_thread) {
  for (const Entry& e : kEntries) {
    if (e.name == name) return per_thread ? e.per_thread : e.legacy;
  }
  return nullptr;
}

cudaError_t entry_point(const char* symbol, void** out, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || out == nullptr) return set_error(cudaErrorInvalidValue);
  const std::string_view name(symbol);
  const bool per_thread = (flags & cudaEnablePerThreadDefaultStream) != 0;
  if (void* f = implemented(name, per_thread)) {
    *out = f;
    if (status != nullptr) *status = cudaDriverEntryPointSuccess;
    return cudaSuccess;
  }
  for (std::string_view absent : kAbsent) {
    if (absent == name) {
      *out = nullptr;
      if (status != nullptr) *status = cudaDriverEntryPointSymbolNotFound;
      return cudaSuccess;
    }
  }
  *out = loud_function(name);
  if (status != nullptr) *status = cudaDriverEntryPointSuccess;
  return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPoint_impl(bool, const char* symbol, void** out,
                                         unsigned long long flags,
                                         cudaDriverEntryPointQueryResult* status) {
  return entry_point(symbol, out, flags, status);
}

cudaError_t cudaGetDriverEntryPointByVersion_impl(bool, const char* symbol, void** out,
                                                  unsigned int /*version*/,
                                                  unsigned long long flags,
                                                  cudaDriverEntryPointQueryResult* status) {
  return entry_point(symbol, out, flags, status);
}

}  // namespace

PHANTORA_DEFINE_PT(cudaGetDriverEntryPoint, _ptsz,
                   (const char* symbol, void** funcPtr, unsigned long long flags,
                    cudaDriverEntryPointQueryResult* driverStatus),
                   (symbol, funcPtr, flags, driverStatus))
PHANTORA_DEFINE_PT(cudaGetDriverEntryPointByVersion, _ptsz,
                   (const char* symbol, void** funcPtr, unsigned int cudaVersion,
                    unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus),
                   (symbol, funcPtr, cudaVersion, flags, driverStatus))

// The driver stand-in libcuda.so.1 (intercept/libcuda/) forwards the functions it exports to
// the shim's implementations through this; nullptr for a name the shim does not implement.
extern "C" __attribute__((visibility("default"))) void* phantora_driver_function(const char* name,
                                                                                 int per_thread) {
  return name == nullptr ? nullptr : implemented(name, per_thread != 0);
}
