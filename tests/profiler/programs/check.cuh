// Shared by the profiler's test programs: any non-zero status (a cudaError_t, CUresult or
// cublasStatus_t) ends the program with the failing call named.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                          \
  do {                                                    \
    if ((x) != 0) {                                       \
      std::printf("FAILED %s (line %d)\n", #x, __LINE__); \
      std::exit(1);                                       \
    }                                                     \
  } while (0)
