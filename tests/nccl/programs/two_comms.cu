// Two communicators whose traffic shares the hosts' links. One process per host drives local
// GPUs 0 and 1: communicator A joins GPU 0 of every host, communicator B GPU 1 of every host
// (host 0 publishes both unique ids in DIR/a and DIR/b).
//
//   two_comms -u DIR [-s bytes] [-n iters] [-p alone,both]
//
// Phase "alone": A all-reduces s bytes n times while B is idle; prints  alone_us <per call>.
// Phase "both": A and B all-reduce s bytes n times each, concurrently on their own streams;
// prints  both_a_us <per call>  and  both_b_us <per call>.
#include <string>

#include "common.cuh"

int main(int argc, char** argv) {
  size_t bytes = 1 << 30;
  int iters = 2;
  std::string dir = ".", phases = "alone,both";
  int opt;
  while ((opt = getopt(argc, argv, "u:s:n:p:")) != -1) {
    switch (opt) {
      case 'u':
        dir = optarg;
        break;
      case 's':
        bytes = parse_size(optarg);
        break;
      case 'n':
        iters = std::atoi(optarg);
        break;
      case 'p':
        phases = optarg;
        break;
      default:
        return 2;
    }
  }
  const int host = env_int("PHANTORA_HOST", 0), hosts = env_int("PHANTORA_HOSTS", 1);
  const ncclUniqueId ida = exchange_id(dir + "/a", host == 0);
  const ncclUniqueId idb = exchange_id(dir + "/b", host == 0);
  ncclComm_t comm[2];
  cudaStream_t stream[2];
  void* buf[2];
  cudaEvent_t begin[2], end[2];
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < 2; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    NCCL_CHECK(ncclCommInitRank(&comm[g], hosts, g == 0 ? ida : idb, host));
  }
  NCCL_CHECK(ncclGroupEnd());
  for (int g = 0; g < 2; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&buf[g], bytes));
    CUDA_CHECK(cudaEventCreate(&begin[g]));
    CUDA_CHECK(cudaEventCreate(&end[g]));
  }
  const size_t count = bytes / sizeof(float);
  auto run = [&](int first, int last) {
    for (int g = first; g <= last; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      CUDA_CHECK(cudaEventRecord(begin[g], stream[g]));
    }
    for (int i = 0; i < iters; ++i) {
      for (int g = first; g <= last; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        NCCL_CHECK(ncclAllReduce(buf[g], buf[g], count, ncclFloat, ncclSum, comm[g], stream[g]));
      }
    }
    for (int g = first; g <= last; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      CUDA_CHECK(cudaEventRecord(end[g], stream[g]));
    }
    float ms[2] = {0, 0};
    for (int g = first; g <= last; ++g) {
      CUDA_CHECK(cudaEventSynchronize(end[g]));
      CUDA_CHECK(cudaEventElapsedTime(&ms[g], begin[g], end[g]));
    }
    // Both streams idle again before the next phase starts.
    for (int g = 0; g < 2; ++g) CUDA_CHECK(cudaStreamSynchronize(stream[g]));
    return std::make_pair(ms[0] * 1e3 / iters, ms[1] * 1e3 / iters);
  };
  size_t pos = 0;
  while (pos < phases.size()) {
    size_t comma = phases.find(',', pos);
    if (comma == std::string::npos) comma = phases.size();
    const std::string phase = phases.substr(pos, comma - pos);
    pos = comma + 1;
    if (phase == "alone") {
      const auto t = run(0, 0);
      if (host == 0) std::printf("alone_us %.3f\n", t.first);
    } else if (phase == "both") {
      const auto t = run(0, 1);
      if (host == 0) std::printf("both_a_us %.3f\nboth_b_us %.3f\n", t.first, t.second);
    } else {
      std::fprintf(stderr, "unknown phase %s\n", phase.c_str());
      return 2;
    }
  }
  for (int g = 0; g < 2; ++g) NCCL_CHECK(ncclCommDestroy(comm[g]));
  return 0;
}
