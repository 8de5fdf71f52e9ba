#include "address_space.hpp"

#include <sys/mman.h>

#include <algorithm>

#include "phantora/protocol.hpp"
#include "runtime.hpp"

namespace phantora::shim {
namespace {

// 2 TiB of address space per device: more than any GPU's memory, and 64 devices fit in the
// 47-bit user address space. Reserving costs no memory.
constexpr uint64_t kStride = 2ull << 40;
constexpr int kReservedDevices = 32;

uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

AddressSpace& AddressSpace::get() {
  static AddressSpace* instance = new AddressSpace();
  return *instance;
}

AddressSpace::AddressSpace() : stride_(kStride) {
  void* p = mmap(nullptr, kStride * kReservedDevices, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) fatal("cannot reserve the virtual device address range");
  base_ = reinterpret_cast<uintptr_t>(p);
}

void AddressSpace::set_capacity(uint64_t bytes) {
  std::lock_guard lock(mu_);
  capacity_ = bytes;
}

uint64_t AddressSpace::device_base(int device) const {
  return base_ + stride_ * static_cast<uint64_t>(device);
}

void* AddressSpace::allocate(int device, uint64_t bytes) {
  if (device < 0 || device >= kReservedDevices - 1) return nullptr;
  const uint64_t size = align_up(bytes == 0 ? 1 : bytes, kAlignment);
  std::lock_guard lock(mu_);
  Device& d = devices_[device];
  if (d.used + size > capacity_) return nullptr;
  void* p = take_range_locked(device, d, size, kAlignment);
  if (p == nullptr) return nullptr;
  d.used += size;
  live_[reinterpret_cast<uint64_t>(p)] = Live{device, size, false};
  return p;
}

void* AddressSpace::reserve(int device, uint64_t bytes, uint64_t alignment) {
  if (device < 0 || device >= kReservedDevices - 1 || bytes == 0) return nullptr;
  alignment = std::max(alignment, kAlignment);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  const uint64_t size = align_up(bytes, kAlignment);
  std::lock_guard lock(mu_);
  Device& d = devices_[device];
  void* p = take_range_locked(device, d, size, alignment);
  if (p != nullptr) live_[reinterpret_cast<uint64_t>(p)] = Live{device, size, true};
  return p;
}

// First fit from the free list (honouring the alignment, returning the cut-off head and tail to
// the list), else extend the high-water mark.
void* AddressSpace::take_range_locked(int device, Device& d, uint64_t size, uint64_t alignment) {
  const uint64_t base = device_base(device);
  for (auto it = d.free_list.begin(); it != d.free_list.end(); ++it) {
    const uint64_t start = align_up(base + it->first, alignment) - base;
    const uint64_t end = it->first + it->second;
    if (start + size > end) continue;
    const uint64_t head = start - it->first;
    const uint64_t tail = end - (start + size);
    const uint64_t block = it->first;
    d.free_list.erase(it);
    if (head > 0) d.free_list[block] = head;
    if (tail > 0) d.free_list[start + size] = tail;
    return reinterpret_cast<void*>(base + start);
  }
  const uint64_t start = align_up(base + d.bump, alignment) - base;
  if (start + size > stride_) return nullptr;
  if (start > d.bump) d.free_list[d.bump] = start - d.bump;
  d.bump = start + size;
  return reinterpret_cast<void*>(base + start);
}

std::optional<uint64_t> AddressSpace::release(void* ptr) {
  std::lock_guard lock(mu_);
  return give_back_locked(ptr, false);
}

bool AddressSpace::unreserve(void* ptr) {
  std::lock_guard lock(mu_);
  return give_back_locked(ptr, true).has_value();
}

std::optional<uint64_t> AddressSpace::give_back_locked(void* ptr, bool reserved) {
  auto it = live_.find(reinterpret_cast<uint64_t>(ptr));
  if (it == live_.end() || it->second.reserved != reserved) return std::nullopt;
  const Live l = it->second;
  live_.erase(it);
  Device& d = devices_[l.device];
  if (!reserved) d.used -= l.size;
  uint64_t offset = reinterpret_cast<uint64_t>(ptr) - device_base(l.device);
  uint64_t length = l.size;
  // Coalesce with neighbours so that large blocks can be reused.
  auto next = d.free_list.lower_bound(offset);
  if (next != d.free_list.end() && offset + length == next->first) {
    length += next->second;
    next = d.free_list.erase(next);
  }
  if (next != d.free_list.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      length += prev->second;
      d.free_list.erase(prev);
    }
  }
  if (offset + length == d.bump) {
    d.bump = offset;
  } else {
    d.free_list[offset] = length;
  }
  return l.size;
}

bool AddressSpace::commit(int device, uint64_t bytes) {
  std::lock_guard lock(mu_);
  Device& d = devices_[device];
  if (d.used + bytes > capacity_) return false;
  d.used += bytes;
  return true;
}

void AddressSpace::uncommit(int device, uint64_t bytes) {
  std::lock_guard lock(mu_);
  Device& d = devices_[device];
  d.used -= std::min(d.used, bytes);
}

std::optional<AddressSpace::Owner> AddressSpace::owner(const void* ptr) const {
  const auto addr = reinterpret_cast<uint64_t>(ptr);
  std::lock_guard lock(mu_);
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return std::nullopt;
  --it;
  if (addr >= it->first + it->second.size) return std::nullopt;
  return Owner{it->second.device, it->first, it->second.size};
}

uint64_t AddressSpace::symbol_region() const {
  return device_base(kReservedDevices - 1);
}

bool AddressSpace::contains(const void* ptr) const {
  const auto addr = reinterpret_cast<uint64_t>(ptr);
  return addr >= base_ && addr < base_ + stride_ * kReservedDevices;
}

uint64_t AddressSpace::used(int device) const {
  std::lock_guard lock(mu_);
  auto it = devices_.find(device);
  return it == devices_.end() ? 0 : it->second.used;
}

}  // namespace phantora::shim
