// Results of small collectives on their way from the daemon into this process's receive
// buffers (wire::FrameType::kPayload). A read of device memory that such a result will write
// waits for it, so `.item()` or a copy to the host after a broadcast sees the broadcast value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "futex_word.hpp"

namespace phantora::shim {

class PayloadInbox {
 public:
  static PayloadInbox& get();

  // A collective was sent that will write `bytes` at `addr`.
  void expect(uint64_t addr, uint64_t bytes);
  // The reader thread received it: the bytes are in the shadow store now.
  void arrived(uint64_t addr);
  bool overlaps(uint64_t addr, uint64_t bytes) const;
  // Blocks until nothing expected overlaps [addr, addr + bytes).
  void wait_for(uint64_t addr, uint64_t bytes);

 private:
  bool overlaps_locked(uint64_t addr, uint64_t bytes) const;
  mutable std::mutex mu_;
  FutexWord arrivals_;                          // moves on at every arrival: a waiter looks again
  std::multimap<uint64_t, uint64_t> expected_;  // address -> length
};

}  // namespace phantora::shim
