// A rank and a worker process it forked, as a DataLoader's (docs/time.md, "Time carried by
// pipes"). Usage: pipe_worker <idle_ms> <work_ms>
//
// The rank (it allocates GPU memory) computes for <idle_ms> of real time without a call the
// shim sees, asks the worker for a batch through one pipe and blocks reading the answer from
// another. The worker, which never calls CUDA, polls for the request every 20 ms, computes
// <work_ms> of its own CPU time and answers with what it measured. The rank prints its clock at
// the request and at the answer, and the worker's CPU time and the polls it saw time out.
//
// pipe_worker <idle_ms> <work_ms> <deadline_ms>: the worker instead polls the request pipe, on
// which nothing comes, until its own clock has moved <deadline_ms>, then answers; the rank sends
// no request and waits for the answer.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>

#include "check.cuh"

using Clock = std::chrono::steady_clock;

int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The worker: ends with _exit, without the rank's exit handlers.
[[noreturn]] void worker(int requests, int answers, long work_ms, long deadline_ms) {
  int64_t timeouts = 0;
  if (deadline_ms > 0) {
    const Clock::time_point start = Clock::now();
    while (Clock::now() - start < std::chrono::milliseconds(deadline_ms)) {
      pollfd p{requests, POLLIN, 0};
      if (poll(&p, 1, 20) == 0) ++timeouts;
    }
    const int64_t answer[2] = {0, timeouts};
    if (write(answers, answer, sizeof(answer)) != sizeof(answer)) _exit(3);
    _exit(0);
  }
  for (;;) {
    pollfd p{requests, POLLIN, 0};
    const int rc = poll(&p, 1, 20);
    if (rc > 0) break;
    if (rc == 0) ++timeouts;
  }
  int64_t request = 0;
  if (read(requests, &request, sizeof(request)) != sizeof(request)) _exit(2);
  const int64_t cpu0 = thread_cpu_ns();
  cpu_work_us(work_ms * 1000);
  const int64_t answer[2] = {thread_cpu_ns() - cpu0, timeouts};
  if (write(answers, answer, sizeof(answer)) != sizeof(answer)) _exit(3);
  _exit(0);
}

int main(int argc, char** argv) {
  const long idle_ms = argc > 1 ? std::atol(argv[1]) : 300;
  const long work_ms = argc > 2 ? std::atol(argv[2]) : 100;
  const long deadline_ms = argc > 3 ? std::atol(argv[3]) : 0;
  int requests[2], answers[2];
  if (pipe(requests) != 0 || pipe(answers) != 0) return 2;
  const Clock::time_point t0 = Clock::now();
  const pid_t child = fork();
  if (child == 0) worker(requests[0], answers[1], work_ms, deadline_ms);
  auto clock_us = [&] {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));  // a rank
  cpu_work_us(idle_ms * 1000);     // no call the shim sees: free in model mode
  const double request_us = clock_us();
  const int64_t request = 1;
  if (deadline_ms == 0 && write(requests[1], &request, sizeof(request)) != sizeof(request))
    return 3;
  int64_t answer[2] = {0, 0};
  if (read(answers[0], answer, sizeof(answer)) != sizeof(answer)) return 4;
  const double answer_us = clock_us();
  std::printf("request_us %.3f\n", request_us);
  std::printf("answer_us %.3f\n", answer_us);
  std::printf("worker_cpu_us %.3f\n", static_cast<double>(answer[0]) / 1000.0);
  std::printf("worker_poll_timeouts %lld\n", static_cast<long long>(answer[1]));
  waitpid(child, nullptr, 0);
  CHECK(cudaFree(d));
  return 0;
}
