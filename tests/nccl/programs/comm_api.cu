// One process drives every GPU of a single host through ncclCommInitAll.
//
//   comm_api [-s bytes] ops          all-reduce, broadcast (root 2), reduce (root 1), all-gather
//                                    and a send/recv ring, each timed alone with events on
//                                    GPU 0's stream: prints  <name>_us <time>  per operation
//   comm_api [-s bytes] split_group  ncclCommSplit of every rank inside one group (colour
//                                    rank % 2, key -rank, the last rank NCCL_SPLIT_NOCOLOR),
//                                    then an all-reduce on each new communicator; prints
//                                    split <rank> <new rank> <size>  and  split_allreduce_us
#include <string>
#include <vector>

#include "common.cuh"

int main(int argc, char** argv) {
  size_t bytes = 64 << 20;
  int opt;
  while ((opt = getopt(argc, argv, "s:")) != -1) {
    if (opt == 's')
      bytes = parse_size(optarg);
    else
      return 2;
  }
  const std::string mode = optind < argc ? argv[optind] : "ops";
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));
  std::vector<ncclComm_t> comms(n);
  NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));
  std::vector<cudaStream_t> streams(n);
  std::vector<void*> send(n), recv(n);
  for (int g = 0; g < n; ++g) {
    int count = 0, rank = -1, dev = -1;
    NCCL_CHECK(ncclCommCount(comms[g], &count));
    NCCL_CHECK(ncclCommUserRank(comms[g], &rank));
    NCCL_CHECK(ncclCommCuDevice(comms[g], &dev));
    if (count != n || rank != g || dev != g) {
      std::fprintf(stderr, "comm %d: count %d rank %d device %d\n", g, count, rank, dev);
      return 1;
    }
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&send[g], bytes));
    CUDA_CHECK(cudaMalloc(&recv[g], bytes));
  }
  cudaEvent_t begin, end;
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaEventCreate(&begin));
  CUDA_CHECK(cudaEventCreate(&end));
  const size_t count = bytes / sizeof(float);

  // Runs `body` for every GPU inside one group, timed on GPU 0's stream.
  auto timed = [&](const char* name, auto body) {
    CUDA_CHECK(cudaEventRecord(begin, streams[0]));
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < n; ++g) body(g);
    NCCL_CHECK(ncclGroupEnd());
    CUDA_CHECK(cudaEventRecord(end, streams[0]));
    for (int g = 0; g < n; ++g) CUDA_CHECK(cudaStreamSynchronize(streams[g]));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    std::printf("%s_us %.3f\n", name, ms * 1e3);
  };

  if (mode == "ops") {
    timed("allreduce", [&](int g) {
      NCCL_CHECK(ncclAllReduce(send[g], recv[g], count, ncclFloat, ncclSum, comms[g], streams[g]));
    });
    timed("broadcast", [&](int g) {
      NCCL_CHECK(ncclBroadcast(send[g], recv[g], count, ncclFloat, 2 % n, comms[g], streams[g]));
    });
    timed("reduce", [&](int g) {
      NCCL_CHECK(
          ncclReduce(send[g], recv[g], count, ncclFloat, ncclSum, 1 % n, comms[g], streams[g]));
    });
    timed("allgather", [&](int g) {
      NCCL_CHECK(ncclAllGather(send[g], recv[g], count / n, ncclFloat, comms[g], streams[g]));
    });
    timed("sendrecv", [&](int g) {
      NCCL_CHECK(ncclSend(send[g], count, ncclFloat, (g + 1) % n, comms[g], streams[g]));
      NCCL_CHECK(ncclRecv(recv[g], count, ncclFloat, (g + n - 1) % n, comms[g], streams[g]));
    });
  } else if (mode == "split_group") {
    // NCCL requires a group when one thread splits several ranks: every split call waits
    // for all ranks of the parent.
    std::vector<ncclComm_t> sub(n, nullptr);
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < n; ++g) {
      const int color = g == n - 1 ? NCCL_SPLIT_NOCOLOR : g % 2;
      NCCL_CHECK(ncclCommSplit(comms[g], color, -g, &sub[g], nullptr));
    }
    NCCL_CHECK(ncclGroupEnd());
    for (int g = 0; g < n; ++g) {
      int r = -1, c = 0;
      if (sub[g] != nullptr) {
        NCCL_CHECK(ncclCommUserRank(sub[g], &r));
        NCCL_CHECK(ncclCommCount(sub[g], &c));
      }
      std::printf("split %d %d %d\n", g, r, c);
    }
    timed("split_allreduce", [&](int g) {
      if (sub[g] != nullptr)
        NCCL_CHECK(ncclAllReduce(send[g], recv[g], count, ncclFloat, ncclSum, sub[g], streams[g]));
    });
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  for (int g = 0; g < n; ++g) NCCL_CHECK(ncclCommDestroy(comms[g]));
  return 0;
}
