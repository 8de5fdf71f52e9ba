#include "payload_inbox.hpp"

namespace phantora::shim {

PayloadInbox& PayloadInbox::get() {
  static PayloadInbox* inbox = new PayloadInbox();
  return *inbox;
}

void PayloadInbox::expect(uint64_t addr, uint64_t bytes) {
  std::lock_guard lock(mu_);
  expected_.emplace(addr, bytes);
}

void PayloadInbox::arrived(uint64_t addr) {
  {
    std::lock_guard lock(mu_);
    // Results for one address arrive in the order their collectives were issued.
    auto it = expected_.find(addr);
    if (it != expected_.end()) expected_.erase(it);
  }
  arrivals_.bump_and_wake_all();
}

bool PayloadInbox::overlaps_locked(uint64_t addr, uint64_t bytes) const {
  for (const auto& [start, length] : expected_) {
    if (start < addr + bytes && addr < start + length) return true;
  }
  return false;
}

bool PayloadInbox::overlaps(uint64_t addr, uint64_t bytes) const {
  std::lock_guard lock(mu_);
  return !expected_.empty() && overlaps_locked(addr, bytes);
}

void PayloadInbox::wait_for(uint64_t addr, uint64_t bytes) {
  for (;;) {
    // Read before looking, so that an arrival after the look moves it on and is not slept over.
    const uint32_t seen = arrivals_.load();
    {
      std::lock_guard lock(mu_);
      if (!overlaps_locked(addr, bytes)) return;
    }
    arrivals_.wait_while(seen);
  }
}

}  // namespace phantora::shim
