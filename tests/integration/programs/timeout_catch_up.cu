// A background thread that wakes on a timeout over and over (as PyTorch's NCCL watchdog waits
// 1 s at a time) must not run ahead of the thread doing the GPU work (docs/time.md, "Sleeps and
// timed waits"). The main thread runs 50 steps of one 1 ms kernel and a wait, each after 10 ms of
// real CPU work that costs no simulated time in zero mode: 50 ms of simulated time in about
// 0.5 s of real time. The watcher waits on a condition variable 1 ms at a time, so in real time
// it times out hundreds of times; in simulated time it may not pass the main thread. At the end
// main tells the watcher to stop, joins it (its clock: the later of both) and prints the times.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "check.cuh"

__global__ void ms_k(float* p) {
  p[threadIdx.x] += 1;
}

using Clock = std::chrono::steady_clock;

int main() {
  const Clock::time_point t0 = Clock::now();
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  long timeouts = 0;
  double watcher_end_us = 0;

  std::thread watcher([&] {
    std::unique_lock lock(mu);
    while (!stop) {
      if (cv.wait_for(lock, std::chrono::milliseconds(1)) == std::cv_status::timeout) ++timeouts;
    }
    watcher_end_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  });

  for (int i = 0; i < 50; ++i) {
    cpu_work_us(10000);
    ms_k<<<1, 32>>>(d);
    CHECK(cudaStreamSynchronize(0));
  }
  const double main_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_one();
  watcher.join();
  std::printf("main_done_us %.3f\n", main_us);
  std::printf("watcher_end_us %.3f\n", watcher_end_us);
  std::printf("joined_us %.3f\n",
              std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  std::printf("timeouts %ld\n", timeouts);
  CHECK(cudaFree(d));
  return 0;
}
