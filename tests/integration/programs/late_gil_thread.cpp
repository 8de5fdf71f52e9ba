// A thread made in C++ that asks for Python's GIL once the interpreter has begun to finalise,
// from a frame that may not throw: what PyTorch's autograd thread does when it drops the last
// reference to a tensor's Python object after the main thread has reached the interpreter's exit
// (docs/reliability.md, finding 14). late_gil_thread.py loads this with ctypes and passes
// CPython's own functions in, so nothing here needs Python's headers.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

namespace {

using GilEnsure = int (*)();
using IsFinalizing = int (*)();

std::atomic<bool> asking{false};    // about to ask for the GIL
std::atomic<bool> answered{false};  // the request returned (CPython never lets it)
std::atomic<long> thread_id{0};

// noexcept, as the frames of PyTorch's engine threads that release tensors are: an unwind that
// reaches it ends in std::terminate.
void ask_while_finalizing(GilEnsure ensure, IsFinalizing finalizing) noexcept {
  thread_id = static_cast<long>(gettid());
  while (finalizing() == 0) usleep(1000);
  asking = true;
  ensure();
  answered = true;
}

// The state letter of this process's thread `tid` in /proc ('S' sleeping, 'R' running...), or
// 0 once it has gone.
char thread_state(long tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return 0;
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const std::string stat(buf, n);
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

}  // namespace

extern "C" {

void start_late_thread(void* ensure, void* finalizing) {
  std::thread(ask_while_finalizing, reinterpret_cast<GilEnsure>(ensure),
              reinterpret_cast<IsFinalizing>(finalizing))
      .detach();
}

// Called (through ctypes, which lets go of the GIL meanwhile) by the main thread while the
// interpreter finalises: waits until the late thread has asked for the GIL and then stayed
// asleep for `settle_ms` without an answer, or has gone. Returns the thread's state letter
// at the end (0: gone), or '?' if it never asked within `limit_ms`.
int wait_for_late_thread(int settle_ms, int limit_ms) {
  int asleep_ms = 0;
  for (int waited = 0; waited < limit_ms; waited += 10) {
    usleep(10'000);
    if (!asking) continue;
    const char state = thread_state(thread_id);
    if (state == 0 || answered) return state;
    asleep_ms = state == 'S' ? asleep_ms + 10 : 0;
    if (asleep_ms >= settle_ms) return state;
  }
  return '?';
}

int late_thread_answered() {
  return answered ? 1 : 0;
}

}  // extern "C"
