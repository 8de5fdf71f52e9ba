// Virtual device memory: unique, stable, aligned addresses from a reserved range that is never
// committed (PROT_NONE, MAP_NORESERVE), so a host dereference of a device pointer faults loudly
// instead of corrupting memory. Capacity is enforced per device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace phantora::shim {

class AddressSpace {
 public:
  static AddressSpace& get();

  // Returns nullptr when the device's capacity would be exceeded.
  void* allocate(int device, uint64_t bytes);
  // Returns the size freed, or nullopt for an address not returned by allocate().
  std::optional<uint64_t> release(void* ptr);

  struct Owner {
    int device;
    uint64_t base;  // start of the allocation containing the address
    uint64_t size;
  };
  // The allocation that contains `ptr`, if any.
  std::optional<Owner> owner(const void* ptr) const;
  bool contains(const void* ptr) const;

  // Virtual-memory management (the driver's cuMemAddressReserve / cuMemCreate / cuMemMap, behind
  // PyTorch's expandable segments). A reservation takes addresses but no capacity; physical
  // memory is counted by commit() without an address of its own, and mapped into a reservation
  // by the caller. owner() of an address inside a reservation names the whole reservation.
  // Returns nullptr when the device's address range is exhausted.
  void* reserve(int device, uint64_t bytes, uint64_t alignment);
  // Returns false for an address not returned by reserve().
  bool unreserve(void* ptr);
  // Counts `bytes` of physical memory against the device's capacity; false past the capacity.
  bool commit(int device, uint64_t bytes);
  void uncommit(int device, uint64_t bytes);

  uint64_t used(int device) const;
  void set_capacity(uint64_t bytes_per_device);
  uint64_t capacity() const { return capacity_; }

  // Device variables (__device__ / __constant__) get addresses from a region of their own.
  uint64_t symbol_region() const;

  static constexpr uint64_t kAlignment = 512;

 private:
  AddressSpace();
  uint64_t device_base(int device) const;

  mutable std::mutex mu_;
  uintptr_t base_ = 0;
  uint64_t stride_ = 0;  // reserved bytes per device
  uint64_t capacity_ = 0;
  struct Device {
    uint64_t used = 0;
    uint64_t bump = 0;                       // high-water offset
    std::map<uint64_t, uint64_t> free_list;  // offset -> size, coalesced
  };
  std::map<int, Device> devices_;
  struct Live {
    int device;
    uint64_t size;
    bool reserved;  // from reserve(): takes addresses, not capacity
  };
  void* take_range_locked(int device, Device& d, uint64_t size, uint64_t alignment);
  std::optional<uint64_t> give_back_locked(void* ptr, bool reserved);
  std::map<uint64_t, Live> live_;  // address -> allocation
};

}  // namespace phantora::shim
