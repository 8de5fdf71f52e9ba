#include "real_clock.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <iterator>

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

int64_t thread_demand_ns(int tid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return -1;
  unsigned long long run = 0, wait = 0;
  const int n = std::fscanf(f, "%llu %llu", &run, &wait);
  std::fclose(f);
  return n == 2 ? static_cast<int64_t>(run + wait) : -1;
}

bool thread_runnable(int tid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // "TID (comm) S ...": the command may hold spaces and parentheses; the state follows the last
  // ')'.
  const char* close = std::strrchr(buf, ')');
  return close != nullptr && close[1] == ' ' && close[2] == 'R';
}

namespace {
// The system calls that wait for another process's doing: input on a descriptor (a pipe, a
// socket, a terminal), a connection, a child's end. Not futexes (another thread of this process
// may be what the waiter waits for), sleeps or polls (the shim sees those).
constexpr long kWaitsForIo[] = {
    SYS_read,     SYS_readv,  SYS_pread64, SYS_preadv,  SYS_recvfrom, SYS_recvmsg,
    SYS_recvmmsg, SYS_accept, SYS_accept4, SYS_connect, SYS_wait4,    SYS_waitid,
};
}  // namespace

bool thread_waits_for_io(int tid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  long nr = -1;  // "running" and "-1 ..." (not in a system call) leave it so
  const int n = std::fscanf(f, "%ld", &nr);
  std::fclose(f);
  if (n != 1) return false;
  return std::find(std::begin(kWaitsForIo), std::end(kWaitsForIo), nr) != std::end(kWaitsForIo);
}

}  // namespace phantora::shim
