// Tensor- and data-parallel communicators as a 2-D parallel job builds them, one process per
// GPU (per_gpu_launch.sh): the world is split into tensor-parallel groups of -t consecutive ranks
// (colour rank / t) and data-parallel groups of the ranks with the same position in theirs
// (colour rank % t). Each rank then times, on its own stream:
//   an all-reduce of s bytes on its tensor-parallel communicator,
//   an all-reduce of s bytes, a reduce-scatter and an all-gather of an s-byte array on its
//   data-parallel communicator (each rank's share s / dp_size, as a sharded optimizer has it),
// and prints   time <op> <rank> <dp size> <microseconds>
// for tp_allreduce, dp_allreduce, dp_reducescatter and dp_allgather. Launched with data-parallel
// size 1 under `--represent-dp N --dp-comms size:1`, the times equal those of the job launched
// on N times the hosts (tests/nccl/check.py, case represent_dp_groups).
#include <string>

#include "common.cuh"

namespace {

template <typename Op>
float timed(cudaStream_t s, const Op& op) {
  cudaEvent_t begin, end;
  CUDA_CHECK(cudaEventCreate(&begin));
  CUDA_CHECK(cudaEventCreate(&end));
  CUDA_CHECK(cudaEventRecord(begin, s));
  op();
  CUDA_CHECK(cudaEventRecord(end, s));
  CUDA_CHECK(cudaEventSynchronize(end));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
  return ms * 1e3f;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = ".";
  size_t bytes = 256 << 20;
  int tp = 1;
  int opt;
  while ((opt = getopt(argc, argv, "u:s:t:")) != -1) {
    if (opt == 'u')
      dir = optarg;
    else if (opt == 's')
      bytes = parse_size(optarg);
    else if (opt == 't')
      tp = std::atoi(optarg);
    else
      return 2;
  }
  const int rank = env_int("RANK", 0), n = env_int("WORLD_SIZE", 1);
  if (tp < 1 || n % tp != 0) {
    std::fprintf(stderr, "-t %d does not divide the world of %d ranks\n", tp, n);
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(0));
  const ncclUniqueId id = exchange_id(dir + "/uid", rank == 0);
  ncclComm_t world, tp_comm, dp_comm;
  NCCL_CHECK(ncclCommInitRank(&world, n, id, rank));
  NCCL_CHECK(ncclCommSplit(world, rank / tp, rank, &tp_comm, nullptr));
  NCCL_CHECK(ncclCommSplit(world, rank % tp, rank, &dp_comm, nullptr));
  int dp = 0;
  NCCL_CHECK(ncclCommCount(dp_comm, &dp));

  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  void* buf;
  CUDA_CHECK(cudaMalloc(&buf, bytes));
  const size_t floats = bytes / 4, share = floats / static_cast<size_t>(dp);
  float* f = static_cast<float*>(buf);
  const float t_tp = timed(
      s, [&] { NCCL_CHECK(ncclAllReduce(buf, buf, floats, ncclFloat, ncclSum, tp_comm, s)); });
  const float t_ar = timed(
      s, [&] { NCCL_CHECK(ncclAllReduce(buf, buf, floats, ncclFloat, ncclSum, dp_comm, s)); });
  const float t_rs =
      timed(s, [&] { NCCL_CHECK(ncclReduceScatter(f, f, share, ncclFloat, ncclSum, dp_comm, s)); });
  const float t_ag =
      timed(s, [&] { NCCL_CHECK(ncclAllGather(f, f, share, ncclFloat, dp_comm, s)); });
  std::printf("time tp_allreduce %d %d %.3f\n", rank, dp, t_tp);
  std::printf("time dp_allreduce %d %d %.3f\n", rank, dp, t_ar);
  std::printf("time dp_reducescatter %d %d %.3f\n", rank, dp, t_rs);
  std::printf("time dp_allgather %d %d %.3f\n", rank, dp, t_ag);
  NCCL_CHECK(ncclCommDestroy(dp_comm));
  NCCL_CHECK(ncclCommDestroy(tp_comm));
  NCCL_CHECK(ncclCommDestroy(world));
  return 0;
}
