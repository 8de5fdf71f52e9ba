#include "real_clock.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace phantora::shim {

int real_clock_gettime(clockid_t clock, timespec* ts) {
  using Fn = int (*)(clockid_t, timespec*);
  static std::atomic<Fn> real{nullptr};
  Fn fn = real.load(std::memory_order_relaxed);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "clock_gettime"));
    // Without a next definition (a static C library), ask the kernel.
    if (fn == nullptr) return static_cast<int>(syscall(SYS_clock_gettime, clock, ts));
    real.store(fn, std::memory_order_relaxed);
  }
  return fn(clock, ts);
}

}  // namespace phantora::shim
