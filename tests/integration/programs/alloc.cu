// Allocates MiB[d] MiB on device d (cudaMalloc), one argument per device, and frees nothing:
// the peak memory of GPU d is exactly MiB[d] MiB. Two runs with different sizes are the memory
// gate's test (check.py, case memory_gate).
// Usage: alloc <MiB on device 0> [<MiB on device 1> ...]
#include <cstdlib>

#include "check.cuh"

int main(int argc, char** argv) {
  for (int dev = 0; dev + 1 < argc; ++dev) {
    CHECK(cudaSetDevice(dev));
    void* p = nullptr;
    CHECK(cudaMalloc(&p, static_cast<size_t>(std::atoll(argv[dev + 1])) << 20));
  }
  std::printf("allocated %d device(s)\n", argc - 1);
  return 0;
}
