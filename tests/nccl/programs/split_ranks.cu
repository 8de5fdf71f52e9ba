// ncclCommSplit with one process per GPU (per_gpu_launch.sh): colour rank % 2, key -rank (the
// new ranks run in reverse order), the last rank NCCL_SPLIT_NOCOLOR. Every rank prints
//   split <rank> <new rank> <new size>      (-1 0 without a communicator)
// then each new communicator all-reduces s bytes; its rank 0 prints
//   split_allreduce <colour> <size> <time us>
#include <string>

#include "common.cuh"

int main(int argc, char** argv) {
  std::string dir = ".";
  size_t bytes = 64 << 20;
  int opt;
  while ((opt = getopt(argc, argv, "u:s:")) != -1) {
    if (opt == 'u')
      dir = optarg;
    else if (opt == 's')
      bytes = parse_size(optarg);
    else
      return 2;
  }
  const int rank = env_int("RANK", 0), n = env_int("WORLD_SIZE", 1);
  CUDA_CHECK(cudaSetDevice(0));
  const ncclUniqueId id = exchange_id(dir + "/uid", rank == 0);
  ncclComm_t world, sub = nullptr;
  NCCL_CHECK(ncclCommInitRank(&world, n, id, rank));
  const int color = rank == n - 1 ? NCCL_SPLIT_NOCOLOR : rank % 2;
  NCCL_CHECK(ncclCommSplit(world, color, -rank, &sub, nullptr));
  int new_rank = -1, size = 0;
  if (sub != nullptr) {
    NCCL_CHECK(ncclCommUserRank(sub, &new_rank));
    NCCL_CHECK(ncclCommCount(sub, &size));
  }
  std::printf("split %d %d %d\n", rank, new_rank, size);
  std::fflush(stdout);
  if (sub != nullptr) {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    void* buf;
    CUDA_CHECK(cudaMalloc(&buf, bytes));
    cudaEvent_t begin, end;
    CUDA_CHECK(cudaEventCreate(&begin));
    CUDA_CHECK(cudaEventCreate(&end));
    CUDA_CHECK(cudaEventRecord(begin, s));
    NCCL_CHECK(ncclAllReduce(buf, buf, bytes / 4, ncclFloat, ncclSum, sub, s));
    CUDA_CHECK(cudaEventRecord(end, s));
    CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    if (new_rank == 0) std::printf("split_allreduce %d %d %.3f\n", color, size, ms * 1e3);
    NCCL_CHECK(ncclCommDestroy(sub));
  }
  NCCL_CHECK(ncclCommDestroy(world));
  return 0;
}
