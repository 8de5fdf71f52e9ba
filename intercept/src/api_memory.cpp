// Device and host memory, copies and memsets (CUDA Runtime API "Memory Management").
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "../runtime_abi.hpp"
#include "address_space.hpp"
#include "capture.hpp"
#include "context.hpp"
#include "memory.hpp"
#include "payload_inbox.hpp"
#include "pt_variants.hpp"
#include "registry.hpp"
#include "shadow.hpp"

using namespace phantora;
using namespace phantora::shim;

namespace phantora::shim {
namespace {

struct PinnedRange {
  uint64_t size;
  unsigned flags;
  bool managed;  // cudaMallocManaged's: released by cudaFree, not cudaFreeHost
};

std::mutex pinned_mu;
std::map<uint64_t, PinnedRange>& pinned_ranges() {
  static auto* m = new std::map<uint64_t, PinnedRange>();
  return *m;
}

const PinnedRange* pinned_lookup(uint64_t addr, uint64_t* base) {
  auto& m = pinned_ranges();
  auto it = m.upper_bound(addr);
  if (it == m.begin()) return nullptr;
  --it;
  if (addr >= it->first + it->second.size) return nullptr;
  if (base != nullptr) *base = it->first;
  return &it->second;
}

void add_range(void* ptr, const PinnedRange& range) {
  std::lock_guard lock(pinned_mu);
  pinned_ranges()[reinterpret_cast<uint64_t>(ptr)] = range;
}

// Removes the range that starts at `ptr` if it is of the kind asked for.
bool remove_range(void* ptr, bool managed) {
  std::lock_guard lock(pinned_mu);
  auto& m = pinned_ranges();
  auto it = m.find(reinterpret_cast<uint64_t>(ptr));
  if (it == m.end() || it->second.managed != managed) return false;
  m.erase(it);
  return true;
}

bool on_device(const void* p) {
  return AddressSpace::get().contains(p);
}

cudaMemcpyKind infer_kind(const void* dst, const void* src) {
  const bool d = on_device(dst);
  const bool s = on_device(src);
  if (d && s) return cudaMemcpyDeviceToDevice;
  if (d) return cudaMemcpyHostToDevice;
  if (s) return cudaMemcpyDeviceToHost;
  return cudaMemcpyHostToHost;
}

wire::CopyKind wire_kind(cudaMemcpyKind k) {
  switch (k) {
    case cudaMemcpyHostToDevice:
      return wire::CopyKind::kHostToDevice;
    case cudaMemcpyDeviceToHost:
      return wire::CopyKind::kDeviceToHost;
    case cudaMemcpyDeviceToDevice:
      return wire::CopyKind::kDeviceToDevice;
    default:
      return wire::CopyKind::kHostToHost;
  }
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

}  // namespace

bool is_pinned(const void* ptr, uint64_t bytes) {
  std::lock_guard lock(pinned_mu);
  uint64_t base = 0;
  const PinnedRange* r = pinned_lookup(reinterpret_cast<uint64_t>(ptr), &base);
  return r != nullptr && reinterpret_cast<uint64_t>(ptr) + bytes <= base + r->size;
}

void add_pinned(void* ptr, uint64_t bytes, unsigned flags) {
  add_range(ptr, PinnedRange{bytes, flags, false});
}

bool remove_pinned(void* ptr) {
  return remove_range(ptr, false);
}

void add_managed(void* ptr, uint64_t bytes) {
  add_range(ptr, PinnedRange{bytes, cudaHostAllocMapped, true});
}

bool remove_managed(void* ptr) {
  return remove_range(ptr, true);
}

unsigned pinned_flags(const void* ptr) {
  std::lock_guard lock(pinned_mu);
  const PinnedRange* r = pinned_lookup(reinterpret_cast<uint64_t>(ptr), nullptr);
  return r == nullptr ? 0 : r->flags;
}

cudaError_t stream_copy(void* dst, const void* src, uint64_t bytes, cudaMemcpyKind kind,
                        CUstream_st* stream, bool sync_api) {
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return set_error(cudaErrorInvalidValue);
  if (kind == cudaMemcpyDefault) kind = infer_kind(dst, src);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return set_error(cudaErrorInvalidMemcpyDirection);
  const auto d = reinterpret_cast<uint64_t>(dst);
  const auto s = reinterpret_cast<uint64_t>(src);
  if (kind == cudaMemcpyHostToHost) {
    std::memmove(dst, src, bytes);
    return cudaSuccess;
  }
  const bool pinned = kind == cudaMemcpyHostToDevice   ? is_pinned(src, bytes)
                      : kind == cudaMemcpyDeviceToHost ? is_pinned(dst, bytes)
                                                       : true;
  // Large copies move (or zero-fill) real host memory in the shim: not the program's time.
  if (bytes > ShadowStore::kMaxWrite / 16) Runtime::note_expensive();
  // The bytes the copy moves, as far as the shadow store knows them.
  auto move_shadow = [&] {
    if (kind == cudaMemcpyHostToDevice) ShadowStore::get().write(d, src, bytes);
    if (kind == cudaMemcpyDeviceToHost) ShadowStore::get().read(s, dst, bytes);
    if (kind == cudaMemcpyDeviceToDevice) ShadowStore::get().copy(d, s, bytes);
  };
  // Reading memory that a small collective is about to fill: the copy goes to the daemon and
  // waits, and the bytes are taken once the collective's result has arrived.
  const bool awaits_payload =
      kind != cudaMemcpyHostToDevice && PayloadInbox::get().overlaps(s, bytes);
  if (!awaits_payload) move_shadow();
  const wire::CopyKind wk = wire_kind(kind);
  if (stream->capture != nullptr) {
    wire::GraphNode n{};
    n.kind = wire::GraphNodeKind::kCopy;
    n.copy_kind = wk;
    n.bytes = bytes;
    capture_node(stream, n);
    return cudaSuccess;
  }
  wire::Copy c{stream->id, stream->device, wk, static_cast<uint8_t>(pinned), 0, bytes};
  // CUDA's rules (Runtime API, "API synchronization behavior"): synchronous copies to or from
  // the host return when the copy is done; device-to-device ones do not wait. An asynchronous
  // copy into pageable host memory also returns only when done.
  const bool host_waits =
      sync_api ? kind != cudaMemcpyDeviceToDevice : (kind == cudaMemcpyDeviceToHost && !pinned);
  if (host_waits || awaits_payload) {
    // Waiting for a payload is real time only: the host clock moves only if CUDA would block.
    Runtime::get().request(wire::RecordType::kCopy, &c, sizeof(c), /*advance=*/host_waits);
  } else {
    Runtime::get().submit(wire::RecordType::kCopy, &c, sizeof(c));
  }
  if (awaits_payload) {
    PayloadInbox::get().wait_for(s, bytes);
    move_shadow();
  }
  return cudaSuccess;
}

cudaError_t stream_memset(void* dst, int value, uint64_t bytes, CUstream_st* stream) {
  if (bytes == 0) return cudaSuccess;
  if (!on_device(dst)) return set_error(cudaErrorInvalidValue);
  ShadowStore::get().fill(reinterpret_cast<uint64_t>(dst), static_cast<uint8_t>(value), bytes);
  if (stream->capture != nullptr) {
    wire::GraphNode n{};
    n.kind = wire::GraphNodeKind::kMemset;
    n.bytes = bytes;
    capture_node(stream, n);
    return cudaSuccess;
  }
  wire::Memset m{stream->id, stream->device, 0, bytes};
  Runtime::get().submit(wire::RecordType::kMemset, &m, sizeof(m));
  return cudaSuccess;
}

// Device allocation and release, shared by cudaMalloc and the stream-ordered allocator.
cudaError_t device_malloc(void** ptr, size_t size) {
  if (ptr == nullptr) return set_error(cudaErrorInvalidValue);
  ensure_capacity_known();
  const int device = physical_device(current_device());
  void* p = AddressSpace::get().allocate(device, size);
  if (p == nullptr) {
    *ptr = nullptr;
    return set_error(cudaErrorMemoryAllocation);
  }
  send_memop(wire::RecordType::kAlloc, reinterpret_cast<uint64_t>(p), size, device);
  *ptr = p;
  return cudaSuccess;
}

cudaError_t device_free(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  auto owner = AddressSpace::get().owner(ptr);
  if (!owner || owner->base != reinterpret_cast<uint64_t>(ptr))
    return set_error(cudaErrorInvalidValue);
  // A VMM reservation (cuMemAddressReserve) is not cudaMalloc memory.
  if (!AddressSpace::get().release(ptr)) return set_error(cudaErrorInvalidValue);
  ShadowStore::get().discard(owner->base, owner->size);
  send_memop(wire::RecordType::kFree, owner->base, 0, owner->device);
  return cudaSuccess;
}

}  // namespace phantora::shim

namespace {

cudaError_t cudaMemcpyAsync_impl(bool pt, void* dst, const void* src, size_t count,
                                 cudaMemcpyKind kind, cudaStream_t stream) {
  ApiCall call;
  return stream_copy(dst, src, count, kind, resolve_stream(stream, pt), false);
}

cudaError_t cudaMemcpy_impl(bool pt, void* dst, const void* src, size_t count,
                            cudaMemcpyKind kind) {
  ApiCall call;
  return stream_copy(dst, src, count, kind, resolve_stream(nullptr, pt), true);
}

// 2D copies move `height` rows of `width` bytes; the simulated cost is that of width*height
// bytes, and the shadow store sees each row.
cudaError_t copy_2d(bool pt, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool sync_api) {
  if (width > dpitch || width > spitch) return set_error(cudaErrorInvalidPitchValue);
  if (kind == cudaMemcpyDefault) kind = infer_kind(dst, src);
  CUstream_st* s = resolve_stream(stream, pt);
  for (size_t row = 0; row < height && width * height <= ShadowStore::kMaxWrite; ++row) {
    auto* d = static_cast<char*>(dst) + row * dpitch;
    const auto* sr = static_cast<const char*>(src) + row * spitch;
    if (kind == cudaMemcpyHostToDevice)
      ShadowStore::get().write(reinterpret_cast<uint64_t>(d), sr, width);
    if (kind == cudaMemcpyDeviceToHost)
      ShadowStore::get().read(reinterpret_cast<uint64_t>(sr), d, width);
    if (kind == cudaMemcpyHostToHost) std::memcpy(d, sr, width);
  }
  if (kind == cudaMemcpyHostToHost || width * height == 0) return cudaSuccess;
  // The byte movement is accounted once, as a contiguous copy of the same size; the shadow
  // bytes were handled row by row above, so hand it a scratch source the shadow won't see.
  if (s->capture != nullptr) {
    wire::GraphNode n{};
    n.kind = wire::GraphNodeKind::kCopy;
    n.copy_kind = wire_kind(kind);
    n.bytes = width * height;
    capture_node(s, n);
    return cudaSuccess;
  }
  const bool pinned = kind == cudaMemcpyHostToDevice   ? is_pinned(src, spitch * height)
                      : kind == cudaMemcpyDeviceToHost ? is_pinned(dst, dpitch * height)
                                                       : true;
  wire::Copy c{s->id, s->device, wire_kind(kind), static_cast<uint8_t>(pinned), 0, width * height};
  const bool waits =
      sync_api ? kind != cudaMemcpyDeviceToDevice : (kind == cudaMemcpyDeviceToHost && !pinned);
  if (waits) {
    Runtime::get().request(wire::RecordType::kCopy, &c, sizeof(c));
  } else {
    Runtime::get().submit(wire::RecordType::kCopy, &c, sizeof(c));
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy2D_impl(bool pt, void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind) {
  ApiCall call;
  return copy_2d(pt, dst, dpitch, src, spitch, width, height, kind, nullptr, true);
}

cudaError_t cudaMemcpy2DAsync_impl(bool pt, void* dst, size_t dpitch, const void* src,
                                   size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,
                                   cudaStream_t stream) {
  ApiCall call;
  return copy_2d(pt, dst, dpitch, src, spitch, width, height, kind, stream, false);
}

cudaError_t cudaMemset_impl(bool pt, void* dst, int value, size_t count) {
  ApiCall call;
  return stream_memset(dst, value, count, resolve_stream(nullptr, pt));
}

cudaError_t cudaMemsetAsync_impl(bool pt, void* dst, int value, size_t count, cudaStream_t stream) {
  ApiCall call;
  return stream_memset(dst, value, count, resolve_stream(stream, pt));
}

cudaError_t memset_2d(bool pt, void* dst, size_t pitch, int value, size_t width, size_t height,
                      cudaStream_t stream) {
  if (width > pitch) return set_error(cudaErrorInvalidPitchValue);
  for (size_t row = 0; row < height && width * height <= ShadowStore::kMaxWrite; ++row) {
    ShadowStore::get().fill(reinterpret_cast<uint64_t>(dst) + row * pitch,
                            static_cast<uint8_t>(value), width);
  }
  CUstream_st* s = resolve_stream(stream, pt);
  if (width * height == 0) return cudaSuccess;
  wire::Memset m{s->id, s->device, 0, width * height};
  Runtime::get().submit(wire::RecordType::kMemset, &m, sizeof(m));
  return cudaSuccess;
}

cudaError_t cudaMemset2D_impl(bool pt, void* dst, size_t pitch, int value, size_t width,
                              size_t height) {
  ApiCall call;
  return memset_2d(pt, dst, pitch, value, width, height, nullptr);
}

cudaError_t cudaMemset2DAsync_impl(bool pt, void* dst, size_t pitch, int value, size_t width,
                                   size_t height, cudaStream_t stream) {
  ApiCall call;
  return memset_2d(pt, dst, pitch, value, width, height, stream);
}

cudaError_t symbol_copy(const void* symbol, size_t offset, void* host, size_t count,
                        cudaMemcpyKind kind, bool to_symbol, cudaStream_t stream, bool pt,
                        bool sync_api) {
  auto sym = find_symbol(symbol);
  if (!sym) return set_error(cudaErrorInvalidSymbol);
  if (offset + count > sym->size) return set_error(cudaErrorInvalidValue);
  auto* dev = reinterpret_cast<void*>(sym->address + offset);
  if (kind == cudaMemcpyDefault) kind = to_symbol ? infer_kind(dev, host) : infer_kind(host, dev);
  return to_symbol ? stream_copy(dev, host, count, kind, resolve_stream(stream, pt), sync_api)
                   : stream_copy(host, dev, count, kind, resolve_stream(stream, pt), sync_api);
}

cudaError_t cudaMemcpyToSymbol_impl(bool pt, const void* symbol, const void* src, size_t count,
                                    size_t offset, cudaMemcpyKind kind) {
  ApiCall call;
  return symbol_copy(symbol, offset, const_cast<void*>(src), count, kind, true, nullptr, pt, true);
}

cudaError_t cudaMemcpyFromSymbol_impl(bool pt, void* dst, const void* symbol, size_t count,
                                      size_t offset, cudaMemcpyKind kind) {
  ApiCall call;
  return symbol_copy(symbol, offset, dst, count, kind, false, nullptr, pt, true);
}

cudaError_t cudaMemcpyToSymbolAsync_impl(bool pt, const void* symbol, const void* src, size_t count,
                                         size_t offset, cudaMemcpyKind kind, cudaStream_t stream) {
  ApiCall call;
  return symbol_copy(symbol, offset, const_cast<void*>(src), count, kind, true, stream, pt, false);
}

cudaError_t cudaMemcpyFromSymbolAsync_impl(bool pt, void* dst, const void* symbol, size_t count,
                                           size_t offset, cudaMemcpyKind kind,
                                           cudaStream_t stream) {
  ApiCall call;
  return symbol_copy(symbol, offset, dst, count, kind, false, stream, pt, false);
}

cudaError_t peer_copy(void* dst, int dst_device, const void* src, int src_device, size_t count,
                      CUstream_st* s, bool sync_api) {
  if (physical_device(dst_device) < 0 || physical_device(src_device) < 0)
    return set_error(cudaErrorInvalidDevice);
  if (count == 0) return cudaSuccess;
  ShadowStore::get().copy(reinterpret_cast<uint64_t>(dst), reinterpret_cast<uint64_t>(src), count);
  wire::Copy c{s->id,
               s->device,
               dst_device == src_device ? wire::CopyKind::kDeviceToDevice : wire::CopyKind::kPeer,
               1,
               0,
               count};
  (void)sync_api;  // peer copies never block the host (Runtime API: "cudaMemcpyPeer ...
                   // asynchronous")
  Runtime::get().submit(wire::RecordType::kCopy, &c, sizeof(c));
  return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
  ApiCall call;
  return device_malloc(ptr, size);
}

cudaError_t cudaFree(void* ptr) {
  ApiCall call;
  if (ptr == nullptr) return cudaSuccess;
  // cudaFree synchronises the device before it releases memory.
  wire::DeviceRef r{physical_device(current_device()), 0};
  Runtime::get().request(wire::RecordType::kDeviceSync, &r, sizeof(r));
  if (remove_managed(ptr)) {
    std::free(ptr);
    return cudaSuccess;
  }
  return device_free(ptr);
}

cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int /*flags*/) {
  // Managed memory is reachable from the host, so it is real host memory here. It is not
  // counted against the device's capacity (docs/runtime.md lists this limit).
  ApiCall call;
  if (ptr == nullptr) return set_error(cudaErrorInvalidValue);
  void* real = std::aligned_alloc(
      AddressSpace::kAlignment,
      (size + AddressSpace::kAlignment - 1) / AddressSpace::kAlignment * AddressSpace::kAlignment);
  if (real == nullptr) return set_error(cudaErrorMemoryAllocation);
  add_managed(real, size);
  *ptr = real;
  return cudaSuccess;
}

cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  ApiCall call;
  if (pitch == nullptr) return set_error(cudaErrorInvalidValue);
  *pitch =
      (width + AddressSpace::kAlignment - 1) / AddressSpace::kAlignment * AddressSpace::kAlignment;
  return device_malloc(ptr, *pitch * height);
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  ApiCall call;
  ensure_capacity_known();
  const uint64_t cap = AddressSpace::get().capacity();
  const uint64_t used = AddressSpace::get().used(physical_device(current_device()));
  if (free != nullptr) *free = cap - used;
  if (total != nullptr) *total = cap;
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags) {
  ApiCall call;
  if (ptr == nullptr) return set_error(cudaErrorInvalidValue);
  // Pinned host memory is real host memory (design: "Memory and values").
  void* p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  if (p == nullptr) return set_error(cudaErrorMemoryAllocation);
  add_pinned(p, size, flags);
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
  ApiCall call;
  if (ptr == nullptr) return cudaSuccess;
  if (!remove_pinned(ptr)) return set_error(cudaErrorInvalidValue);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  ApiCall call;
  if (ptr == nullptr || size == 0) return set_error(cudaErrorInvalidValue);
  if (is_pinned(ptr, 1)) return set_error(cudaErrorHostMemoryAlreadyRegistered);
  add_pinned(ptr, size, flags);
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void* ptr) {
  ApiCall call;
  if (!remove_pinned(ptr)) return set_error(cudaErrorHostMemoryNotRegistered);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void** dev, void* host, unsigned int flags) {
  if (dev == nullptr || flags != 0) return set_error(cudaErrorInvalidValue);
  if (!is_pinned(host, 1)) return set_error(cudaErrorInvalidValue);
  *dev = host;  // unified addressing: the same address on both sides
  return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned int* flags, void* host) {
  if (flags == nullptr || !is_pinned(host, 1)) return set_error(cudaErrorInvalidValue);
  *flags = pinned_flags(host);
  return cudaSuccess;
}

namespace {

cudaPointerAttributes pointer_attributes(const void* ptr) {
  cudaPointerAttributes a{};
  if (auto owner = AddressSpace::get().owner(ptr)) {
    a.type = cudaMemoryTypeDevice;
    a.device = 0;
    for (int i = 0; i < visible_device_count(); ++i) {
      if (physical_device(i) == owner->device) a.device = i;
    }
    a.devicePointer = const_cast<void*>(ptr);
  } else if (is_pinned(ptr, 1)) {
    a.type = cudaMemoryTypeHost;
    a.device = current_device();
    a.devicePointer = const_cast<void*>(ptr);
    a.hostPointer = const_cast<void*>(ptr);
  } else {
    a.type = cudaMemoryTypeUnregistered;
    a.device = -2;
  }
  return a;
}

}  // namespace

// A CUDA 12 program passes the struct without CUDA 13's reserved tail (runtime_abi.hpp):
// writing the whole CUDA 13 struct overwrote 64 bytes of its stack (PyTorch's pin-memory
// thread crashed in the DataLoader).
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* ptr) {
  if (attr == nullptr) return set_error(cudaErrorInvalidValue);
  intercept::write_pointer_attributes(attr, pointer_attributes(ptr),
                                      intercept::linked_cudart_major());
  return cudaSuccess;
}

cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device,
                           size_t count) {
  ApiCall call;
  return peer_copy(dst, dst_device, src, src_device, count, resolve_stream(nullptr, false), true);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                size_t count, cudaStream_t stream) {
  ApiCall call;
  return peer_copy(dst, dst_device, src, src_device, count, resolve_stream(stream, false), false);
}

cudaError_t cudaGetSymbolAddress(void** dev, const void* symbol) {
  auto sym = find_symbol(symbol);
  if (!sym || dev == nullptr) return set_error(cudaErrorInvalidSymbol);
  *dev = reinterpret_cast<void*>(sym->address);
  return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  auto sym = find_symbol(symbol);
  if (!sym || size == nullptr) return set_error(cudaErrorInvalidSymbol);
  *size = sym->size;
  return cudaSuccess;
}

}  // extern "C"

PHANTORA_DEFINE_PT(cudaMemcpy, _ptds,
                   (void* dst, const void* src, size_t count, cudaMemcpyKind kind),
                   (dst, src, count, kind))
PHANTORA_DEFINE_PT(cudaMemcpyAsync, _ptsz,
                   (void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                    cudaStream_t stream),
                   (dst, src, count, kind, stream))
PHANTORA_DEFINE_PT(cudaMemcpy2D, _ptds,
                   (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, cudaMemcpyKind kind),
                   (dst, dpitch, src, spitch, width, height, kind))
PHANTORA_DEFINE_PT(cudaMemcpy2DAsync, _ptsz,
                   (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, cudaMemcpyKind kind, cudaStream_t stream),
                   (dst, dpitch, src, spitch, width, height, kind, stream))
PHANTORA_DEFINE_PT(cudaMemset, _ptds, (void* dst, int value, size_t count), (dst, value, count))
PHANTORA_DEFINE_PT(cudaMemsetAsync, _ptsz,
                   (void* dst, int value, size_t count, cudaStream_t stream),
                   (dst, value, count, stream))
PHANTORA_DEFINE_PT(cudaMemset2D, _ptds,
                   (void* dst, size_t pitch, int value, size_t width, size_t height),
                   (dst, pitch, value, width, height))
PHANTORA_DEFINE_PT(cudaMemset2DAsync, _ptsz,
                   (void* dst, size_t pitch, int value, size_t width, size_t height,
                    cudaStream_t stream),
                   (dst, pitch, value, width, height, stream))
PHANTORA_DEFINE_PT(cudaMemcpyToSymbol, _ptds,
                   (const void* symbol, const void* src, size_t count, size_t offset,
                    cudaMemcpyKind kind),
                   (symbol, src, count, offset, kind))
PHANTORA_DEFINE_PT(cudaMemcpyFromSymbol, _ptds,
                   (void* dst, const void* symbol, size_t count, size_t offset,
                    cudaMemcpyKind kind),
                   (dst, symbol, count, offset, kind))
PHANTORA_DEFINE_PT(cudaMemcpyToSymbolAsync, _ptsz,
                   (const void* symbol, const void* src, size_t count, size_t offset,
                    cudaMemcpyKind kind, cudaStream_t stream),
                   (symbol, src, count, offset, kind, stream))
PHANTORA_DEFINE_PT(cudaMemcpyFromSymbolAsync, _ptsz,
                   (void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                    cudaStream_t stream),
                   (dst, symbol, count, offset, kind, stream))
