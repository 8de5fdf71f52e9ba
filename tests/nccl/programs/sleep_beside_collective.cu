// A thread that sleeps in short steps beside collectives that last longer than each step
// (docs/time.md, "Sleeps and timed waits"): a progress or heartbeat thread that also asks the
// runtime something. One process drives 2 GPUs; run in zero mode. Thread "ticker" makes a CUDA
// call (so its clock bounds the simulation) and then sleeps 1 ms at a time, 20 times. The main
// thread all-reduces 1 GiB over both GPUs and synchronises, 5 rounds of about 2.9 ms each. A
// sleep holds the process's bound at its wake-up and comes due once the rest of the process is
// there; the main thread, blocked in the synchronisation, gets there only as the network is
// simulated past the wake-up, which that bound holds back. The daemon says how far it got
// (wire::Progress), so each sleep comes due while the round it falls in is still running: the
// ticker notes how many rounds the main thread had finished then. Prints each round's end and
// each tick (its simulated time and the rounds finished when it came due), in simulated ms
// from the main thread's first round, and how many sleeps woke early.
//
// With the argument `query` the main thread waits for each round as nccl-tests does, polling
// each GPU's stream with cudaStreamQuery until both are done. A query goes on from the thread's
// own clock whatever its answer, so it need not wait for the round's end: told by the daemon
// that the answer comes after its clock, it answers "not ready" at once, the poll moves the
// thread's clock to where the daemon got, and the sleep comes due as before (docs/time.md,
// "A sleep beside a query").
#include <pthread.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "common.cuh"

// Simulated time, as the program reads it (docs/time.md, "Clocks the program reads").
double sim_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Polls each stream until all are done, as nccl-tests waits for its GPUs.
void poll_until_done(const std::vector<cudaStream_t>& streams) {
  std::vector<bool> done(streams.size(), false);
  for (size_t left = streams.size(); left > 0;) {
    for (size_t g = 0; g < streams.size(); ++g) {
      if (done[g]) continue;
      const cudaError_t e = cudaStreamQuery(streams[g]);
      if (e == cudaErrorNotReady) continue;
      CUDA_CHECK(e);
      done[g] = true;
      --left;
    }
  }
}

int main(int argc, char** argv) {
  const bool query = argc > 1 && std::strcmp(argv[1], "query") == 0;
  const int gpus = 2, rounds = 5, ticks = 20;
  std::vector<ncclComm_t> comms(gpus);
  NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, nullptr));
  std::vector<cudaStream_t> streams(gpus);
  std::vector<void*> bufs(gpus);
  const size_t bytes = size_t{1} << 30;
  for (int g = 0; g < gpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&bufs[g], bytes));
  }
  const double origin = sim_ms();
  std::atomic<bool> called{false};
  std::atomic<int> rounds_done{0};
  std::vector<double> tick_ms(ticks);
  std::vector<int> tick_rounds(ticks);
  int woke_early = 0;
  std::thread ticker([&] {
    pthread_setname_np(pthread_self(), "ticker");
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));  // its first CUDA call: its clock bounds the simulation
    called.store(true);
    for (int i = 0; i < ticks; ++i) {
      const timespec step{0, 1'000'000};
      if (nanosleep(&step, nullptr) != 0) ++woke_early;
      tick_rounds[i] = rounds_done.load();
      tick_ms[i] = sim_ms() - origin;
    }
  });
  while (!called.load()) {
  }
  for (int r = 0; r < rounds; ++r) {
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < gpus; ++g) {
      NCCL_CHECK(ncclAllReduce(bufs[g], bufs[g], bytes / sizeof(float), ncclFloat, ncclSum,
                               comms[g], streams[g]));
    }
    NCCL_CHECK(ncclGroupEnd());
    if (query) {
      poll_until_done(streams);
    } else {
      for (int g = 0; g < gpus; ++g) CUDA_CHECK(cudaStreamSynchronize(streams[g]));
    }
    rounds_done.store(r + 1);
    std::printf("round_end_ms %.6f\n", sim_ms() - origin);
  }
  ticker.join();
  for (int i = 0; i < ticks; ++i) std::printf("tick %.6f %d\n", tick_ms[i], tick_rounds[i]);
  std::printf("woke_early %d\n", woke_early);
  for (ncclComm_t c : comms) NCCL_CHECK(ncclCommDestroy(c));
  std::printf("done 1\n");
  return 0;
}
