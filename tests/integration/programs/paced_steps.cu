// A training loop's shape at a walking pace, for the progress line (check.py, case
// progress_terminal): <steps> steps, each 100 launches of the pinned kernel `step` (12.5 us
// each in times.csv) timed with events and printed as "step i/N | step time X ms" (the form
// `phantora run` reads step times from), then <pause_ms> of real time outside the simulation
// (a raw system call: under phantora a sleep moves the thread's simulated clock), so that the
// run lasts long enough on the wall clock for the progress line to be redrawn between steps.
// Usage: paced_steps <steps> <pause_ms>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

#include "check.cuh"

__global__ void step(int i) {
  (void)i;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int steps = std::atoi(argv[1]);
  const int pause_ms = std::atoi(argv[2]);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int s = 1; s <= steps; ++s) {
    CHECK(cudaEventRecord(start, 0));
    for (int i = 0; i < 100; ++i) step<<<1, 1>>>(i);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    std::printf("step %d/%d | step time %.3f ms\n", s, steps, elapsed_us(start, stop) / 1e3);
    std::fflush(stdout);
    const timespec pause{pause_ms / 1000, (pause_ms % 1000) * 1000000L};
    syscall(SYS_nanosleep, &pause, nullptr);
  }
  return 0;
}
