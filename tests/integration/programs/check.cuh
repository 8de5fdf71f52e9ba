// Shared by the integration test programs: fail loudly on any unexpected CUDA error.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::printf("FAILED %s: %s (line %d)\n", #x, cudaGetErrorName(e_), __LINE__);   \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

// Elapsed time between two completed events in microseconds.
inline double elapsed_us(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return static_cast<double>(ms) * 1000.0;
}
