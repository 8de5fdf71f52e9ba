// A thread that waits on a timeout over and over (PyTorch's NCCL watchdog) must not run ahead
// while the thread doing the GPU work waits for threads it has just started (the autograd engine
// starts its device threads at the first backward and waits until each has said it runs)
// (docs/time.md, "Sleeps and timed waits"). Threads that have made no CUDA call yet do not bound
// the simulation, and the main thread waits for them: unless a new thread counts from its
// creation, at its parent's clock, nothing is behind the watcher's deadline while they start,
// and its timeouts end at their deadlines every 10 ms of real time. The main thread runs a 1 ms
// kernel, starts four threads that each work 300 ms of real CPU time before saying they run,
// runs a second kernel, stops and joins everything, and prints the times.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "check.cuh"

__global__ void ms_k(float* p) {
  p[threadIdx.x] += 1;
}

using Clock = std::chrono::steady_clock;

int main() {
  const Clock::time_point t0 = Clock::now();
  auto us = [&] { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); };
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  long timeouts = 0;

  std::thread watcher([&] {
    // A CUDA call (its answer, ready or not, does not matter): the watcher is a thread that does
    // CUDA work, as the watchdog queries events.
    const cudaError_t ready = cudaStreamQuery(0);
    if (ready != cudaSuccess && ready != cudaErrorNotReady) CHECK(ready);
    std::unique_lock lock(mu);
    while (!stop) {
      if (cv.wait_for(lock, std::chrono::milliseconds(10)) == std::cv_status::timeout) ++timeouts;
    }
  });

  ms_k<<<1, 32>>>(d);
  CHECK(cudaStreamSynchronize(0));

  std::mutex start_mu;
  std::condition_variable started_cv, quit_cv;
  int started = 0;
  bool quit = false;
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      cpu_work_us(300000);
      std::unique_lock lock(start_mu);
      ++started;
      started_cv.notify_all();
      quit_cv.wait(lock, [&] { return quit; });
    });
  }
  {
    std::unique_lock lock(start_mu);
    started_cv.wait(lock, [&] { return started == 4; });
  }
  const double after_start_us = us();

  ms_k<<<1, 32>>>(d);
  CHECK(cudaStreamSynchronize(0));
  const double main_us = us();
  {
    std::lock_guard lock(start_mu);
    quit = true;
  }
  quit_cv.notify_all();
  for (std::thread& w : workers) w.join();
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_one();
  watcher.join();
  std::printf("after_start_us %.3f\n", after_start_us);
  std::printf("main_done_us %.3f\n", main_us);
  std::printf("joined_us %.3f\n", us());
  std::printf("timeouts %ld\n", timeouts);
  CHECK(cudaFree(d));
  return 0;
}
