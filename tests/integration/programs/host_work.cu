// Host work between CUDA calls, for `--host-speed` (docs/time.md, "Host speed"): launches a
// kernel, does <ms> of real CPU work (thread CPU time), launches another, and prints the
// simulated time the work took as the program reads it (std::chrono) and as the GPU sees it
// (the gap between the two kernels' submissions, from the trace).
// Usage: host_work <ms>
#include <chrono>
#include <cstdlib>

#include "check.cuh"

__global__ void tiny(float* p) {
  p[threadIdx.x] += 1;
}

int main(int argc, char** argv) {
  const long ms = argc > 1 ? std::atol(argv[1]) : 20;
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));
  tiny<<<1, 32>>>(d);
  const auto t0 = std::chrono::steady_clock::now();
  timespec c0, c;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
  } while ((c.tv_sec - c0.tv_sec) * 1000000000L + (c.tv_nsec - c0.tv_nsec) < ms * 1000000L);
  const auto t1 = std::chrono::steady_clock::now();
  tiny<<<1, 32>>>(d);
  CHECK(cudaDeviceSynchronize());
  std::printf("work_us %.3f\n", std::chrono::duration<double, std::micro>(t1 - t0).count());
  CHECK(cudaFree(d));
  return 0;
}
