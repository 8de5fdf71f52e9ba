// A timeout that gives up waiting for the rest of the process (docs/time.md, "Sleeps and timed
// waits") wakes early at its own clock; it never runs ahead. Run with
// PHANTORA_CATCH_UP_LIMIT_MS=200 in zero mode: thread W sleeps 10 ms and then posts a
// semaphore. The main thread spins 1 s of real CPU time (no simulated time in zero mode),
// trying the semaphore as it goes; its clock stands at 0, so W's sleep, over in real time after
// 10 ms, waits for it and gives up every 200 ms, sleeping again for what is left. W must not post
// while main is at 0 (a post at 10 ms would put main at 10 ms in the middle of its spin). After
// the spin main launches a kernel, then waits for the post: W's sleep then ends at 10 ms.
#include <semaphore.h>
#include <time.h>

#include <chrono>
#include <thread>

#include "check.cuh"

__global__ void tiny(float* p) {
  p[threadIdx.x] += 1;
}

using Clock = std::chrono::steady_clock;

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
  std::thread w([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
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
  CHECK(cudaFree(d));
  return 0;
}
