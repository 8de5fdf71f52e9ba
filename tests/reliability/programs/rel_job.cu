// The reliability tests' job: one process per GPU (started by per_gpu_launch.sh, as torchrun
// would), a training-like loop in which compute overlaps communication as in DDP: each step
// runs k "backward" kernels on a compute stream; each produces a bucket of gradients that a
// communication stream all-reduces (after an event) while the next kernel runs; the next step
// waits for the last bucket.
//
//   rel_job -u DIR [-m world|rails] [-s bytes] [-n steps] [-k kernels per step]
//           [-d RANK:MS] [-w] [-p MS] [-x] [-g CTAS]
//
//   -m world   one communicator of every rank (default)
//      rails   one communicator per local GPU index (GPU 0 of every host, GPU 1 of every
//              host, ...): with one NIC per host, their traffic shares it
//   -d R:MS    rank R spends MS ms of real CPU time before its first step (late in real time;
//              in --cpu-time model CPU time costs nothing, so it stays early in simulated time)
//   -w         invisible wait (with -m rails): rank 1 waits in a named pipe (something the
//              simulator cannot see) that rank 0 writes only after its first step completed;
//              rank 0's step needs the network to advance while rank 1 waits
//   -p MS      every step also spins MS ms of real CPU time (keeps a run going for fault tests)
//   -x         print "rank R pid P" first and "rank R step I" after each step (flushed)
//   -g CTAS    launch each compute kernel with CTAS blocks (default 1: it fits beside NCCL's
//              CTAs; one per SM or more: it runs on the SMs an all-reduce leaves)
//
// Output (every rank): "rank R step_us <mean simulated us per step>", "rank R total_us <us>".
// The unique ids go through files in DIR (rank 0 or the host-0 rank publishes).
#include <fcntl.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "common.cuh"

__global__ void rel_compute(float* x) {
  if (x != nullptr) x[threadIdx.x] += 1.0f;
}

// Spins `ms` of the thread's real CPU time (CPU-time clocks are never simulated).
static void spin_ms(int ms) {
  auto cpu_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
  };
  const long long until = cpu_ns() + ms * 1000000LL;
  volatile unsigned sink = 0;
  while (cpu_ns() < until) sink = sink + 1;
}

int main(int argc, char** argv) {
  std::string dir = ".", mode = "world";
  size_t bytes = 64 << 20;
  int steps = 4, kernels = 2, delay_rank = -1, delay_ms = 0, spin = 0, ctas = 1;
  bool invisible_wait = false, verbose = false;
  int opt;
  while ((opt = getopt(argc, argv, "u:m:s:n:k:d:wp:xg:")) != -1) {
    switch (opt) {
      case 'u':
        dir = optarg;
        break;
      case 'm':
        mode = optarg;
        break;
      case 's':
        bytes = parse_size(optarg);
        break;
      case 'n':
        steps = std::atoi(optarg);
        break;
      case 'k':
        kernels = std::atoi(optarg);
        break;
      case 'd':
        std::sscanf(optarg, "%d:%d", &delay_rank, &delay_ms);
        break;
      case 'w':
        invisible_wait = true;
        break;
      case 'p':
        spin = std::atoi(optarg);
        break;
      case 'x':
        verbose = true;
        break;
      case 'g':
        ctas = std::atoi(optarg);
        break;
      default:
        return 2;
    }
  }
  const int rank = env_int("RANK", 0), world = env_int("WORLD_SIZE", 1);
  const int local = env_int("LOCAL_RANK", 0), host = env_int("PHANTORA_HOST", 0);
  const int hosts = env_int("PHANTORA_HOSTS", 1);
  if (verbose) {
    std::printf("rank %d pid %d\n", rank, static_cast<int>(getpid()));
    std::fflush(stdout);
  }
  CUDA_CHECK(cudaSetDevice(0));  // CUDA_VISIBLE_DEVICES picks the host's GPU
  ncclComm_t comm;
  if (mode == "world") {
    const ncclUniqueId id = exchange_id(dir + "/world", rank == 0);
    NCCL_CHECK(ncclCommInitRank(&comm, world, id, rank));
  } else {
    const ncclUniqueId id = exchange_id(dir + "/rail" + std::to_string(local), host == 0);
    NCCL_CHECK(ncclCommInitRank(&comm, hosts, id, host));
  }
  cudaStream_t compute, comms;
  CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&comms, cudaStreamNonBlocking));
  float* grad;
  CUDA_CHECK(cudaMalloc(&grad, bytes));
  cudaEvent_t begin, end, grads_ready, comm_done;
  CUDA_CHECK(cudaEventCreate(&begin));
  CUDA_CHECK(cudaEventCreate(&end));
  CUDA_CHECK(cudaEventCreateWithFlags(&grads_ready, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&comm_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaStreamSynchronize(compute));

  if (rank == delay_rank && delay_ms > 0) {
    spin_ms(delay_ms);
  }
  const std::string go = dir + "/go";
  const size_t count = bytes / sizeof(float);
  CUDA_CHECK(cudaEventRecord(begin, compute));
  for (int step = 0; step < steps; ++step) {
    if (invisible_wait && rank == 1 && step == 0) {
      // Waits for rank 0 outside CUDA, blocked in a pipe as in a TCPStore get or a Gloo barrier.
      mkfifo(go.c_str(), 0600);
      const int fd = open(go.c_str(), O_RDONLY);
      char byte = 0;
      if (fd < 0 || read(fd, &byte, 1) != 1) {
        std::fprintf(stderr, "rank 1: reading %s failed\n", go.c_str());
        return 1;
      }
      close(fd);
    }
    // Backward: each kernel produces one bucket of gradients, all-reduced on the communication
    // stream while the next kernel runs (DDP's overlap); the optimizer step (the next step's
    // first kernel) waits for every bucket.
    const size_t bucket = count / kernels;
    for (int k = 0; k < kernels; ++k) {
      rel_compute<<<ctas, 32, 0, compute>>>(grad);
      CUDA_CHECK(cudaEventRecord(grads_ready, compute));
      CUDA_CHECK(cudaStreamWaitEvent(comms, grads_ready, 0));
      NCCL_CHECK(ncclAllReduce(grad + k * bucket, grad + k * bucket, bucket, ncclFloat, ncclSum,
                               comm, comms));
    }
    CUDA_CHECK(cudaEventRecord(comm_done, comms));
    CUDA_CHECK(cudaStreamWaitEvent(compute, comm_done, 0));
    // The host runs at most one step ahead of the GPUs, as a training loop's .item() makes it.
    CUDA_CHECK(cudaEventSynchronize(grads_ready));
    if (invisible_wait && rank == 0 && step == 0) {
      CUDA_CHECK(cudaEventSynchronize(comm_done));
      mkfifo(go.c_str(), 0600);
      const int fd = open(go.c_str(), O_WRONLY);
      if (fd < 0 || write(fd, "g", 1) != 1) {
        std::fprintf(stderr, "rank 0: writing %s failed\n", go.c_str());
        return 1;
      }
      close(fd);
    }
    if (spin > 0) spin_ms(spin);
    if (verbose) {
      std::printf("rank %d step %d\n", rank, step);
      std::fflush(stdout);
    }
  }
  CUDA_CHECK(cudaStreamWaitEvent(compute, comm_done, 0));
  CUDA_CHECK(cudaEventRecord(end, compute));
  CUDA_CHECK(cudaEventSynchronize(end));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
  std::printf("rank %d step_us %.3f\nrank %d total_us %.3f\n", rank, ms * 1e3 / steps, rank,
              ms * 1e3);
  NCCL_CHECK(ncclCommDestroy(comm));
  return 0;
}
