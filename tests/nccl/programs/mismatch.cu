// Ranks that disagree. One process per host, one GPU each, rank = host (host 0 publishes the
// unique id in DIR/uid). Collectives #0 and #1 agree (all-reduce of 1024 floats); at #2 the
// last rank deviates according to the mode:
//   op      ncclAllGather instead of ncclAllReduce
//   count   2048 elements instead of 1024
//   dtype   ncclHalf instead of ncclFloat
//   redop   ncclMax instead of ncclSum
//   root    ncclBroadcast from root 1 instead of root 0 (everyone else: root 0)
//   absent  never calls #2 (sleeps), the others wait for it
//   crash   aborts (SIGABRT) instead of calling #2, the others wait for it
//   init_crash  aborts right after joining the communicator: the others wait in #0
//   init_exit   exits with status 3 right after joining: the others wait in #0
//   none    agrees (control case: the run must succeed)
//
//   mismatch -u DIR -m MODE
#include <string>

#include "common.cuh"

int main(int argc, char** argv) {
  std::string dir = ".", mode = "none";
  int opt;
  while ((opt = getopt(argc, argv, "u:m:")) != -1) {
    switch (opt) {
      case 'u':
        dir = optarg;
        break;
      case 'm':
        mode = optarg;
        break;
      default:
        return 2;
    }
  }
  const int rank = env_int("PHANTORA_HOST", 0), n = env_int("PHANTORA_HOSTS", 1);
  const bool deviant = rank == n - 1;
  CUDA_CHECK(cudaSetDevice(0));
  const ncclUniqueId id = exchange_id(dir + "/uid", rank == 0);
  ncclComm_t comm;
  NCCL_CHECK(ncclCommInitRank(&comm, n, id, rank));
  if (deviant && mode == "init_crash") {
    std::fprintf(stderr, "rank %d: aborting after joining the communicator\n", rank);
    std::abort();
  }
  if (deviant && mode == "init_exit") {
    std::fprintf(stderr, "rank %d: exiting after joining the communicator\n", rank);
    std::exit(3);
  }
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  void* buf;
  CUDA_CHECK(cudaMalloc(&buf, 1 << 20));
  for (int i = 0; i < 2; ++i)
    NCCL_CHECK(ncclAllReduce(buf, buf, 1024, ncclFloat, ncclSum, comm, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  if (mode == "root") {
    NCCL_CHECK(ncclBroadcast(buf, buf, 1024, ncclFloat, deviant ? 1 : 0, comm, s));
  } else if (deviant && mode == "absent") {
    std::fprintf(stderr, "rank %d: not calling collective #2\n", rank);
    sleep(600);
  } else if (deviant && mode == "crash") {
    std::fprintf(stderr, "rank %d: aborting before collective #2\n", rank);
    std::abort();
  } else if (deviant && mode == "op") {
    NCCL_CHECK(ncclAllGather(buf, buf, 1024 / n, ncclFloat, comm, s));
  } else {
    const size_t count = deviant && mode == "count" ? 2048 : 1024;
    const ncclDataType_t dtype = deviant && mode == "dtype" ? ncclHalf : ncclFloat;
    const ncclRedOp_t redop = deviant && mode == "redop" ? ncclMax : ncclSum;
    NCCL_CHECK(ncclAllReduce(buf, buf, count, dtype, redop, comm, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::printf("rank %d done\n", rank);
  NCCL_CHECK(ncclCommDestroy(comm));
  return 0;
}
