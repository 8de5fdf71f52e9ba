// N launches of one pinned kernel between two events on the legacy stream.
// Usage: event_loop <kernel: step|tiny> <N> [spin|guarded_spin]
//   spin: wait for the stop event by polling cudaEventQuery instead of cudaEventSynchronize.
//   guarded_spin: poll two events in turn, one recorded after half the launches and the stop
//   event, with cudaSetDevice between the queries, as PyTorch's NCCL watchdog polls its
//   collectives' end events behind a device guard once its process group is shut down.
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
  const bool guarded = argc == 4 && std::strcmp(argv[3], "guarded_spin") == 0;
  const bool spin = guarded || (argc == 4 && std::strcmp(argv[3], "spin") == 0);
  const bool use_tiny = std::strcmp(argv[1], "tiny") == 0;
  const int n = std::atoi(argv[2]);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  cudaEvent_t mid;
  CHECK(cudaEventCreate(&mid));
  CHECK(cudaEventRecord(start, 0));
  for (int i = 0; i < n; ++i) {
    if (guarded && i == n / 2) CHECK(cudaEventRecord(mid, 0));  // only there: a call costs time
    if (use_tiny) {
      tiny<<<1, 1>>>(i);
    } else {
      step<<<1, 1>>>(i);
    }
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop, 0));
  if (guarded) {
    int polls = 0;
    cudaEvent_t pending[2] = {mid, stop};
    bool done[2] = {false, false};
    while (!done[0] || !done[1]) {
      for (int e = 0; e < 2; ++e) {
        if (done[e]) continue;
        const cudaError_t q = cudaEventQuery(pending[e]);
        if (q == cudaErrorNotReady) {
          ++polls;
        } else {
          CHECK(q);
          done[e] = true;
        }
        CHECK(cudaSetDevice(0));
      }
    }
    std::printf("not_ready_polls %d\n", polls);
  } else if (spin) {
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
