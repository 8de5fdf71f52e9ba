// N launches of one pinned kernel between two events on the legacy stream.
// Usage: event_loop <kernel: step|tiny> <N> [spin]
//   spin: wait for the stop event by polling cudaEventQuery instead of cudaEventSynchronize.
#include <cstring>

#include "check.cuh"

__global__ void step(int i) {
  (void)i;
}
__global__ void tiny(int i) {
  (void)i;
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return 2;
  const bool spin = argc == 4 && std::strcmp(argv[3], "spin") == 0;
  const bool use_tiny = std::strcmp(argv[1], "tiny") == 0;
  const int n = std::atoi(argv[2]);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, 0));
  for (int i = 0; i < n; ++i) {
    if (use_tiny) {
      tiny<<<1, 1>>>(i);
    } else {
      step<<<1, 1>>>(i);
    }
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop, 0));
  if (spin) {
    int polls = 0;
    cudaError_t q;
    while ((q = cudaEventQuery(stop)) == cudaErrorNotReady) ++polls;
    CHECK(q);
    std::printf("not_ready_polls %d\n", polls);
  } else {
    CHECK(cudaEventSynchronize(stop));
  }
  std::printf("elapsed_us %.3f\n", elapsed_us(start, stop));
  return 0;
}
