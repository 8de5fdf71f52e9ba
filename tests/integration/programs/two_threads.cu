// Per-thread host timelines and the clocks a C++ program reads (docs/time.md).
// Thread B launches a long kernel on its stream, tells thread A it has (a condition variable),
// then waits for its stream. Thread A, released by B, launches ten short kernels on another
// stream and waits for them. On a GPU A's work ends after about 1 ms, long before B's kernel;
// B's wait must not move A's clock. Every time printed is read with std::chrono (steady_clock,
// system_clock) from the start of main, so the test also checks that C++ clocks are simulated.
// Then the main thread joins both (its clock: the later of theirs), sleeps in a loop until a
// deadline 50 ms on, and waits 20 ms on a condition variable nobody signals: both must end
// exactly at their deadlines in simulated time, in every --cpu-time mode. Last, a busy-wait
// on the clock until a deadline 2 ms on must end there, and 2,000 clock reads each after 100 us
// of real CPU work (a program that reads the clock while it computes, not a spin) must not move
// the clock in zero mode, however long they take in real time.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "check.cuh"

__global__ void long_k(float* p) {
  p[threadIdx.x] += 1;
}
__global__ void short_k(float* p) {
  p[threadIdx.x] *= 2;
}

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

int main() {
  const Clock::time_point t0 = Clock::now();
  const auto wall0 = std::chrono::system_clock::now();
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));
  std::mutex mu;
  std::condition_variable cv;
  bool launched = false;
  double a_done = 0, b_done = 0, a_kernels = 0;

  std::thread b([&] {
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    long_k<<<1, 32, 0, s>>>(d);
    {
      std::lock_guard lock(mu);
      launched = true;
    }
    cv.notify_one();
    CHECK(cudaStreamSynchronize(s));
    b_done = us_since(t0);
  });
  std::thread a([&] {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return launched; });
    }
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, s));
    for (int i = 0; i < 10; ++i) short_k<<<1, 32, 0, s>>>(d);
    CHECK(cudaEventRecord(stop, s));
    CHECK(cudaStreamSynchronize(s));
    a_done = us_since(t0);
    a_kernels = elapsed_us(start, stop);
  });
  a.join();
  b.join();
  std::printf("a_done_us %.3f\n", a_done);
  std::printf("a_kernels_us %.3f\n", a_kernels);
  std::printf("b_done_us %.3f\n", b_done);
  std::printf("joined_us %.3f\n", us_since(t0));

  // A deadline loop: sleeps until 50 ms from now, in 10 ms steps.
  const Clock::time_point sleep_from = Clock::now();
  const Clock::time_point deadline = sleep_from + std::chrono::milliseconds(50);
  int naps = 0;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ++naps;
  }
  std::printf("sleep_loop_us %.3f\n", us_since(sleep_from));
  std::printf("naps %d\n", naps);

  // A timed wait that times out ends at its deadline.
  const Clock::time_point wait_from = Clock::now();
  {
    std::unique_lock lock(mu);
    const bool woken =
        cv.wait_until(lock, wait_from + std::chrono::milliseconds(20), [] { return false; });
    std::printf("woken %d\n", woken ? 1 : 0);
  }
  std::printf("timed_wait_us %.3f\n", us_since(wait_from));

  // Busy-waiting on the clock until a deadline.
  const Clock::time_point spin_from = Clock::now();
  const Clock::time_point spin_deadline = spin_from + std::chrono::milliseconds(2);
  long spins = 0;
  while (Clock::now() < spin_deadline) ++spins;
  std::printf("spin_loop_us %.3f\n", us_since(spin_from));

  // Work between reads: each read follows 100 us of real CPU time (CPU-time clocks are real).
  const Clock::time_point work_from = Clock::now();
  for (int i = 0; i < 2000; ++i) {
    cpu_work_us(100);
    (void)Clock::now();
  }
  std::printf("work_reads_us %.3f\n", us_since(work_from));
  // The wall clock moves with the same simulated time.
  const double wall_us =
      std::chrono::duration<double, std::micro>(std::chrono::system_clock::now() - wall0).count();
  std::printf("wall_minus_steady_us %.3f\n", wall_us - us_since(t0));
  CHECK(cudaFree(d));
  return 0;
}
