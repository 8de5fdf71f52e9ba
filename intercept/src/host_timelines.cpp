#include "host_timelines.hpp"

#include "futex_word.hpp"
#include "real_clock.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "phantora/protocol.hpp"

namespace phantora::shim {
namespace {

// The clock of the latest signal or post, by the synchronisation object's address, for a
// semaphore taken without waiting (last_signal_ps). Two objects in one slot share it: such a
// semaphore may resume later than its post, never earlier. Kept outside the registry's lock: a
// post with no waiter costs one store.
constexpr size_t kSlots = 4096;
struct LastSignal {
  std::atomic<int64_t> ps{-1};  // -1: none
};
LastSignal g_last_signal[kSlots];

size_t slot_of(const void* object) {
  auto a = reinterpret_cast<uintptr_t>(object);
  a ^= a >> 17;
  a *= 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(a >> 40) % kSlots;
}

// A signal that may release a waiter keeps the process bound at the signaller's clock until a
// waiter takes it up. A signal makes at most as many hand-offs as its object has waiters not yet
// released by an earlier one (a second notify before the waiter runs releases nobody), so each
// hand-off has a taker; one nobody takes up all the same (its waiter never returned through the
// shim) lapses after kPendingLapseNs of real time, so that it cannot hold the simulation back
// for ever, and is counted (Timelines::lapsed_handoffs): each such lapse held the simulation
// for that long.
constexpr int64_t kPendingLapseNs = 1'000'000'000;
struct PendingHandoff {
  int64_t clock_ps;
  int64_t made_ns;
  bool carries_bound;  // signalled by a thread whose clock bounds the simulation, or stands for one
};

struct Registry {
  std::mutex mu;
  std::vector<Timeline*> bounding;                         // threads that made CUDA calls
  std::unordered_map<unsigned long, Timeline*> by_thread;  // every thread with a timeline
  // Threads in a wait on each object (before_wait to after_wait), and the hand-offs signalled
  // on it and not yet taken up, oldest first: never more of these than of those.
  std::unordered_map<const void*, int> waiters;
  std::unordered_map<const void*, std::deque<PendingHandoff>> pending;
  std::multiset<int64_t> pending_clocks;
  std::atomic<int> pending_count{0};
  std::atomic<int> waiting{0};  // the sum of `waiters`: a signal with none takes no lock
  std::atomic<bool> any_bounding{false};
  std::atomic<uint64_t> lapsed{0};  // hand-offs dropped by drop_expired_locked
  // Moves when the daemon says of a blocked thread's answer that it comes later
  // (Timelines::answers_from) or a thread blocks in a request (nudge_answer_watchers): sleeps
  // waiting for the others wake on it; `answer_watchers` of them wait on it now.
  FutexWord answers_from_moved;
  std::atomic<int> answer_watchers{0};
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: threads outlive static destructors
  return *r;
}

std::atomic<int> g_mode{-1};

// Removes `t` wherever it is listed and frees it.
void forget_locked(Registry& r, Timeline* t) {
  r.bounding.erase(std::remove(r.bounding.begin(), r.bounding.end(), t), r.bounding.end());
  auto it = r.by_thread.find(t->thread);
  if (it != r.by_thread.end() && it->second == t) r.by_thread.erase(it);
  delete t;
}

// Pending clocks: hand-offs signalled and not yet taken up, and threads being created. Each
// add is matched by one forget of the same clock.
void add_pending_locked(Registry& r, int64_t clock_ps) {
  r.pending_clocks.insert(clock_ps);
  r.pending_count.fetch_add(1, std::memory_order_relaxed);
}

void forget_pending_locked(Registry& r, int64_t clock_ps) {
  const auto it = r.pending_clocks.find(clock_ps);
  if (it == r.pending_clocks.end()) return;
  r.pending_clocks.erase(it);
  r.pending_count.fetch_sub(1, std::memory_order_relaxed);
}

void drop_expired_locked(Registry& r, int64_t now_ns) {
  for (auto it = r.pending.begin(); it != r.pending.end();) {
    auto& q = it->second;
    while (!q.empty() && now_ns - q.front().made_ns > kPendingLapseNs) {
      forget_pending_locked(r, q.front().clock_ps);
      q.pop_front();
      r.lapsed.fetch_add(1, std::memory_order_relaxed);
    }
    it = q.empty() ? r.pending.erase(it) : std::next(it);
  }
}

// The least pending clock, once lapsed hand-offs are dropped (wire::kNoBound: none).
int64_t least_pending_locked(Registry& r, int64_t now_ns) {
  if (r.pending_count.load(std::memory_order_relaxed) == 0) return wire::kNoBound;
  drop_expired_locked(r, now_ns);
  return r.pending_clocks.empty() ? wire::kNoBound : *r.pending_clocks.begin();
}

// How long a thread that was just started counts at its parent's clock
// (Timeline::starting_since_ns) if it neither waits nor makes a CUDA call: one that blocks where
// the shim cannot see (a server thread in epoll, a socket read) would otherwise hold every timeout
// of the process back.
constexpr int64_t kStartingWindowNs = 5'000'000'000;

thread_local Timeline* t_self = nullptr;
// Set once the thread's timeline has ended: what the thread still does while it is torn down
// (other libraries' thread-local destructors) uses a timeline of its own that counts for nothing.
thread_local bool t_ended = false;
thread_local Timeline t_after_end;

// Ends this thread's timeline at thread exit: a joinable thread's end stays for its joiner.
struct Owner {
  Timeline* timeline = nullptr;
  ~Owner() {
    if (timeline == nullptr) return;
    t_after_end.clock_ps.store(timeline->clock_ps.load());
    {
      Registry& r = registry();
      std::lock_guard lock(r.mu);
      timeline->state.store(ThreadState::kExited, std::memory_order_release);
      if (timeline->detached.load()) forget_locked(r, timeline);
    }
    t_ended = true;
    t_self = nullptr;
  }
};
thread_local Owner t_owner;
thread_local int64_t t_cpu_mark_ns = 0;  // thread CPU time already charged to the clock

}  // namespace

Timeline& Timelines::self() {
  if (t_self != nullptr) {
    // Whatever the thread does through the shim is activity: it is not stalled.
    t_self->activity.fetch_add(1, std::memory_order_relaxed);
    // Blocked in something the shim cannot see, it resumes from its own clock (a collective
    // it then submits may start late if the network went past it meanwhile; such late starts
    // are counted in the report).
    if (t_self->stalled.load(std::memory_order_relaxed)) t_self->stalled.store(false);
    return *t_self;
  }
  if (t_ended) return t_after_end;
  auto* t = new Timeline();
  t->thread = static_cast<unsigned long>(pthread_self());
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    r.by_thread[t->thread] = t;
  }
  t_self = t;
  t_owner.timeline = t;
  return *t;
}

wire::CpuTimeMode Timelines::mode() {
  int m = g_mode.load(std::memory_order_relaxed);
  if (m < 0) {
    const char* v = std::getenv("PHANTORA_CPU_TIME");
    const std::optional<wire::CpuTimeMode> named =
        v != nullptr ? wire::parse_cpu_time(v) : std::nullopt;
    m = static_cast<int>(named.value_or(wire::CpuTimeMode::kMeasured));
    g_mode.store(m, std::memory_order_relaxed);
  }
  return static_cast<wire::CpuTimeMode>(m);
}

void Timelines::set_mode(wire::CpuTimeMode m) {
  g_mode.store(static_cast<int>(m), std::memory_order_relaxed);
}

void Timelines::charge_cpu_now() {
  if (mode() != wire::CpuTimeMode::kMeasured) return;
  charge_cpu_until(thread_cpu_ns());
}

// Measured mode: how much faster the simulated host's CPU is than this machine's
// (PHANTORA_HOST_SPEED, from `phantora run --host-speed`; docs/time.md, "Host speed").
double host_speed() {
  static const double speed = [] {
    const char* v = std::getenv("PHANTORA_HOST_SPEED");
    const double s = v != nullptr ? std::strtod(v, nullptr) : 1.0;
    return s > 0 ? s : 1.0;
  }();
  return speed;
}

void Timelines::charge_cpu_until(int64_t cpu_ns) {
  const int64_t delta = cpu_ns - t_cpu_mark_ns;
  if (delta > 0) {
    const auto ps = static_cast<int64_t>(static_cast<double>(delta) * 1000.0 / host_speed());
    self().clock_ps.fetch_add(ps, std::memory_order_relaxed);
  }
  t_cpu_mark_ns = std::max(t_cpu_mark_ns, cpu_ns);
}

void Timelines::set_cpu_mark(int64_t cpu_ns) {
  t_cpu_mark_ns = cpu_ns;
}

void Timelines::register_self() {
  Timeline& t = self();
  if (t.bounds.load(std::memory_order_relaxed)) return;
  t.starting_since_ns.store(0);
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  t.bounds.store(true);
  t.tid = static_cast<int>(syscall(SYS_gettid));
  r.bounding.push_back(&t);
  r.any_bounding.store(true);
}

namespace {
// Whether a bounding thread's clock counts in the process bound: it runs (and is not blocked
// where the shim cannot see), or it ended and a joiner waits for its end.
bool counts_in_bound(const Timeline& t) {
  const ThreadState s = t.state.load(std::memory_order_acquire);
  return (s == ThreadState::kRunning && !t.stalled.load(std::memory_order_relaxed) &&
          !t.gil_waiting.load(std::memory_order_relaxed)) ||
         (s == ThreadState::kExited && t.awaited.load());
}

int64_t bound_locked(Registry& r, int64_t now_ns) {
  int64_t bound = wire::kNoBound;
  for (const Timeline* t : r.bounding)
    if (counts_in_bound(*t)) bound = std::min(bound, t->clock_ps.load(std::memory_order_relaxed));
  return std::min(bound, least_pending_locked(r, now_ns));
}
}  // namespace

int64_t Timelines::bound_ps() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return bound_locked(r, real_monotonic_ns());
}

int64_t Timelines::least_other_clock_ps(bool with_io_waits) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  int64_t least = wire::kNoBound;
  for (const Timeline* t : r.bounding) {
    if (t == t_self) continue;
    // A thread polling file descriptors with a timeout goes on at the latest where that timeout
    // ends, whether what it waits for comes from a thread of this process (it may be the one
    // whose timeout is due) or from outside (a DataLoader's worker processes): a timeout that
    // ends later is not yet due. Counted at its own clock instead, a process whose event loop
    // waits for a sleeping thread would crawl; not counted, a sleeper came due while the main
    // thread waited for its data and handed on a clock seconds ahead (docs/time.md).
    const int64_t poll_end = t->poll_end_ps.load(std::memory_order_relaxed);
    if (poll_end >= 0) {
      least = std::min(least, poll_end);
      continue;
    }
    // Stalled where the C library's waits do not show, it may wait for the very thread whose
    // timeout is due (a futex), and does not count; one that waits for another process (input
    // from a pipe or socket, a child's end) goes on without any thread of this one, from its
    // clock, and counts there: host work elsewhere takes no simulated time of this process's.
    if (t->stalled.load(std::memory_order_relaxed)) {
      if (with_io_waits && t->stalled_in_io.load(std::memory_order_relaxed))
        least = std::min(least, t->clock_ps.load(std::memory_order_relaxed));
      continue;
    }
    // An ended thread that a joiner waits for passes its end clock on (the main thread joining
    // one NCCL watchdog while another one's timeout was due).
    const ThreadState s = t->state.load(std::memory_order_acquire);
    if (s == ThreadState::kRunning || (s == ThreadState::kExited && t->awaited.load()))
      least = std::min(least, t->clock_ps.load(std::memory_order_relaxed));
    // Blocked in a request whose answer's time it takes, it goes on no earlier than the daemon
    // says its answers come (wire::Progress): the simulation has stopped at this process's
    // bound, which may be this very timeout's thread (a sleep to its wake-up), and counted at
    // its clock the blocked thread would hold the timeout back while the timeout holds its
    // answer back.
    if (s == ThreadState::kCallWait) {
      const int64_t clock = t->clock_ps.load(std::memory_order_relaxed);
      least = std::min(least, t->takes_answer_time.load(std::memory_order_relaxed)
                                  ? std::max(clock, t->answers_from_ps.load())
                                  : clock);
    }
  }
  const int64_t now = real_monotonic_ns();
  for (const auto& [thread, t] : r.by_thread) {
    if (t == t_self) continue;
    const int64_t since = t->starting_since_ns.load(std::memory_order_relaxed);
    const ThreadState s = t->state.load(std::memory_order_acquire);
    // Standing for a bounding clock: running since it was started or handed one, or ended
    // so (its exit keeps the mark) with a joiner waiting for its end.
    if ((s == ThreadState::kRunning && since != 0 && now - since < kStartingWindowNs) ||
        (s == ThreadState::kExited && since != 0 && t->awaited.load()))
      least = std::min(least, t->clock_ps.load(std::memory_order_relaxed));
  }
  // A hand-off signalled and not yet taken up is a thread about to run from its clock (between
  // the autograd thread's signal and the main thread's waking, both wait).
  return std::min(least, least_pending_locked(r, now));
}

namespace {
// A thread's name and scheduler state from /proc ("?" where unreadable).
std::string thread_label(int tid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
  std::string name = "?";
  if (std::FILE* f = std::fopen(path, "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof(buf), f) != nullptr) {
      name = buf;
      while (!name.empty() && name.back() == '\n') name.pop_back();
    }
    std::fclose(f);
  }
  return name + (thread_runnable(tid) ? ", runnable" : ", not runnable");
}

std::string ms(int64_t ps) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f ms", static_cast<double>(ps) / 1e9);
  return buf;
}
}  // namespace

std::string Timelines::describe_bound() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::string out;
  const int64_t now = real_monotonic_ns();
  const int64_t bound = bound_locked(r, now);
  if (bound == wire::kNoBound) return out;
  for (const Timeline* t : r.bounding) {
    if (!counts_in_bound(*t) || t->clock_ps.load(std::memory_order_relaxed) != bound) continue;
    if (t->state.load() == ThreadState::kExited)
      out += "  a thread that ended at " + ms(bound) + ", which another thread joins\n";
    else
      out += "  thread " + std::to_string(t->tid) + " (" + thread_label(t->tid) + ") at " +
             ms(bound) + ", running without a call the simulator sees\n";
  }
  for (const auto& [object, q] : r.pending) {
    for (const PendingHandoff& h : q) {
      if (h.clock_ps != bound) continue;
      char what[96];
      std::snprintf(what, sizeof(what), "%p no thread has woken from (%.1f s ago)", object,
                    static_cast<double>(now - h.made_ns) / 1e9);
      out += "  a signal at " + ms(bound) + " on object " + what + "\n";
    }
  }
  if (const uint64_t lapsed = r.lapsed.load(std::memory_order_relaxed); lapsed > 0)
    out += "  (" + std::to_string(lapsed) +
           " hand-off(s) between threads lapsed untaken so far, each after holding the bound " +
           "for " + std::to_string(kPendingLapseNs / 1'000'000'000) + " s)\n";
  // What is left of the pending clocks: threads being created (thread_created).
  if (out.empty()) out += "  a thread being created at " + ms(bound) + "\n";
  return out;
}

int Timelines::bound_holder_tid(int64_t bound_ps) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (const Timeline* t : r.bounding)
    if (counts_in_bound(*t) && t->clock_ps.load(std::memory_order_relaxed) == bound_ps &&
        t->state.load() != ThreadState::kExited)
      return t->tid;
  return 0;
}

int64_t Timelines::latest_ps() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  int64_t latest = t_self != nullptr ? t_self->clock_ps.load() : 0;
  for (const Timeline* t : r.bounding) latest = std::max(latest, t->clock_ps.load());
  return latest;
}

namespace {
// Whether `t`'s clock is one a timed wait elsewhere must not run past: a thread that bounds the
// simulation, or one that stands for such a clock (started or woken by one, not yet waited).
bool stands_for_bound(const Timeline& t) {
  return t.bounds.load(std::memory_order_relaxed) ||
         t.starting_since_ns.load(std::memory_order_relaxed) != 0;
}
}  // namespace

void Timelines::signal(const void* object, bool all) {
  charge_cpu_now();
  const int64_t clock = self().clock_ps.load(std::memory_order_relaxed);
  g_last_signal[slot_of(object)].ps.store(clock, std::memory_order_release);
  Registry& r = registry();
  // A waiter counts itself before it blocks, under the program's mutex that a signaller holds
  // too: a signal that sees no waiter at all has nobody to release.
  if (r.waiting.load(std::memory_order_acquire) <= 0 ||
      !r.any_bounding.load(std::memory_order_relaxed))
    return;
  const int64_t now = real_monotonic_ns();
  const bool carries = stands_for_bound(self());
  std::lock_guard lock(r.mu);
  const auto w = r.waiters.find(object);
  if (w == r.waiters.end()) return;
  // Waiters an earlier signal already released have their hand-off queued: this one releases
  // only the others (none, for a second notify before the first waiter has run).
  auto& q = r.pending[object];
  const int unreleased = w->second - static_cast<int>(q.size());
  const int n = std::min(all ? unreleased : 1, unreleased);
  for (int i = 0; i < n; ++i) {
    q.push_back(PendingHandoff{clock, now, carries});
    add_pending_locked(r, clock);
  }
  if (q.empty()) r.pending.erase(object);
}

void Timelines::before_wait(const void* object) {
  charge_cpu_now();
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    ++r.waiters[object];
    r.waiting.fetch_add(1, std::memory_order_acq_rel);
  }
  set_state(ThreadState::kHostWait);
}

int64_t Timelines::after_wait(const void* object) {
  int64_t handoff = -1;
  Registry& r = registry();
  {
    // Under the lock with signal(): a waiter that timed out either leaves before a signal counts
    // it or takes the hand-off that signal made, never leaves one behind.
    std::lock_guard lock(r.mu);
    const auto w = r.waiters.find(object);
    if (w != r.waiters.end()) {
      if (--w->second <= 0) r.waiters.erase(w);
      r.waiting.fetch_sub(1, std::memory_order_acq_rel);
    }
    const auto it = r.pending.find(object);
    if (it != r.pending.end()) {
      auto& q = it->second;
      handoff = q.front().clock_ps;
      // This thread runs from the hand-off's clock before the hand-off stops counting, so
      // that no instant has neither (a timeout elsewhere could come due in between).
      resume_from(handoff, q.front().carries_bound);
      forget_pending_locked(r, handoff);
      q.pop_front();
      if (q.empty()) r.pending.erase(it);
    }
  }
  if (handoff < 0) set_state(ThreadState::kRunning);
  return handoff;
}

void Timelines::resume_from(int64_t clock_ps, bool carries_bound) {
  advance_to(clock_ps);
  Timeline& t = self();
  // A thread that makes no CUDA call but was handed a bounding thread's clock stands for it
  // until it waits again, as a just-started thread does: what it hands on (a join, a signal)
  // carries that clock to a thread that will submit work.
  if (carries_bound && !t.bounds.load(std::memory_order_relaxed))
    t.starting_since_ns.store(real_monotonic_ns(), std::memory_order_relaxed);
  set_state(ThreadState::kRunning);
}

int64_t Timelines::last_signal_ps(const void* object) {
  return g_last_signal[slot_of(object)].ps.load(std::memory_order_acquire);
}

uint64_t Timelines::lapsed_handoffs() {
  return registry().lapsed.load(std::memory_order_relaxed);  // no lock: also in a signal handler
}

void Timelines::thread_created(int64_t parent_clock_ps) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  add_pending_locked(r, parent_clock_ps);
}

void Timelines::thread_creation_done(int64_t parent_clock_ps) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  forget_pending_locked(r, parent_clock_ps);
}

void Timelines::start_thread(int64_t parent_clock_ps, bool detached, bool counted) {
  Timeline& t = self();
  t.clock_ps.store(parent_clock_ps, std::memory_order_relaxed);
  t.detached.store(detached);
  if (counted) {
    // From here the thread itself stands for its parent's clock.
    t.starting_since_ns.store(real_monotonic_ns());
    thread_creation_done(parent_clock_ps);
  }
  t_cpu_mark_ns = 0;  // a new thread's CPU clock starts at zero
}

void Timelines::detach(unsigned long thread) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.by_thread.find(thread);
  if (it == r.by_thread.end()) return;
  Timeline* t = it->second;
  t->detached.store(true);
  if (t->state.load() == ThreadState::kExited) forget_locked(r, t);
}

void Timelines::before_join(unsigned long thread) {
  charge_cpu_now();
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.by_thread.find(thread);
    if (it != r.by_thread.end()) it->second->awaited.store(true);
  }
  set_state(ThreadState::kHostWait);
}

void Timelines::after_join(unsigned long thread, bool joined) {
  int64_t end = -1;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.by_thread.find(thread);
    if (it != r.by_thread.end()) {
      Timeline* t = it->second;
      if (joined) {
        end = t->clock_ps.load();
        // The joiner runs from the ended thread's clock before that clock stops counting.
        resume_from(end, stands_for_bound(*t));
        forget_locked(r, t);
      } else {
        t->awaited.store(false);
      }
    }
  }
  if (end < 0) set_state(ThreadState::kRunning);
}

void Timelines::advance_to(int64_t ps) {
  std::atomic<int64_t>& c = self().clock_ps;
  int64_t cur = c.load(std::memory_order_relaxed);
  while (cur < ps && !c.compare_exchange_weak(cur, ps, std::memory_order_relaxed)) {
  }
}

void Timelines::rewind_to(int64_t ps) {
  self().clock_ps.store(ps, std::memory_order_relaxed);
}

void Timelines::set_gil_waiting(bool waiting) {
  self().gil_waiting.store(waiting, std::memory_order_relaxed);
}

void Timelines::set_state(ThreadState s) {
  Timeline& t = self();
  if (s != ThreadState::kRunning) t.starting_since_ns.store(0, std::memory_order_relaxed);
  t.state.store(s, std::memory_order_release);
}

namespace {
constexpr int64_t kStallAfterNs = 20'000'000;
constexpr double kStallBusyShare = 0.2;
}  // namespace

bool Timelines::watch_stalls() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  const int64_t now = real_monotonic_ns();
  bool marked = false;
  for (Timeline* t : r.bounding) {
    const uint64_t activity = t->activity.load(std::memory_order_relaxed);
    if (t->stalled.load()) {
      // What it is blocked in may change without a call the shim sees (a read that returns,
      // then a futex), and it may run the program again before its next call (the Python code
      // after a read): looked at again on every pass. Running, it counts again, as a thread
      // that never blocked does.
      const bool runs = thread_runnable(t->tid);
      if (runs) t->stalled.store(false);
      t->stalled_in_io.store(!runs && thread_waits_for_io(t->tid));
      t->seen_activity = activity;
      t->window_start_ns = 0;
      continue;
    }
    if (t->state.load() != ThreadState::kRunning || t->gil_waiting.load() ||
        activity != t->seen_activity) {
      t->seen_activity = activity;
      t->window_start_ns = 0;
      continue;
    }
    // The window opens at the first look that finds the thread quiet: /proc is read once per
    // window, not every few milliseconds for every thread that waits or works (16 ranks of a
    // loaded 2-core machine spent a tenth of it so).
    if (t->window_start_ns == 0) {
      t->window_start_ns = now;
      t->window_demand_ns = thread_demand_ns(t->tid);
      continue;
    }
    if (now - t->window_start_ns < kStallAfterNs) continue;
    const int64_t demand = thread_demand_ns(t->tid);
    if (demand >= 0 && t->window_demand_ns >= 0 && !thread_runnable(t->tid) &&
        static_cast<double>(demand - t->window_demand_ns) <
            kStallBusyShare * static_cast<double>(now - t->window_start_ns)) {
      t->stalled_in_io.store(thread_waits_for_io(t->tid));
      t->stalled.store(true);
      marked = true;
    }
    t->window_start_ns = now;
    t->window_demand_ns = demand;
  }
  return marked;
}

void Timelines::answers_from(Timeline& waiter, int64_t ps) {
  int64_t seen = waiter.answers_from_ps.load();
  while (seen < ps) {
    if (waiter.answers_from_ps.compare_exchange_weak(seen, ps)) {
      registry().answers_from_moved.bump_and_wake_all();
      return;
    }
  }
}

uint32_t Timelines::answers_from_moves() {
  return registry().answers_from_moved.load();
}

bool Timelines::wait_answers_from_move(uint32_t seen, int64_t slice_ns) {
  return registry().answers_from_moved.wait_while_for(seen, slice_ns);
}

Timelines::AnswerWatch::AnswerWatch() {
  registry().answer_watchers.fetch_add(1);
}

Timelines::AnswerWatch::~AnswerWatch() {
  registry().answer_watchers.fetch_sub(1);
}

void Timelines::nudge_answer_watchers() {
  Registry& r = registry();
  if (r.answer_watchers.load() > 0) r.answers_from_moved.bump_and_wake_all();
}

namespace {
// Registered when the shim loads rather than with the connection (Runtime): a process may fork
// before its first CUDA call, and its child's timelines must start afresh all the same.
[[maybe_unused]] const int g_after_fork_handler =
    pthread_atfork(nullptr, nullptr, [] { Timelines::after_fork_in_child(); });
}  // namespace

void Timelines::after_fork_in_child() {
  // Only the forking thread goes on in the child; the others' timelines mean nothing there.
  // The registry's mutex may have been held by a thread that does not exist here: start a new
  // registry over the old one's storage, leaving its contents behind.
  Registry& r = registry();
  Timeline* me = t_self;
  // The child's thread CPU clock started again at the fork: its clock goes on from the parent's
  // by what the child spends (a DataLoader worker's batches), not once it has spent as much as
  // the parent had.
  t_cpu_mark_ns = thread_cpu_ns();
  new (&r) Registry();
  if (me != nullptr) {
    r.by_thread[me->thread] = me;
    if (me->bounds.load()) {
      r.bounding.push_back(me);
      r.any_bounding.store(true);
    }
  }
}

void Timelines::start_afresh(int64_t startup_cpu_ns) {
  // The old timelines (this thread's included) are left behind with the old registry: a new
  // process has none.
  Registry& r = registry();
  new (&r) Registry();
  for (LastSignal& s : g_last_signal) s.ps.store(-1);
  t_self = nullptr;
  t_owner.timeline = nullptr;
  t_ended = false;
  // This thread's CPU clock restarted at the fork; what the warmed process spent before it is
  // this process's start-up.
  t_cpu_mark_ns = -startup_cpu_ns;
}

}  // namespace phantora::shim
