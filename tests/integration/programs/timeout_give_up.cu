// A timeout that gives up waiting for the rest of the process (docs/time.md, "Sleeps and timed
// waits") wakes early at its own clock; it never runs ahead. Run with
// PHANTORA_CATCH_UP_LIMIT_MS=200 in zero mode: thread W sleeps 10 ms and then posts a
// semaphore. The main thread spins 1 s of real CPU time (no simulated time in zero mode),
// trying the semaphore as it goes; its clock stands at 0, so W's sleep, over in real time after
// 10 ms, waits for it and gives up every 200 ms, sleeping again for what is left. W must not post
// while main is at 0 (a post at 10 ms would put main at 10 ms in the middle of its spin). After
// the spin main launches a kernel, then waits for the post: W's sleep then ends at 10 ms.
// W also counts how often it was woken while it waited (its voluntary context switches): the
// catch-up's slices grow from 1 ms to 32 ms, so a second behind costs tens of wake-ups, not a
// thousand.
#include <semaphore.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "check.cuh"

__global__ void tiny(float* p) {
  p[threadIdx.x] += 1;
}

using Clock = std::chrono::steady_clock;

// The calling thread's voluntary context switches so far (/proc/thread-self/status).
long voluntary_switches() {
  std::FILE* f = std::fopen("/proc/thread-self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long n = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1) break;
  }
  std::fclose(f);
  return n;
}

int main() {
  const Clock::time_point t0 = Clock::now();
  auto us_since = [&] {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));
  sem_t posted;
  sem_init(&posted, 0, 0);
  double w_posted_us = 0;
  long w_wakeups = 0;
  double w_waited_real_ms = 0;
  std::thread w([&] {
    const long before = voluntary_switches();
    timespec real0, real1;  // the system call itself is not interposed: real time
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &real0);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &real1);
    w_wakeups = voluntary_switches() - before;
    w_waited_real_ms = (real1.tv_sec - real0.tv_sec) * 1e3 + (real1.tv_nsec - real0.tv_nsec) / 1e6;
    w_posted_us = us_since();
    sem_post(&posted);
  });

  bool during_spin = false;
  timespec c0, c;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  do {
    if (sem_trywait(&posted) == 0) {
      during_spin = true;
      break;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
  } while ((c.tv_sec - c0.tv_sec) * 1000000000L + (c.tv_nsec - c0.tv_nsec) < 1000000000L);
  const double after_spin_us = us_since();
  tiny<<<1, 32>>>(d);
  if (!during_spin) sem_wait(&posted);
  const double after_post_us = us_since();
  w.join();
  std::printf("posted_during_spin %d\n", during_spin ? 1 : 0);
  std::printf("after_spin_us %.3f\n", after_spin_us);
  std::printf("w_posted_us %.3f\n", w_posted_us);
  std::printf("after_post_us %.3f\n", after_post_us);
  std::printf("w_wakeups %ld\n", w_wakeups);
  std::printf("w_waited_real_ms %.1f\n", w_waited_real_ms);
  CHECK(cudaFree(d));
  return 0;
}
