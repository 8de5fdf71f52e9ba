// The C library's clocks, sleeps and waits, as the program sees them under phantora: every clock
// it reads is its thread's simulated host clock (docs/time.md, "Clocks the program reads").
//
// - clock_gettime (MONOTONIC, BOOTTIME, their RAW and COARSE forms: the thread's clock;
//   REALTIME and TAI: the run's epoch plus it), gettimeofday and time. CPU-time clocks stay real.
//   C++'s std::chrono and Python's time module read these.
// - Sleeps move the thread's clock by what they slept; a sleep or timed wait until a deadline
//   on a simulated clock waits for the simulated time left (the same span of real time), and a
//   wait that times out moves the clock to its deadline. So a loop that computes a deadline and
//   sleeps or waits until it ends neither spins for ever nor hangs, in any mode.
// - Condition variables, semaphores, thread creation and joins carry clocks between threads
//   (host_timelines.hpp): a thread released by another resumes no earlier than it.
//
// The launchers' processes (launcher_command.hpp: torchrun's agent, accelerate's and DeepSpeed's;
// `phantora run`'s helpers) keep real clocks: their timeouts must run in real time. So do the
// shim's own threads and calls (Runtime::in_shim), and any process run with
// PHANTORA_REAL_CLOCKS=1.
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "host_timelines.hpp"
#include "job_pipes.hpp"
#include "libc_hooks.hpp"
#include "python_gil.hpp"
#include "real_clock.hpp"
#include "runtime.hpp"

namespace phantora::shim {
namespace {

constexpr int64_t kNsPerS = 1'000'000'000;

// The run's epoch: REALTIME clocks read it plus the host clock, the same on every host.
int64_t epoch_ns() {
  static const int64_t epoch = [] {
    const char* v = std::getenv("PHANTORA_EPOCH_NS");
    const long long parsed = v != nullptr ? std::atoll(v) : 0;
    return parsed > 0 ? static_cast<int64_t>(parsed) : real_ns(CLOCK_REALTIME);
  }();
  return epoch;
}

enum class ClockKind { kReal, kMonotonic, kRealtime };

ClockKind kind_of(clockid_t c) {
  switch (c) {
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
      return ClockKind::kMonotonic;
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_TAI:
      return ClockKind::kRealtime;
    default:
      return ClockKind::kReal;  // CPU-time clocks and the alarm variants
  }
}

int64_t to_ns(const timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}
timespec to_timespec(int64_t ns) {
  if (ns < 0) ns = 0;
  return timespec{static_cast<time_t>(ns / kNsPerS), static_cast<long>(ns % kNsPerS)};
}

// A thread that reads the clock over and over while it does not move (model and zero modes:
// CPU time costs nothing) may be spinning until a deadline, and would spin forever. A spin is
// kSpinReads reads in a row, each within kSpinGapNs of real time of the one before, with the
// clock standing still; from then on every further read of the spin moves the clock by
// kSpinStepNs, so that the loop ends at its deadline (to within one step). The step is fixed,
// not the real time spun, so that model mode stays deterministic; the real-time gap only tells a
// tight loop from a program that does work between reads (Python's logging and PyTorch's
// DTensor read the clock thousands of times in a first step, seconds apart on a loaded
// machine: charging that real time gave a 3 s first step and, under CI load, 2.7 s steps).
constexpr int kSpinReads = 1000;
constexpr int64_t kSpinGapNs = 50'000;
constexpr int64_t kSpinStepNs = 1'000;
struct ClockSpin {
  int64_t value = -1;
  int reads = 0;
  int64_t last_real_ns = 0;
};
thread_local ClockSpin t_spin;

int64_t host_now_ns() {
  const int64_t t = Runtime::virtual_time_ns();
  const int64_t real = real_monotonic_ns();
  ClockSpin& s = t_spin;
  const bool tight = t == s.value && real - s.last_real_ns <= kSpinGapNs;
  s.last_real_ns = real;
  if (!tight) {
    s.value = t;
    s.reads = 0;
    return t;
  }
  if (++s.reads < kSpinReads) return t;
  Timelines::advance_to((t + kSpinStepNs) * 1000);
  s.value = Runtime::virtual_time_ns();
  return s.value;
}

// The simulated reading of a clock of kind `k` (not kReal).
int64_t simulated_ns(ClockKind k) {
  const int64_t t = host_now_ns();
  return k == ClockKind::kRealtime ? epoch_ns() + t : t;
}

// Converts an absolute deadline on simulated clock `c` into the same span of real time from now
// on real clock `c`.
// The real clock a simulated clock's deadlines are waited on.
clockid_t real_clock_for(clockid_t c) {
  return kind_of(c) == ClockKind::kRealtime ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

timespec real_deadline(clockid_t c, const timespec& deadline) {
  const int64_t left = to_ns(deadline) - simulated_ns(kind_of(c));
  return to_timespec(real_ns(real_clock_for(c)) + (left > 0 ? left : 0));
}

// The simulated time (host clock, ps) of an absolute deadline on clock `c`.
int64_t deadline_ps(clockid_t c, const timespec& deadline) {
  int64_t ns = to_ns(deadline);
  if (kind_of(c) == ClockKind::kRealtime) ns -= epoch_ns();
  return ns * 1000;
}

// glibc keeps a condition variable's clock in bit 1 of __wrefs (nptl's
// __PTHREAD_COND_CLOCK_MONOTONIC_MASK); pthread_cond_timedwait measures its deadline on it.
clockid_t clock_of(const pthread_cond_t* cond) {
  return (cond->__data.__wrefs & 2) != 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

// --- timeouts end where the rest of the process is --------------------------------------------
//
// A wait that times out lasts its span of real time and ends, in simulated time, at its
// deadline. On a machine every thread reads one clock, so it could not have ended before the
// program's other threads got there; here simulated time moves at its own pace, and a thread
// that wakes on a timeout every second of real time (PyTorch's NCCL watchdog, a Python thread in
// a sleep loop) would run seconds ahead of the threads that do the work, and carry that clock to
// them through whatever it hands on (a Python lock it releases, a condition variable it
// signals). A tensor-parallel job's step took 9 s that way. So once its real span is over the
// wait goes on, in slices of real time, while another thread that does CUDA work is behind the
// deadline, or a thread it started that has not yet waited, or a hand-off not yet taken up
// (Timelines::least_other_clock_ps; without the last two the watchdogs of a tensor-parallel job
// ran ahead while the main thread waited for the autograd engine's threads to start, and the
// main thread took their clock when it joined them at the end). `again` waits one slice and
// says whether the wait ended for its own reason meanwhile (signalled, posted, an fd ready, a
// signal). A wait that would go on for longer than kCatchUpLimitNs of real time (the program
// may wait in real time for something its other threads only do later, or the machine is loaded
// far beyond its cores) gives up: the thread wakes early, where its clock is, as a spurious
// wake-up or a signal would wake it (a condition-variable wait returns 0, a semaphore wait, sleep
// or poll EINTR with the time left), never ahead of the others. Programs wait again, from their
// own clock. Held back only by threads waiting for another process (a read from a pipe: they
// count at their clock), it comes due at its deadline instead, as they might be waiting for it.
//
// The slices start short and double up to kCatchUpLongestSliceNs: a wait that is reached soon
// notices within a millisecond, one that goes on costs a few wake-ups a second, not a thousand.
// A wait behind the others is the usual state of PyTorch's NCCL watchdogs (each 100 ms wait
// ends ahead of the step), four per rank: at 1 ms slices, 16 ranks woke 64,000 times a second
// and took half of a loaded 2-core machine, and a run stalled for minutes (docs/reliability.md,
// finding 10). A longer slice delays only the real time at which a reached deadline is noticed,
// never the simulated time the wait ends at; a signal, post or ready fd ends a slice at once.
constexpr int64_t kCatchUpFirstSliceNs = 1'000'000;
constexpr int64_t kCatchUpLongestSliceNs = 32'000'000;
constexpr int64_t kCatchUpLimitNs = 120'000'000'000;

// kCatchUpLimitNs, or PHANTORA_CATCH_UP_LIMIT_MS (the tests shorten it).
int64_t catch_up_limit_ns() {
  static const int64_t limit = [] {
    const char* v = std::getenv("PHANTORA_CATCH_UP_LIMIT_MS");
    const long long ms = v != nullptr ? std::atoll(v) : 0;
    return ms > 0 ? ms * 1'000'000 : kCatchUpLimitNs;
  }();
  return limit;
}

enum class CatchUp : uint8_t {
  kReached,  // the others reached the deadline: the wait timed out there
  kEnded,    // the wait ended for its own reason meanwhile
  kGaveUp,   // kCatchUpLimitNs passed first: the thread wakes early
};

// `again(slice_ns)` waits one slice of `slice_ns` real nanoseconds.
template <typename Again>
CatchUp catch_up(int64_t deadline_ps, Again&& again) {
  const int64_t since = real_monotonic_ns();
  int64_t slice = kCatchUpFirstSliceNs;
  while (Timelines::least_other_clock_ps() < deadline_ps) {
    if (real_monotonic_ns() - since > catch_up_limit_ns()) {
      // Held back only by threads waiting for another process: what they wait for may yet be
      // this thread's doing (a pipe it writes once its sleep is over), so the timeout comes due
      // as if they did not count, the limit's real time late, rather than never.
      return Timelines::least_other_clock_ps(false) >= deadline_ps ? CatchUp::kReached
                                                                   : CatchUp::kGaveUp;
    }
    if (again(slice)) return CatchUp::kEnded;
    slice = std::min(2 * slice, kCatchUpLongestSliceNs);
  }
  return CatchUp::kReached;
}

// A slice of `slice_ns` real nanoseconds from now on real clock `c`, as an absolute deadline.
timespec slice_end(clockid_t c, int64_t slice_ns) {
  return to_timespec(real_ns(c) + slice_ns);
}

// A thread released by the object it waited on: takes the hand-off, or the deadline if it
// timed out.
void after_timed_wait(const void* object, bool timed_out, int64_t deadline) {
  Timelines::after_wait(object);
  if (timed_out && deadline >= 0) Timelines::advance_to(deadline);
}

// A condition-variable wait until `deadline` on simulated clock `c`: `wait_until(real)` waits
// once until an absolute deadline on real_clock_for(c). Times out at the deadline once the
// others are there (catch_up); signalled meanwhile or given up, it returns 0 (a spurious
// wake-up).
template <typename WaitUntil>
int timed_cond_wait(const pthread_cond_t* cond, clockid_t c, const timespec& deadline,
                    WaitUntil&& wait_until) {
  Timelines::before_wait(cond);
  int rc = wait_until(real_deadline(c, deadline));
  if (rc == ETIMEDOUT && catch_up(deadline_ps(c, deadline), [&](int64_t slice) {
                           return wait_until(slice_end(real_clock_for(c), slice)) != ETIMEDOUT;
                         }) != CatchUp::kReached)
    rc = 0;
  after_timed_wait(cond, rc == ETIMEDOUT, deadline_ps(c, deadline));
  return rc;
}

// Sleeps `span` of real time for a sleep ending at simulated `end_ps`, then until the rest of the
// process is there. The thread's clock is at the end from the start (it cannot submit work
// before), so that two threads sleeping to different ends wake in their order. Returns
// clock_nanosleep's result; a signal that cuts the sleep short leaves `left` and the clock
// where the sleep was.
int sleep_until(int64_t end_ps, const timespec& span, timespec* left) {
  PHANTORA_REAL(clock_nanosleep);
  const int64_t from_ps = Timelines::self().clock_ps.load();
  Timelines::advance_to(end_ps);
  timespec rest{};
  const int rc = real_clock_nanosleep(CLOCK_MONOTONIC, 0, &span, &rest);
  if (rc != 0) {
    Timelines::rewind_to(from_ps + (to_ns(span) - to_ns(rest)) * 1000);
    if (left != nullptr) *left = rest;
    return rc;
  }
  // Between looks it waits on the daemon's word of how far the answers have got
  // (Timelines::answers_from): a thread blocked in a synchronisation reaches the end only
  // through it, since this sleep holds the process's bound, and with it the network, at the end.
  // A thread that blocks in a request moves the word too (a query's poll that went on asks again
  // from a later clock: Timelines::nudge_answer_watchers).
  const Timelines::AnswerWatch watch;
  uint32_t seen = Timelines::answers_from_moves();
  const CatchUp how = catch_up(end_ps, [&seen](int64_t slice_ns) {
    const bool whole = Timelines::wait_answers_from_move(seen, slice_ns);
    seen = Timelines::answers_from_moves();
    return !whole;
  });
  if (how == CatchUp::kGaveUp) {
    // Woken early, as by a signal, where the slowest of the others is: the rest is left.
    const int64_t at = std::max(from_ps, std::min(end_ps, Timelines::least_other_clock_ps()));
    Timelines::rewind_to(at);
    if (left != nullptr) *left = to_timespec((end_ps - at) / 1000);
    return EINTR;
  }
  return 0;
}

// A poll, select or epoll wait with a timeout of `ns`: while it waits the thread stands in the
// others' timeouts at the end of its own (Timeline::poll_end_ps), the time it goes on from if
// nothing is ready, and it does not end before them either. `wait(ms)` waits once with a timeout
// in milliseconds (the first time the program's own) and returns the call's result; a timeout
// moves the clock by `ns`.
template <typename Wait>
int poll_with_timeout(int64_t ns, Wait&& wait) {
  Timeline& self = Timelines::self();
  const int64_t end_ps = self.clock_ps.load() + ns * 1000;
  self.poll_end_ps.store(end_ps, std::memory_order_relaxed);
  int rc = wait(-1);
  if (rc == 0) {
    const CatchUp how = catch_up(end_ps, [&](int64_t slice) {
      rc = wait(static_cast<int>(slice / 1'000'000));
      return rc != 0;
    });
    if (how == CatchUp::kReached) Timelines::advance_to(end_ps);
    if (how == CatchUp::kGaveUp) {
      rc = -1;  // interrupted, as by a signal: the caller waits again from its own clock
      errno = EINTR;
    }
  }
  // Back from a wait that may have lasted long enough for the stall detector to mark it, the
  // thread runs the program again: it counts again before it stops counting as a poller, or
  // the code it runs before its next call would count nowhere (docs/reliability.md, finding 16).
  Timelines::self();
  self.poll_end_ps.store(-1, std::memory_order_relaxed);
  return rc;
}

// A timed mutex lock whose real span ran out: retries in slices until the others reach
// `end_ps`. Timed out at the deadline, or (given up) where the slowest of the others is: a timed
// lock cannot wake early.
template <typename Retry>
int finish_timed_lock(int64_t end_ps, Retry&& retry) {
  int rc = ETIMEDOUT;
  const CatchUp how = catch_up(end_ps, [&](int64_t slice) {
    rc = retry(slice);
    return rc != ETIMEDOUT;
  });
  if (how == CatchUp::kEnded) return rc;
  Timelines::advance_to(
      how == CatchUp::kReached ? end_ps : std::min(end_ps, Timelines::least_other_clock_ps()));
  return ETIMEDOUT;
}

// CPython's GIL is a lock, and like a mutex's its waits carry no clock (docs/time.md, "Hand-offs
// between threads"): a thread that wants it waits on its condition variable for the switch
// interval (5 ms) and, when that times out, asks the holder to let go; the holder, once it has,
// waits on a second one until another thread has taken it. Neither wait is for time or for work.
// Treated as timed waits and hand-offs, they turned the real time a holder kept the GIL
// (computing, free in `model` mode, or off the CPU on a loaded host) into simulated time, 5 ms
// a turn, and passed the clock of whichever thread took the GIL to the one that let it go. So on
// the GIL's condition variables (python_gil.hpp) nothing is handed on and no clock moves, and
// the waiting thread counts as running for the others' timeouts (Timeline::gil_waiting): it
// goes on as soon as the holder lets go. Left out, it let another thread's sleep come due: a
// TorchTitan rank compiling its model let tqdm's monitor thread end its 10 s sleep and hand its
// clock, 10 s ahead, to the main thread through tqdm's lock. (That still happens, more rarely,
// while the main thread waits where the shim cannot see: docs/reliability.md, finding 15.)
template <typename Wait>
int gil_wait(Wait&& wait) {
  Timelines::set_gil_waiting(true);
  const int rc = wait();
  Timelines::set_gil_waiting(false);
  return rc;
}

}  // namespace

void forget_clock_reads() {
  t_spin = ClockSpin{};
}

}  // namespace phantora::shim

using namespace phantora::shim;

extern "C" {

// --- clocks ---------------------------------------------------------------------------------

int clock_gettime(clockid_t clock, struct timespec* ts) noexcept {
  const ClockKind k = kind_of(clock);
  if (k == ClockKind::kReal || !active()) return real_clock_gettime(clock, ts);
  *ts = to_timespec(simulated_ns(k));
  return 0;
}

int gettimeofday(struct timeval* tv, void* tz) noexcept {
  PHANTORA_REAL(gettimeofday);
  if (!active()) return real_gettimeofday(tv, tz);
  if (tz != nullptr) std::memset(tz, 0, sizeof(struct timezone));
  const int64_t ns = simulated_ns(ClockKind::kRealtime);
  tv->tv_sec = static_cast<time_t>(ns / kNsPerS);
  tv->tv_usec = static_cast<suseconds_t>((ns % kNsPerS) / 1000);
  return 0;
}

time_t time(time_t* out) noexcept {
  PHANTORA_REAL(time);
  if (!active()) return real_time(out);
  const time_t t = static_cast<time_t>(simulated_ns(ClockKind::kRealtime) / kNsPerS);
  if (out != nullptr) *out = t;
  return t;
}

// --- sleeps ---------------------------------------------------------------------------------

int nanosleep(const struct timespec* req, struct timespec* rem) {
  PHANTORA_REAL(nanosleep);
  if (req == nullptr || !active()) return real_nanosleep(req, rem);
  const int rc = sleep_until(Timelines::self().clock_ps.load() + to_ns(*req) * 1000, *req, rem);
  if (rc == 0) return 0;
  errno = rc;
  return -1;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  PHANTORA_REAL(clock_nanosleep);
  const ClockKind k = kind_of(clock);
  if (req == nullptr || k == ClockKind::kReal || !active())
    return real_clock_nanosleep(clock, flags, req, rem);
  if ((flags & TIMER_ABSTIME) != 0) {
    // Until a simulated deadline: sleep the simulated time left, and wake at the deadline. (An
    // absolute sleep cut short is simply called again; it has no `rem`.)
    const int64_t left = to_ns(*req) - simulated_ns(k);
    if (left <= 0) return 0;
    return sleep_until(deadline_ps(clock, *req), to_timespec(left), nullptr);
  }
  return sleep_until(Timelines::self().clock_ps.load() + to_ns(*req) * 1000, *req, rem);
}

int usleep(useconds_t us) {
  const timespec req = to_timespec(static_cast<int64_t>(us) * 1000);
  return nanosleep(&req, nullptr);
}

unsigned int sleep(unsigned int seconds) {
  const timespec req{static_cast<time_t>(seconds), 0};
  timespec rem{};
  if (nanosleep(&req, &rem) == 0) return 0;
  return static_cast<unsigned int>(rem.tv_sec + (rem.tv_nsec > 0 ? 1 : 0));
}

// --- waits with timeouts that the program computed from its clock ---------------------------

}  // extern "C"

namespace {
// A process that is no rank (a DataLoader's worker) polling only the job's pipes waits for
// another process's message, which carries the time it was sent (api_pipes.cpp): the real
// timeouts its wait takes meanwhile, as long as the rank's step is in real time, are not its
// simulated time, and would put every batch it then hands back that far ahead of the rank. So
// they move no clock, for the catch-up limit of real time since the thread last got something:
// a loop that polls until its clock reaches a deadline (no DataLoader's) then goes on, slowly,
// rather than never.
thread_local int64_t t_message_awaited_since_ns = -1;

bool waits_for_a_message(const pollfd* fds, nfds_t n) {
  if (Runtime::get().is_client() || !polls_only_job_pipes(fds, n)) return false;
  const int64_t now = real_monotonic_ns();
  if (t_message_awaited_since_ns < 0) t_message_awaited_since_ns = now;
  return now - t_message_awaited_since_ns <= catch_up_limit_ns();
}

// What a poll returned: anything but a timeout ends the wait for a message.
int polled(int rc) {
  if (rc != 0) t_message_awaited_since_ns = -1;
  return rc;
}
}  // namespace

extern "C" {

int poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  PHANTORA_REAL(poll);
  if (timeout_ms <= 0 || !active()) return real_poll(fds, n, timeout_ms);
  if (waits_for_a_message(fds, n)) return polled(real_poll(fds, n, timeout_ms));
  return polled(poll_with_timeout(static_cast<int64_t>(timeout_ms) * 1'000'000, [&](int ms) {
    return real_poll(fds, n, ms < 0 ? timeout_ms : ms);
  }));
}

int ppoll(struct pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask) {
  PHANTORA_REAL(ppoll);
  if (timeout == nullptr || to_ns(*timeout) <= 0 || !active())
    return real_ppoll(fds, n, timeout, mask);
  if (waits_for_a_message(fds, n)) return polled(real_ppoll(fds, n, timeout, mask));
  return polled(poll_with_timeout(to_ns(*timeout), [&](int ms) {
    const timespec slice = to_timespec(static_cast<int64_t>(ms) * 1'000'000);
    return real_ppoll(fds, n, ms < 0 ? timeout : &slice, mask);
  }));
}

int select(int nfds, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout) {
  PHANTORA_REAL(select);
  const int64_t ns = timeout != nullptr
                         ? static_cast<int64_t>(timeout->tv_sec) * kNsPerS + timeout->tv_usec * 1000
                         : -1;
  if (ns <= 0 || !active()) return real_select(nfds, r, w, e, timeout);
  // select clears the sets it was given when it times out: each slice waits on the originals.
  fd_set r0{}, w0{}, e0{};
  if (r != nullptr) r0 = *r;
  if (w != nullptr) w0 = *w;
  if (e != nullptr) e0 = *e;
  return poll_with_timeout(ns, [&](int ms) {
    if (ms < 0) return real_select(nfds, r, w, e, timeout);
    if (r != nullptr) *r = r0;
    if (w != nullptr) *w = w0;
    if (e != nullptr) *e = e0;
    timeval slice{0, static_cast<suseconds_t>(ms) * 1000};
    return real_select(nfds, r, w, e, &slice);
  });
}

int epoll_wait(int epfd, struct epoll_event* events, int max, int timeout_ms) {
  PHANTORA_REAL(epoll_wait);
  if (timeout_ms <= 0 || !active()) return real_epoll_wait(epfd, events, max, timeout_ms);
  return poll_with_timeout(static_cast<int64_t>(timeout_ms) * 1'000'000, [&](int ms) {
    return real_epoll_wait(epfd, events, max, ms < 0 ? timeout_ms : ms);
  });
}

// --- hand-offs between threads --------------------------------------------------------------

int pthread_cond_signal(pthread_cond_t* cond) noexcept {
  PHANTORA_REAL(pthread_cond_signal);
  if (active() && !is_python_gil(cond)) Timelines::signal(cond, false);
  return real_pthread_cond_signal(cond);
}

int pthread_cond_broadcast(pthread_cond_t* cond) noexcept {
  PHANTORA_REAL(pthread_cond_broadcast);
  if (active() && !is_python_gil(cond)) Timelines::signal(cond, true);
  return real_pthread_cond_broadcast(cond);
}

int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  PHANTORA_REAL(pthread_cond_wait);
  if (!active()) return real_pthread_cond_wait(cond, mutex);
  if (is_python_gil(cond)) return gil_wait([&] { return real_pthread_cond_wait(cond, mutex); });
  Timelines::before_wait(cond);
  const int rc = real_pthread_cond_wait(cond, mutex);
  after_timed_wait(cond, false, -1);
  return rc;
}

int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                           const struct timespec* deadline) {
  PHANTORA_REAL(pthread_cond_timedwait);
  if (!active()) return real_pthread_cond_timedwait(cond, mutex, deadline);
  if (is_python_gil(cond)) {
    const timespec real = real_deadline(clock_of(cond), *deadline);
    return gil_wait([&] { return real_pthread_cond_timedwait(cond, mutex, &real); });
  }
  return timed_cond_wait(cond, clock_of(cond), *deadline, [&](const timespec& real) {
    return real_pthread_cond_timedwait(cond, mutex, &real);
  });
}

int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                           const struct timespec* deadline) {
  PHANTORA_REAL(pthread_cond_clockwait);
  if (kind_of(clock) == ClockKind::kReal || !active())
    return real_pthread_cond_clockwait(cond, mutex, clock, deadline);
  if (is_python_gil(cond)) {
    const timespec real = real_deadline(clock, *deadline);
    return gil_wait(
        [&] { return real_pthread_cond_clockwait(cond, mutex, real_clock_for(clock), &real); });
  }
  return timed_cond_wait(cond, clock, *deadline, [&](const timespec& real) {
    return real_pthread_cond_clockwait(cond, mutex, real_clock_for(clock), &real);
  });
}

int sem_post(sem_t* sem) noexcept {
  PHANTORA_REAL(sem_post);
  if (active()) Timelines::signal(sem, false);
  return real_sem_post(sem);
}

// A semaphore taken at once was posted earlier: that post is its hand-off.
static void took_posted(const sem_t* sem) {
  const int64_t posted = Timelines::last_signal_ps(sem);
  if (posted >= 0) Timelines::advance_to(posted);
}

int sem_trywait(sem_t* sem) noexcept {
  PHANTORA_REAL(sem_trywait);
  const int rc = real_sem_trywait(sem);
  if (rc == 0 && active()) took_posted(sem);
  return rc;
}

int sem_wait(sem_t* sem) {
  PHANTORA_REAL(sem_wait);
  if (!active()) return real_sem_wait(sem);
  Timelines::before_wait(sem);
  const int rc = real_sem_wait(sem);
  if (Timelines::after_wait(sem) < 0 && rc == 0) took_posted(sem);
  return rc;
}

}  // extern "C"

namespace {
// A semaphore wait until `deadline` on simulated clock `c`: `wait_until(real)` waits once until
// an absolute deadline on real_clock_for(c). Times out at the deadline once the others are
// there (catch_up), takes the post that released it, or wakes early with EINTR.
template <typename WaitUntil>
int timed_sem_wait(sem_t* sem, clockid_t c, const timespec& deadline, WaitUntil&& wait_until) {
  Timelines::before_wait(sem);
  int rc = wait_until(real_deadline(c, deadline));
  bool timed_out = rc != 0 && errno == ETIMEDOUT;
  if (timed_out) {
    const CatchUp how = catch_up(deadline_ps(c, deadline), [&](int64_t slice) {
      rc = wait_until(slice_end(real_clock_for(c), slice));
      return rc == 0 || errno != ETIMEDOUT;
    });
    if (how == CatchUp::kGaveUp) {
      rc = -1;  // woken early, as by a signal
      errno = EINTR;
    }
    timed_out = how == CatchUp::kReached;
  }
  const int saved = errno;
  if (Timelines::after_wait(sem) < 0 && rc == 0) took_posted(sem);
  if (timed_out) Timelines::advance_to(deadline_ps(c, deadline));
  errno = saved;
  return rc;
}
}  // namespace

extern "C" {

int sem_timedwait(sem_t* sem, const struct timespec* deadline) {
  PHANTORA_REAL(sem_timedwait);
  if (!active()) return real_sem_timedwait(sem, deadline);
  return timed_sem_wait(sem, CLOCK_REALTIME, *deadline,
                        [&](const timespec& real) { return real_sem_timedwait(sem, &real); });
}

int sem_clockwait(sem_t* sem, clockid_t clock, const struct timespec* deadline) {
  PHANTORA_REAL(sem_clockwait);
  if (kind_of(clock) == ClockKind::kReal || !active())
    return real_sem_clockwait(sem, clock, deadline);
  return timed_sem_wait(sem, clock, *deadline, [&](const timespec& real) {
    return real_sem_clockwait(sem, real_clock_for(clock), &real);
  });
}

int pthread_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* deadline) noexcept {
  PHANTORA_REAL(pthread_mutex_timedlock);
  if (!active()) return real_pthread_mutex_timedlock(mutex, deadline);
  const timespec real = real_deadline(CLOCK_REALTIME, *deadline);
  int rc = real_pthread_mutex_timedlock(mutex, &real);
  if (rc != ETIMEDOUT) return rc;
  return finish_timed_lock(deadline_ps(CLOCK_REALTIME, *deadline), [&](int64_t slice_ns) {
    const timespec slice = slice_end(CLOCK_REALTIME, slice_ns);
    return real_pthread_mutex_timedlock(mutex, &slice);
  });
}

int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clock,
                            const struct timespec* deadline) noexcept {
  PHANTORA_REAL(pthread_mutex_clocklock);
  if (kind_of(clock) == ClockKind::kReal || !active())
    return real_pthread_mutex_clocklock(mutex, clock, deadline);
  const timespec real = real_deadline(clock, *deadline);
  int rc = real_pthread_mutex_clocklock(mutex, clock, &real);
  if (rc != ETIMEDOUT) return rc;
  return finish_timed_lock(deadline_ps(clock, *deadline), [&](int64_t slice_ns) {
    const timespec slice = slice_end(real_clock_for(clock), slice_ns);
    return real_pthread_mutex_clocklock(mutex, real_clock_for(clock), &slice);
  });
}

// --- threads --------------------------------------------------------------------------------

namespace {
struct ThreadStart {
  void* (*routine)(void*);
  void* arg;
  int64_t parent_clock_ps;
  bool detached;
  bool counted;  // the parent does CUDA work: Timelines::thread_created
};

void* start_with_parent_clock(void* p) {
  const ThreadStart s = *static_cast<ThreadStart*>(p);
  delete static_cast<ThreadStart*>(p);
  Timelines::start_thread(s.parent_clock_ps, s.detached, s.counted);
  return s.routine(s.arg);
}
}  // namespace

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*),
                   void* arg) noexcept {
  PHANTORA_REAL(pthread_create);
  if (!active()) return real_pthread_create(thread, attr, routine, arg);
  Timelines::charge_cpu_now();
  int detach_state = PTHREAD_CREATE_JOINABLE;
  if (attr != nullptr) pthread_attr_getdetachstate(attr, &detach_state);
  const Timeline& parent = Timelines::self();
  auto* start = new ThreadStart{routine, arg, parent.clock_ps.load(),
                                detach_state == PTHREAD_CREATE_DETACHED, parent.bounds.load()};
  if (start->counted) Timelines::thread_created(start->parent_clock_ps);
  const int rc = real_pthread_create(thread, attr, start_with_parent_clock, start);
  if (rc != 0) {
    if (start->counted) Timelines::thread_creation_done(start->parent_clock_ps);
    delete start;
  }
  return rc;
}

int pthread_detach(pthread_t thread) noexcept {
  PHANTORA_REAL(pthread_detach);
  const int rc = real_pthread_detach(thread);
  if (rc == 0) Timelines::detach(static_cast<unsigned long>(thread));
  return rc;
}

int pthread_join(pthread_t thread, void** result) {
  PHANTORA_REAL(pthread_join);
  if (!active()) {
    const int rc = real_pthread_join(thread, result);
    if (rc == 0) Timelines::after_join(static_cast<unsigned long>(thread), true);
    return rc;
  }
  Timelines::before_join(static_cast<unsigned long>(thread));
  const int rc = real_pthread_join(thread, result);
  Timelines::after_join(static_cast<unsigned long>(thread), rc == 0);
  return rc;
}

}  // extern "C"
