// A 32-bit word that threads of the shim sleep on until it changes, on Linux futexes directly.
//
// The shim's own hand-offs (a reply from the daemon to the thread that asked, a collective's
// result to a thread reading its buffer) do not use glibc's condition variables: under load, with
// sixteen ranks on two cores, a pthread_cond_broadcast now and then did not wake a thread that
// was already waiting (the reply stayed in the map and the thread slept on: made a 100 ms timed
// wait, it timed out with its reply there although the broadcast had come 40-90 ms earlier, many
// times a run), and a run hung once in ten or twenty (docs/reliability.md, finding 9).
// A futex wait sleeps only while the word still holds the value the thread last saw, so a change
// made before the thread sleeps is never missed.
#pragma once

#include <atomic>
#include <cstdint>

namespace phantora::shim {

class FutexWord {
 public:
  uint32_t load() const { return value_.load(std::memory_order_acquire); }
  // Sleeps while the word is `seen` (returns at once if it is not any more).
  void wait_while(uint32_t seen) const;
  // The same for `timeout_ns` of real time at most. Returns false when a signal cut it short.
  bool wait_while_for(uint32_t seen, int64_t timeout_ns) const;
  // Moves the word on (release) and wakes every thread sleeping on it.
  void bump_and_wake_all();

 private:
  std::atomic<uint32_t> value_{0};
};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              std::atomic<uint32_t>::is_always_lock_free);

}  // namespace phantora::shim
