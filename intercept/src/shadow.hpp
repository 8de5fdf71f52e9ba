// The shadow store: the bytes that small host-to-device copies and memsets wrote into virtual
// device memory, so that reading them back (a `.item()` of a host-written tensor, a flag copied
// to the GPU and back) returns what was written. Kernels are not executed, so anything they
// "wrote" reads back as zeros. Large writes are not stored; they discard what they cover.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace phantora::shim {

class ShadowStore {
 public:
  static ShadowStore& get();

  // Largest single write whose bytes are kept.
  static constexpr uint64_t kMaxWrite = 1 << 20;
  // Upper bound on the bytes kept per process; past it, writes are dropped like large ones.
  static constexpr uint64_t kMaxTotal = 256ull << 20;

  void write(uint64_t addr, const void* src, uint64_t bytes);
  void fill(uint64_t addr, uint8_t value, uint64_t bytes);
  // Copies stored bytes into dst; bytes never written read as zero. Where dst already holds
  // zeros it is only read, not written: a fresh host buffer (DeepSpeed stages a whole parameter
  // partition through one) is backed by the kernel's zero page until written, so a large
  // device-to-host copy of unknown bytes into it costs no host memory.
  void read(uint64_t addr, void* dst, uint64_t bytes) const;
  void copy(uint64_t dst, uint64_t src, uint64_t bytes);
  void discard(uint64_t addr, uint64_t bytes);
  // Whether any byte of [addr, addr + bytes) lies on a stored page: something a host write or a
  // computed kernel left there (bytes never written, or discarded, are on no page).
  bool stores_any(uint64_t addr, uint64_t bytes) const;

 private:
  static constexpr uint64_t kPage = 4096;
  using Page = std::array<uint8_t, kPage>;
  Page* page_for_write(uint64_t page);
  void discard_locked(uint64_t addr, uint64_t bytes);

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
};

}  // namespace phantora::shim
