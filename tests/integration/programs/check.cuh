// Shared by the integration test programs: fail loudly on any unexpected CUDA error.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      std::printf("FAILED %s: %s (line %d)\n", #x, cudaGetErrorName(e_), __LINE__); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

// The same for driver API calls (CUresult), for the programs that use the driver API.
#define CU_CHECK(x)                                                        \
  do {                                                                     \
    CUresult r_ = (x);                                                     \
    if (r_ != CUDA_SUCCESS) {                                              \
      std::printf("FAILED %s: CUresult %d (line %d)\n", #x, r_, __LINE__); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

// Elapsed time between two completed events in microseconds.
inline double elapsed_us(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return static_cast<double>(ms) * 1000.0;
}

// Spends `us` microseconds of this thread's real CPU time (CPU-time clocks are never simulated):
// work that costs simulated time only in measured mode.
inline void cpu_work_us(long us) {
  timespec c0, c;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
  } while ((c.tv_sec - c0.tv_sec) * 1000000000L + (c.tv_nsec - c0.tv_nsec) < us * 1000L);
}
