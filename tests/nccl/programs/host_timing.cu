// Times all-reduces the way nccl-tests does (one process driving every GPU of the host, as
// `all_reduce_perf -g 8`): for each size, a few warm-up iterations, then the host clock
// (std::chrono::steady_clock) around `iters` grouped all-reduces and a wait that polls each GPU's
// stream with cudaStreamQuery in turn. CUDA events recorded on every stream around the same
// iterations give the GPU's own timing. Prints, per size:
//   <bytes> <host_us per iteration> <event_us per iteration>
//
//   host_timing [-b MIN_BYTES] [-e MAX_BYTES] [-n ITERS]
#include <algorithm>
#include <chrono>
#include <vector>

#include "common.cuh"

int main(int argc, char** argv) {
  size_t min_bytes = 1 << 20, max_bytes = 256 << 20;
  int iters = 20;
  int opt;
  while ((opt = getopt(argc, argv, "b:e:n:")) != -1) {
    switch (opt) {
      case 'b':
        min_bytes = std::strtoull(optarg, nullptr, 10);
        break;
      case 'e':
        max_bytes = std::strtoull(optarg, nullptr, 10);
        break;
      case 'n':
        iters = std::atoi(optarg);
        break;
      default:
        return 2;
    }
  }
  int gpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&gpus));
  std::vector<ncclComm_t> comms(gpus);
  NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, nullptr));
  std::vector<cudaStream_t> streams(gpus);
  std::vector<void*> bufs(gpus);
  std::vector<cudaEvent_t> begin(gpus), end(gpus);
  for (int g = 0; g < gpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&bufs[g], max_bytes));
    CUDA_CHECK(cudaEventCreate(&begin[g]));
    CUDA_CHECK(cudaEventCreate(&end[g]));
  }
  auto all_reduce = [&](size_t bytes) {
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < gpus; ++g) {
      NCCL_CHECK(ncclAllReduce(bufs[g], bufs[g], bytes / sizeof(float), ncclFloat, ncclSum,
                               comms[g], streams[g]));
    }
    NCCL_CHECK(ncclGroupEnd());
  };
  // nccl-tests' completeColl: poll every stream in turn until all are done.
  auto wait_all = [&] {
    for (bool done = false; !done;) {
      done = true;
      for (int g = 0; g < gpus; ++g) {
        const cudaError_t e = cudaStreamQuery(streams[g]);
        if (e == cudaErrorNotReady) {
          done = false;
        } else {
          CUDA_CHECK(e);
        }
      }
    }
  };
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    for (int w = 0; w < 2; ++w) all_reduce(bytes);
    wait_all();
    for (int g = 0; g < gpus; ++g) CUDA_CHECK(cudaEventRecord(begin[g], streams[g]));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) all_reduce(bytes);
    for (int g = 0; g < gpus; ++g) CUDA_CHECK(cudaEventRecord(end[g], streams[g]));
    wait_all();
    const double host_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    double event_us = 0;
    for (int g = 0; g < gpus; ++g) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, begin[g], end[g]));
      event_us = std::max(event_us, static_cast<double>(ms) * 1000.0);
    }
    std::printf("%zu %.3f %.3f\n", bytes, host_us / iters, event_us / iters);
    std::fflush(stdout);
  }
  for (int g = 0; g < gpus; ++g) NCCL_CHECK(ncclCommDestroy(comms[g]));
  return 0;
}
