#include "address_space.hpp"

#include <sys/mman.h>

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
  uint64_t offset = 0;
  // First fit from the free list, else extend the high-water mark.
  auto it = d.free_list.begin();
  for (; it != d.free_list.end(); ++it) {
    if (it->second >= size) break;
  }
  if (it != d.free_list.end()) {
    offset = it->first;
    const uint64_t left = it->second - size;
    d.free_list.erase(it);
    if (left > 0) d.free_list[offset + size] = left;
  } else {
    offset = d.bump;
    d.bump += size;
  }
  d.used += size;
  const uint64_t addr = device_base(device) + offset;
  live_[addr] = {device, size};
  return reinterpret_cast<void*>(addr);
}

std::optional<uint64_t> AddressSpace::release(void* ptr) {
  std::lock_guard lock(mu_);
  auto it = live_.find(reinterpret_cast<uint64_t>(ptr));
  if (it == live_.end()) return std::nullopt;
  const auto [device, size] = it->second;
  live_.erase(it);
  Device& d = devices_[device];
  d.used -= size;
  uint64_t offset = reinterpret_cast<uint64_t>(ptr) - device_base(device);
  uint64_t length = size;
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
  return size;
}

std::optional<AddressSpace::Owner> AddressSpace::owner(const void* ptr) const {
  const auto addr = reinterpret_cast<uint64_t>(ptr);
  std::lock_guard lock(mu_);
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return std::nullopt;
  --it;
  if (addr >= it->first + it->second.second) return std::nullopt;
  return Owner{it->second.first, it->first, it->second.second};
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
