// A stall the simulator cannot end by itself, and the shim's report of what holds it
// (docs/reliability.md, "What holds a stalled run"). One process drives 2 GPUs; run in zero mode
// with PHANTORA_HELD_BOUND_REPORT_MS=1000. Thread "spinner" makes a CUDA call, then computes for
// 3 s of real time without one, so its clock, and with it the process bound, stands at 0. The
// main thread all-reduces 1 MiB over both GPUs and synchronises: the all-reduce ends only once
// the network has been simulated past its start, which the spinner's clock holds back. After
// about 1 s the shim names the spinner; after 3 s the spinner ends, the bound moves and the
// synchronisation returns. Meanwhile thread "poller" queries a completed event in a loop: one
// answer follows another, and the shim's reader must still watch the bound and report.
#include <pthread.h>

#include <atomic>
#include <vector>

#include "common.cuh"

// Real monotonic time: the system call itself is not interposed.
double real_s() {
  timespec t;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

int main() {
  const int gpus = 2;
  std::vector<ncclComm_t> comms(gpus);
  NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, nullptr));
  std::vector<cudaStream_t> streams(gpus);
  std::vector<void*> bufs(gpus);
  const size_t bytes = 1 << 20;
  for (int g = 0; g < gpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&bufs[g], bytes));
  }
  std::atomic<bool> called{false};
  long spinner_tid = 0;
  std::thread spinner([&] {
    pthread_setname_np(pthread_self(), "spinner");
    spinner_tid = static_cast<long>(syscall(SYS_gettid));
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));  // its first CUDA call: its clock bounds the simulation
    called.store(true);
    const double until = real_s() + 3.0;
    volatile double x = 0;
    while (real_s() < until) x = x + 1;  // computes on the CPU: never counted as stalled
  });
  while (!called.load()) {
  }
  // An event recorded on an idle stream is complete at once; each query is still answered by
  // the simulator, so the reader receives answers back to back while the spinner computes.
  cudaEvent_t done_event;
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaEventCreate(&done_event));
  CUDA_CHECK(cudaEventRecord(done_event, streams[0]));
  std::atomic<long> polls{0};
  std::thread poller([&] {
    pthread_setname_np(pthread_self(), "poller");
    CUDA_CHECK(cudaSetDevice(0));
    const double until = real_s() + 2.5;
    while (real_s() < until) {
      const cudaError_t e = cudaEventQuery(done_event);  // not ready until its first answer
      if (e != cudaSuccess && e != cudaErrorNotReady) CUDA_CHECK(e);
      polls.fetch_add(1);
    }
  });
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < gpus; ++g) {
    NCCL_CHECK(ncclAllReduce(bufs[g], bufs[g], bytes / sizeof(float), ncclFloat, ncclSum, comms[g],
                             streams[g]));
  }
  NCCL_CHECK(ncclGroupEnd());
  const double t0 = real_s();
  for (int g = 0; g < gpus; ++g) CUDA_CHECK(cudaStreamSynchronize(streams[g]));
  std::printf("sync_waited_real_s %.3f\n", real_s() - t0);
  spinner.join();
  poller.join();
  std::printf("spinner_tid %ld\n", spinner_tid);
  std::printf("polls %ld\n", polls.load());
  for (ncclComm_t c : comms) NCCL_CHECK(ncclCommDestroy(c));
  std::printf("done 1\n");
  return 0;
}
