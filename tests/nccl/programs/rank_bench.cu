// A multi-process NCCL program written the way training jobs use NCCL, unlike nccl_perf: one
// process per GPU (started by per_gpu_launch.sh as torchrun would: RANK, WORLD_SIZE,
// LOCAL_RANK, CUDA_VISIBLE_DEVICES), bf16 buffers, all-to-all as PyTorch's all_to_all_single
// issues it (grouped ncclSend/ncclRecv). Rank 0 publishes the unique id in DIR/uid.
//
//   rank_bench -u DIR [-b 64M] [-e 1G] [-o allreduce,allgather,reducescatter,alltoall]
//              [-n iters] [-w warmup]
//
// Sizes are nccl-tests' S in bytes (the whole gathered array for allgather/reducescatter, a
// rank's whole send buffer for alltoall), doubling from -b to -e. Each operation is timed with
// CUDA events around n back-to-back calls on the rank's own stream; rank 0 prints
//   result <op> <S bytes> <time us> <algbw GB/s> <busbw GB/s>
#include <cuda_bf16.h>

#include <string>
#include <vector>

#include "common.cuh"

namespace {

double busbw_factor(const std::string& op, int n) {
  if (op == "allreduce") return 2.0 * (n - 1) / n;
  return double(n - 1) / n;  // allgather, reducescatter, alltoall (nccl-tests PERFORMANCE.md)
}

void issue(const std::string& op, void* send, void* recv, size_t count, int n, ncclComm_t comm,
           cudaStream_t s) {
  auto* in = static_cast<__nv_bfloat16*>(send);
  auto* out = static_cast<__nv_bfloat16*>(recv);
  if (op == "allreduce") {
    NCCL_CHECK(ncclAllReduce(in, out, count, ncclBfloat16, ncclSum, comm, s));
  } else if (op == "allgather") {
    NCCL_CHECK(ncclAllGather(in, out, count / n, ncclBfloat16, comm, s));
  } else if (op == "reducescatter") {
    NCCL_CHECK(ncclReduceScatter(in, out, count / n, ncclBfloat16, ncclSum, comm, s));
  } else if (op == "alltoall") {
    const size_t chunk = count / n;
    NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < n; ++p) {
      NCCL_CHECK(ncclSend(in + p * chunk, chunk, ncclBfloat16, p, comm, s));
      NCCL_CHECK(ncclRecv(out + p * chunk, chunk, ncclBfloat16, p, comm, s));
    }
    NCCL_CHECK(ncclGroupEnd());
  } else {
    std::fprintf(stderr, "unknown op %s\n", op.c_str());
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t min_bytes = 64 << 20, max_bytes = 1 << 30;
  int iters = 3, warmup = 1;
  std::string ops = "allreduce,allgather,reducescatter,alltoall", dir = ".";
  int opt;
  while ((opt = getopt(argc, argv, "u:b:e:o:n:w:")) != -1) {
    switch (opt) {
      case 'u':
        dir = optarg;
        break;
      case 'b':
        min_bytes = parse_size(optarg);
        break;
      case 'e':
        max_bytes = parse_size(optarg);
        break;
      case 'o':
        ops = optarg;
        break;
      case 'n':
        iters = std::atoi(optarg);
        break;
      case 'w':
        warmup = std::atoi(optarg);
        break;
      default:
        return 2;
    }
  }
  const int rank = env_int("RANK", -1), n = env_int("WORLD_SIZE", -1);
  if (rank < 0 || n < 1) {
    std::fprintf(stderr, "RANK and WORLD_SIZE must be set (use per_gpu_launch.sh)\n");
    return 2;
  }
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  if (visible != 1) {
    std::fprintf(stderr, "rank %d sees %d GPUs; expected one (CUDA_VISIBLE_DEVICES)\n", rank,
                 visible);
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(0));
  const ncclUniqueId id = exchange_id(dir + "/uid", rank == 0);
  ncclComm_t comm;
  NCCL_CHECK(ncclCommInitRank(&comm, n, id, rank));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  void *send, *recv;
  CUDA_CHECK(cudaMalloc(&send, max_bytes));
  CUDA_CHECK(cudaMalloc(&recv, max_bytes));
  cudaEvent_t begin, end;
  CUDA_CHECK(cudaEventCreate(&begin));
  CUDA_CHECK(cudaEventCreate(&end));

  size_t pos = 0;
  while (pos < ops.size()) {
    size_t comma = ops.find(',', pos);
    if (comma == std::string::npos) comma = ops.size();
    const std::string op = ops.substr(pos, comma - pos);
    pos = comma + 1;
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
      // bf16 elements, a multiple of n so that every rank's share is whole.
      const size_t count = op == "allreduce" ? bytes / 2 : bytes / 2 / n * n;
      if (count == 0) continue;
      for (int i = 0; i < warmup; ++i) issue(op, send, recv, count, n, comm, stream);
      CUDA_CHECK(cudaEventRecord(begin, stream));
      for (int i = 0; i < iters; ++i) issue(op, send, recv, count, n, comm, stream);
      CUDA_CHECK(cudaEventRecord(end, stream));
      CUDA_CHECK(cudaEventSynchronize(end));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
      const double us = ms * 1e3 / iters, s = double(count) * 2;
      const double algbw = s / (us * 1e-6) / 1e9;
      if (rank == 0) {
        std::printf("result %s %.0f %.3f %.3f %.3f\n", op.c_str(), s, us, algbw,
                    algbw * busbw_factor(op, n));
        std::fflush(stdout);
      }
    }
  }
  NCCL_CHECK(ncclCommDestroy(comm));
  return 0;
}
