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
  cpu_work_us(ms * 1000);
  const auto t1 = std::chrono::steady_clock::now();
  tiny<<<1, 32>>>(d);
  CHECK(cudaDeviceSynchronize());
  std::printf("work_us %.3f\n", std::chrono::duration<double, std::micro>(t1 - t0).count());
  CHECK(cudaFree(d));
  return 0;
}
