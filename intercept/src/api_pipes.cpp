// Pipes carry their writers' clocks (docs/time.md, "Time carried by pipes"): pipe and pipe2
// track the pipes the job makes, write stamps each write with its thread's clock, and a read
// moves its thread's clock to the clock its last byte was written at, when that is later. A
// DataLoader's worker process thus hands its batch to the rank at the time the worker's CPU
// time (measured mode) says it was ready, not at the rank's own clock.
//
// The table lives in the run's private directory (every process of the job on this machine
// maps the same file: forked, spawned or forkserver workers alike) or, without one (a run whose
// daemon listens on TCP), in shared memory that forked processes inherit.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "host_timelines.hpp"
#include "job_pipes.hpp"
#include "libc_hooks.hpp"
#include "pipe_clocks.hpp"

namespace phantora::shim {
namespace {

void* map_table() {
  const size_t size = PipeClocks::bytes();
  const char* socket = std::getenv("PHANTORA_SOCKET");
  if (socket != nullptr) {
    std::string path(socket);
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos) {
      path = path.substr(0, slash + 1) + "pipe-clocks";
      const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd >= 0) {
        struct stat st {};
        // The first process sizes it (zeros); later ones find it sized.
        const bool sized = ::fstat(fd, &st) == 0 &&
                           (static_cast<size_t>(st.st_size) == size || ::ftruncate(fd, size) == 0);
        void* p =
            sized ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
        ::close(fd);
        if (p != MAP_FAILED) return p;
      }
    }
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// The table, mapped on first use; null if it cannot be (the pipes then carry no clocks).
PipeClocks* table() {
  static PipeClocks* const t = [] {
    void* memory = map_table();
    return memory != nullptr ? new PipeClocks(memory) : nullptr;
  }();
  return t;
}

// The calls of this thread are the program's, in a process of the job. The warm-rank server
// (tools/python/phantora_warm.py) is none: it runs no job, and its clock (its imports' CPU time)
// must not reach the rank stub that reads its word that it listens. The ranks it forks drop its
// variable when they take their own environment.
bool job_call() {
  return active() && std::getenv("PHANTORA_WARM_SERVER") == nullptr;
}

// The inode of `fd` when this thread's call on it is the program's and it is a pipe the job
// made, else 0.
uint64_t job_pipe(int fd) {
  if (!active()) return 0;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return 0;
  PipeClocks* t = table();
  return t != nullptr && t->tracked(st.st_ino) && job_call() ? st.st_ino : 0;
}

void track(const int fds[2]) {
  struct stat st {};
  PipeClocks* t = table();
  if (t != nullptr && ::fstat(fds[0], &st) == 0) t->track(st.st_ino);
}

// This thread's clock, its CPU time charged (measured mode).
int64_t clock_now_ps() {
  Timelines::charge_cpu_now();
  return Timelines::self().clock_ps.load();
}

}  // namespace

bool polls_only_job_pipes(const pollfd* fds, nfds_t n) {
  // Descriptors below 0 are not polled (a poll of none of them is a sleep): they neither count
  // nor disqualify.
  bool any = false;
  for (nfds_t i = 0; i < n; ++i) {
    if (fds[i].fd < 0) continue;
    if (job_pipe(fds[i].fd) == 0) return false;
    any = true;
  }
  return any;
}

}  // namespace phantora::shim

using namespace phantora::shim;

extern "C" {

int pipe(int fds[2]) noexcept {
  PHANTORA_REAL(pipe);
  const int rc = real_pipe(fds);
  if (rc == 0 && job_call()) track(fds);
  return rc;
}

int pipe2(int fds[2], int flags) noexcept {
  PHANTORA_REAL(pipe2);
  const int rc = real_pipe2(fds, flags);
  if (rc == 0 && job_call()) track(fds);
  return rc;
}

ssize_t write(int fd, const void* buf, size_t n) {
  PHANTORA_REAL(write);
  const uint64_t inode = job_pipe(fd);
  if (inode == 0) return real_write(fd, buf, n);
  table()->before_write(inode, clock_now_ps());
  const ssize_t written = real_write(fd, buf, n);
  if (written > 0) table()->after_write(inode, static_cast<size_t>(written));
  return written;
}

ssize_t read(int fd, void* buf, size_t n) {
  PHANTORA_REAL(read);
  const uint64_t inode = job_pipe(fd);
  const ssize_t got = real_read(fd, buf, n);
  if (inode != 0 && got > 0) {
    if (const auto written_ps = table()->after_read(inode, static_cast<size_t>(got))) {
      Timelines::charge_cpu_now();
      Timelines::advance_to(*written_ps);
    }
  }
  return got;
}

}  // extern "C"
