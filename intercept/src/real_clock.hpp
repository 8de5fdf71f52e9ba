// The machine's own clocks, for the shim's timeouts and measurements: libphantora.so interposes
// clock_gettime (api_host_clocks.cpp), so its own code must not call it through the symbol.
#pragma once

#include <time.h>

#include <cstdint>

namespace phantora::shim {

// clock_gettime of the C library, whatever the process sees.
int real_clock_gettime(clockid_t clock, timespec* ts);

inline int64_t real_ns(clockid_t clock) {
  timespec ts{};
  real_clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
inline int64_t real_monotonic_ns() {
  return real_ns(CLOCK_MONOTONIC);
}
inline int64_t thread_cpu_ns() {
  return real_ns(CLOCK_THREAD_CPUTIME_ID);
}

// Time thread `tid` of this process has spent running plus waiting on a run queue
// (/proc/self/task/TID/schedstat), -1 if unreadable: a thread starved of CPU on an
// oversubscribed machine still shows demand, one blocked shows none.
int64_t thread_demand_ns(int tid);

// Whether thread `tid` of this process is running or waiting on a run queue now (state R in
// /proc/self/task/TID/stat). The run-queue wait in schedstat is only counted once the thread
// runs again, so on a machine loaded far beyond its cores a runnable thread can show no demand
// for a whole stall window; its state still says it is not blocked.
bool thread_runnable(int tid);

// Whether thread `tid` of this process is blocked in a system call that waits for input from a
// file descriptor or for a child process (read, recv, accept, connect, wait4, ...:
// /proc/self/task/TID/syscall), as opposed to a futex, a sleep or a poll, or running. False
// where unreadable.
bool thread_waits_for_io(int tid);

}  // namespace phantora::shim
