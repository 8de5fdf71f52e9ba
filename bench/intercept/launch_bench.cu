// What a rank pays per asynchronous call with the shim preloaded: wall-clock nanoseconds per
// kernel launch, through cudaLaunchKernel and through the <<<>>> stub (which nvcc 13 turns
// into __cudaLaunchKernel), measured in the process itself, against a plain function call
// that the compiler cannot inline. Run under `phantora run` (see run_launch_bench.sh).
// Usage: launch_bench [launches per round] [rounds]
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

__global__ void empty_kernel(int i) {
  (void)i;
}

namespace {

__attribute__((noinline)) int plain_call(int i) {
  asm volatile("" ::: "memory");  // keep the call and its body
  return i + 1;
}

// The real monotonic clock, read by the system call itself: under `phantora run` the C
// library's clock_gettime (behind std::chrono::steady_clock) is the thread's simulated host
// clock (docs/time.md), which is not what this benchmark measures.
struct Clock {
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<Clock, duration>;
  static time_point now() {
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return time_point(duration(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec));
  }
};

double ns_per(Clock::duration d, long n) {
  return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(n);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorName(e));
    std::exit(1);
  }
}

}  // namespace

template <typename Launch>
double burst_ns(cudaStream_t s, long bursts, long burst, Launch launch) {
  // Bursts small enough for the socket buffer: the time is the shim's own work (record, batch,
  // an occasional send), not the daemon's. The daemon drains during the untimed sync.
  Clock::duration total{};
  for (long b = 0; b < bursts; ++b) {
    const auto t0 = Clock::now();
    for (long i = 0; i < burst; ++i) launch(static_cast<int>(i));
    total += Clock::now() - t0;
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }
  return ns_per(total, bursts * burst);
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 200000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const long burst = argc > 3 ? std::atol(argv[3]) : 500;
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  // Warm up: connection, kernel registration and name interning happen on first use.
  empty_kernel<<<1, 1, 0, s>>>(0);
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");

  auto api = [s](int i) {
    void* args[] = {&i};
    cudaLaunchKernel(reinterpret_cast<const void*>(&empty_kernel), dim3(1), dim3(1), args, 0, s);
  };
  auto stub = [s](int i) { empty_kernel<<<1, 1, 0, s>>>(i); };

  double best_api = 1e30, best_stub = 1e30, best_plain = 1e30;
  double burst_api = 1e30, burst_stub = 1e30;
  for (int r = 0; r < rounds; ++r) {
    int x = 0;
    auto t0 = Clock::now();
    for (long i = 0; i < n; ++i) x = plain_call(x);
    auto t1 = Clock::now();
    best_plain = std::min(best_plain, ns_per(t1 - t0, n));
    if (x != n) return 3;

    // Sustained: n launches in a row; once the socket buffer is full the rank goes at the
    // daemon's pace.
    t0 = Clock::now();
    for (long i = 0; i < n; ++i) api(static_cast<int>(i));
    t1 = Clock::now();
    best_api = std::min(best_api, ns_per(t1 - t0, n));
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    t0 = Clock::now();
    for (long i = 0; i < n; ++i) stub(static_cast<int>(i));
    t1 = Clock::now();
    best_stub = std::min(best_stub, ns_per(t1 - t0, n));
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");

    burst_api = std::min(burst_api, burst_ns(s, 100, burst, api));
    burst_stub = std::min(burst_stub, burst_ns(s, 100, burst, stub));
  }
  check(cudaGetLastError(), "launch");
  std::printf("plain_call_ns %.2f\n", best_plain);
  std::printf("burst_cudaLaunchKernel_ns %.2f\n", burst_api);
  std::printf("burst_triple_chevron_ns %.2f\n", burst_stub);
  std::printf("sustained_cudaLaunchKernel_ns %.2f\n", best_api);
  std::printf("sustained_triple_chevron_ns %.2f\n", best_stub);
  std::printf("launches %ld rounds %d burst %ld\n", n, rounds, burst);
  return 0;
}
