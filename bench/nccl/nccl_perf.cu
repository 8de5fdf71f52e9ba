// A collective benchmark in the manner of nccl-tests: for each operation and message size it
// prints size, count, type, time per iteration, algbw and busbw, so that a simulated topology
// can be compared with (and calibrated against) nccl-tests runs on a real cluster.
//
// One process per host drives every GPU of its host (nccl-tests' -g mode): local GPU g of
// host h is global rank h * G + g. Hosts learn host 0's ncclUniqueId through a file.
//
//   nvcc -cudart shared -o nccl_perf nccl_perf.cu -lnccl
//   phantora run --hosts 4 --gpus-per-host 8 -- ./nccl_perf -b 64M -e 1G -o all_reduce,all_gather
//
// Operations (-o, comma-separated): all_reduce, all_gather, reduce_scatter, broadcast, reduce,
// alltoall (grouped ncclSend/ncclRecv, as PyTorch issues it), alltoall_native (ncclAlltoAll),
// sendrecv. Sizes are nccl-tests' S: the whole buffer (all_gather: the gathered array;
// alltoall: a rank's whole send buffer).
#include <cuda_runtime.h>
#include <nccl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CUDA_CHECK(x)                                                                         \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define NCCL_CHECK(x)                                                                         \
  do {                                                                                        \
    ncclResult_t r_ = (x);                                                                    \
    if (r_ != ncclSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

size_t parse_size(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  switch (*end) {
    case 'K':
    case 'k':
      v *= 1024;
      break;
    case 'M':
    case 'm':
      v *= 1024 * 1024;
      break;
    case 'G':
    case 'g':
      v *= 1024.0 * 1024 * 1024;
      break;
    default:
      break;
  }
  return static_cast<size_t>(v);
}

// nccl-tests' size S (bytes the operation is named by) and bus-bandwidth factor
// (NVIDIA/nccl-tests doc/PERFORMANCE.md).
struct Op {
  const char* name;
  double busbw_factor(int n) const {
    const std::string s = name;
    if (s == "all_reduce") return 2.0 * (n - 1) / n;
    if (s == "all_gather" || s == "reduce_scatter" || s == "alltoall" || s == "alltoall_native")
      return double(n - 1) / n;
    return 1.0;
  }
};

void issue(const std::string& op, void* send, void* recv, size_t bytes, int n, int rank,
           ncclComm_t comm, cudaStream_t stream) {
  const size_t count = bytes / sizeof(float);
  if (op == "all_reduce") {
    NCCL_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
  } else if (op == "all_gather") {
    NCCL_CHECK(ncclAllGather(send, recv, count / n, ncclFloat, comm, stream));
  } else if (op == "reduce_scatter") {
    NCCL_CHECK(ncclReduceScatter(send, recv, count / n, ncclFloat, ncclSum, comm, stream));
  } else if (op == "broadcast") {
    NCCL_CHECK(ncclBroadcast(send, recv, count, ncclFloat, 0, comm, stream));
  } else if (op == "reduce") {
    NCCL_CHECK(ncclReduce(send, recv, count, ncclFloat, ncclSum, 0, comm, stream));
  } else if (op == "alltoall") {
    // Grouped send/recv, the way PyTorch's all_to_all_single issues it.
    const size_t per_peer = count / n;
    for (int p = 0; p < n; ++p) {
      NCCL_CHECK(
          ncclSend(static_cast<float*>(send) + p * per_peer, per_peer, ncclFloat, p, comm, stream));
      NCCL_CHECK(
          ncclRecv(static_cast<float*>(recv) + p * per_peer, per_peer, ncclFloat, p, comm, stream));
    }
  } else if (op == "alltoall_native") {
    // The same exchange as one ncclAlltoAll (NCCL 2.28+), count per peer.
    NCCL_CHECK(ncclAlltoAll(send, recv, count / n, ncclFloat, comm, stream));
  } else if (op == "sendrecv") {
    NCCL_CHECK(ncclSend(send, count, ncclFloat, (rank + 1) % n, comm, stream));
    NCCL_CHECK(ncclRecv(recv, count, ncclFloat, (rank + n - 1) % n, comm, stream));
  } else {
    std::fprintf(stderr, "unknown operation %s\n", op.c_str());
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t min_bytes = 8, max_bytes = 64 << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  std::string ops = "all_reduce,all_gather,reduce_scatter,alltoall";
  // The hosts of one run meet in this file. Under `phantora run` each run has its own token, so
  // runs going at once (a sweep with --parallel) do not read each other's id.
  const char* token = std::getenv("PHANTORA_TOKEN");
  std::string uid_file = token != nullptr && *token != '\0'
                             ? "/tmp/nccl_perf-" + std::string(token).substr(0, 16) + ".uid"
                             : "/tmp/nccl_perf.uid";
  int opt;
  while ((opt = getopt(argc, argv, "b:e:f:n:w:o:u:")) != -1) {
    switch (opt) {
      case 'b':
        min_bytes = parse_size(optarg);
        break;
      case 'e':
        max_bytes = parse_size(optarg);
        break;
      case 'f':
        factor = std::atof(optarg);
        break;
      case 'n':
        iters = std::atoi(optarg);
        break;
      case 'w':
        warmup = std::atoi(optarg);
        break;
      case 'o':
        ops = optarg;
        break;
      case 'u':
        uid_file = optarg;
        break;
      default:
        std::fprintf(stderr,
                     "usage: %s [-b min] [-e max] [-f factor] [-n iters] [-w warmup] [-o ops] [-u "
                     "uid-file]\n",
                     argv[0]);
        return 2;
    }
  }
  const char* host_env = std::getenv("PHANTORA_HOST");
  const char* hosts_env = std::getenv("PHANTORA_HOSTS");
  const int host = host_env ? std::atoi(host_env) : 0;
  const int hosts = hosts_env ? std::atoi(hosts_env) : 1;
  int gpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&gpus));
  const int n = hosts * gpus;

  // Host 0 publishes the id; the others wait for the file (written whole, then renamed).
  ncclUniqueId id;
  if (host == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string tmp = uid_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    std::fwrite(&id, sizeof(id), 1, f);
    std::fclose(f);
    std::rename(tmp.c_str(), uid_file.c_str());
  } else {
    for (;;) {
      FILE* f = std::fopen(uid_file.c_str(), "rb");
      if (f != nullptr && std::fread(&id, sizeof(id), 1, f) == 1) {
        std::fclose(f);
        break;
      }
      if (f != nullptr) std::fclose(f);
      // A raw system call: under phantora a sleep moves the thread's simulated clock, and this
      // real-time wait for rank 0's file is a start-up detail the timings must not include.
      const timespec pause{0, 10 * 1000000L};
      syscall(SYS_nanosleep, &pause, nullptr);
    }
  }

  std::vector<ncclComm_t> comms(gpus);
  std::vector<cudaStream_t> streams(gpus);
  std::vector<void*> send(gpus), recv(gpus);
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < gpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    NCCL_CHECK(ncclCommInitRank(&comms[g], n, id, host * gpus + g));
  }
  NCCL_CHECK(ncclGroupEnd());
  for (int g = 0; g < gpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&send[g], max_bytes));
    CUDA_CHECK(cudaMalloc(&recv[g], max_bytes));
  }
  if (host == 0) {
    std::printf("# nccl_perf: %d hosts x %d GPUs = %d ranks, %d iterations after %d warm-up\n",
                hosts, gpus, n, iters, warmup);
    std::printf("%-15s %14s %12s %6s %12s %10s %10s\n", "# op", "size(B)", "count", "type",
                "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  }
  size_t start = 0;
  while (start < ops.size()) {
    const size_t comma = ops.find(',', start);
    const std::string op =
        ops.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? ops.size() : comma + 1;
    for (size_t bytes = min_bytes; bytes <= max_bytes;
         bytes = static_cast<size_t>(bytes * factor)) {
      if (bytes / sizeof(float) < static_cast<size_t>(n)) continue;
      const size_t rounded = bytes / sizeof(float) / n * n * sizeof(float);
      cudaEvent_t begin, end;
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(cudaEventCreate(&begin));
      CUDA_CHECK(cudaEventCreate(&end));
      for (int it = -warmup; it < iters; ++it) {
        if (it == 0) CUDA_CHECK(cudaEventRecord(begin, streams[0]));
        NCCL_CHECK(ncclGroupStart());
        for (int g = 0; g < gpus; ++g)
          issue(op, send[g], recv[g], rounded, n, host * gpus + g, comms[g], streams[g]);
        NCCL_CHECK(ncclGroupEnd());
      }
      CUDA_CHECK(cudaEventRecord(end, streams[0]));
      for (int g = 0; g < gpus; ++g) CUDA_CHECK(cudaStreamSynchronize(streams[g]));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
      const double us = ms * 1e3 / iters;
      const double algbw = rounded / (us * 1e-6) / 1e9;
      if (host == 0) {
        std::printf("%-15s %14zu %12zu %6s %12.2f %10.2f %10.2f\n", op.c_str(), rounded,
                    rounded / sizeof(float), "float", us, algbw,
                    algbw * Op{op.c_str()}.busbw_factor(n));
      }
      CUDA_CHECK(cudaEventDestroy(begin));
      CUDA_CHECK(cudaEventDestroy(end));
    }
  }
  for (int g = 0; g < gpus; ++g) NCCL_CHECK(ncclCommDestroy(comms[g]));
  if (host == 0) unlink(uid_file.c_str());
  return 0;
}
