#include "futex_word.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace phantora::shim {
namespace {

long futex(const std::atomic<uint32_t>* word, int op, uint32_t value) {
  // The kernel reads the word itself; a lock-free atomic of 32 bits is that word.
  return syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), op, value, nullptr, nullptr,
                 0);
}

}  // namespace

void FutexWord::wait_while(uint32_t seen) const {
  // EAGAIN: the word had changed already; EINTR: a signal. Either way the caller looks again.
  while (value_.load(std::memory_order_acquire) == seen) futex(&value_, FUTEX_WAIT_PRIVATE, seen);
}

void FutexWord::bump_and_wake_all() {
  value_.fetch_add(1, std::memory_order_release);
  futex(&value_, FUTEX_WAKE_PRIVATE, INT_MAX);
}

}  // namespace phantora::shim
