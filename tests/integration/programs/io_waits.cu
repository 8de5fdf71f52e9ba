// Another thread's sleep against the thread doing the GPU work while it waits for input
// (docs/time.md, "Sleeps and timed waits"). Usage: io_waits poll | read | self_fed.
//
// poll, read: the main thread reads 40 bytes that a child process writes 50 ms of real time
// apart, each through a poll with a 900 ms timeout or a blocking read, while a thread of its own
// sleeps 1 s and then takes and lets go of a lock (a semaphore) that main takes after its reads.
// The reads take about 2 s of real time and no simulated time; the sleep, 1 s of simulated
// time, is not over before main's clock gets there: polling, main stands in it at its poll's
// end (0.9 s); blocked in a read from another process, at its own clock. So main takes the lock
// as it left it, at its own clock, and only its join of the sleeper moves it to the sleep's end;
// so also after 1.2 s of real time computing between its last read and the lock, with no call
// the shim sees (it was marked stalled in its waits, and counts again once it runs).
//
// self_fed: the byte main reads comes from its own thread, after a sleep of 10 ms. Blocked in the
// read, main holds the sleep back, but only for the catch-up limit of real time: then the sleep
// comes due (main may be waiting for it, as here), the thread writes, main reads the byte at
// the clock it was written at; the join takes the sleep's end. (The child of poll and read
// writes through raw system calls, which stamp no clock: main reads those at its own.)
#include <poll.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "check.cuh"

using Clock = std::chrono::steady_clock;

constexpr int kBytes = 40;

// The child: writes a byte every 50 ms of real time through raw system calls (the shim's clocks
// are not its business), then ends without the parent's exit handlers.
[[noreturn]] void feed(int fd) {
  for (int i = 0; i < kBytes; ++i) {
    timespec gap{0, 50'000'000};
    syscall(SYS_nanosleep, &gap, nullptr);
    const char c = 'x';
    syscall(SYS_write, fd, &c, 1);
  }
  _exit(0);
}

// One byte from `fd`: through a poll with a 900 ms timeout, or a blocking read. Counts the
// polls that timed out.
bool read_byte(int fd, bool poll_first, int& poll_timeouts) {
  if (poll_first) {
    pollfd p{fd, POLLIN, 0};
    const int rc = poll(&p, 1, 900);
    if (rc == 0) ++poll_timeouts;
    if (rc <= 0) return false;
  }
  char c;
  return read(fd, &c, 1) == 1;
}

// Spins `ms` of real time reading the clock through the kernel, not the C library: no call
// the shim sees.
void spin_real_ms(long ms) {
  timespec t0{}, t{};
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t0);
  do {
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1'000'000 < ms);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "poll";
  const bool self_fed = std::strcmp(mode, "self_fed") == 0;
  const bool poll_first = std::strcmp(mode, "poll") == 0;
  int fds[2];
  if (pipe(fds) != 0) return 2;
  pid_t child = -1;
  if (!self_fed) {
    child = fork();
    if (child == 0) feed(fds[1]);
    close(fds[1]);
  }

  const Clock::time_point t0 = Clock::now();
  auto since_us = [&] {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));  // main does CUDA work: the others' timeouts wait for it
  sem_t lock;
  sem_init(&lock, 0, 1);
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    std::this_thread::sleep_for(self_fed ? std::chrono::milliseconds(10) : std::chrono::seconds(1));
    if (self_fed) {
      const char c = 'x';
      if (write(fds[1], &c, 1) != 1) std::exit(3);
      return;
    }
    sem_wait(&lock);
    woke = true;
    sem_post(&lock);
  });

  const int bytes = self_fed ? 1 : kBytes;
  int got = 0;
  int poll_timeouts = 0;
  while (got < bytes)
    if (read_byte(fds[0], poll_first, poll_timeouts)) ++got;
  // Then the program computes for a while without a call the shim sees (as Python does between
  // two reads of a DataLoader): it still counts where it is.
  if (!self_fed) spin_real_ms(1200);
  sem_wait(&lock);
  const bool woke_before = woke.load();
  sem_post(&lock);
  std::printf("after_reads_us %.3f\n", since_us());
  std::printf("poll_timeouts %d\n", poll_timeouts);
  std::printf("sleeper_woke_before %d\n", woke_before ? 1 : 0);
  sleeper.join();
  std::printf("joined_us %.3f\n", since_us());
  if (child > 0) waitpid(child, nullptr, 0);
  CHECK(cudaFree(d));
  return 0;
}
