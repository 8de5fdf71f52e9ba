// Helpers shared by the NCCL test programs: error checks, the unique-id exchange through a file,
// and environment integers.
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#define CUDA_CHECK(x)                                                                         \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define NCCL_CHECK(x)                                                                             \
  do {                                                                                            \
    ncclResult_t r_ = (x);                                                                        \
    if (r_ != ncclSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d %s: %s (%s)\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_), \
                   ncclGetLastError(nullptr));                                                    \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

// Waits `ms` of real time that the simulation does not count. Under phantora every sleep moves
// the thread's simulated clock (docs/time.md); waiting for another process to publish a file is
// a start-up detail (as a TCPStore get would be), so it goes straight to the kernel.
inline void wait_outside_simulation_ms(int ms) {
  const timespec pause{0, ms * 1000000L};
  syscall(SYS_nanosleep, &pause, nullptr);
}

inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// The publisher writes the id to path (whole, then renamed); the others poll for the file.
inline ncclUniqueId exchange_id(const std::string& path, bool publisher) {
  ncclUniqueId id;
  if (publisher) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr || std::fwrite(&id, sizeof(id), 1, f) != 1) {
      std::fprintf(stderr, "cannot write %s\n", tmp.c_str());
      std::exit(1);
    }
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());
    return id;
  }
  for (;;) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f != nullptr && std::fread(&id, sizeof(id), 1, f) == 1) {
      std::fclose(f);
      return id;
    }
    if (f != nullptr) std::fclose(f);
    wait_outside_simulation_ms(5);
  }
}

inline size_t parse_size(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  if (*end == 'M' || *end == 'm') v *= 1024.0 * 1024;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return static_cast<size_t>(v);
}
