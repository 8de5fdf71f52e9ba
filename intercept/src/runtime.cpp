#include "runtime.hpp"

#include "daemon_connection.hpp"
#include "host_timelines.hpp"
#include "launcher_command.hpp"
#include "payload_inbox.hpp"
#include "real_clock.hpp"
#include "shadow.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace phantora::shim {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;
// A batch that waits longer than this is sent by the reader thread, so that a rank blocked in
// something the simulator cannot see still lets its queued work reach the daemon.
constexpr int kIdleFlushMs = 5;

// How long a process may submit no GPU work, while its main thread neither runs nor waits to
// run, before it counts as waiting outside CUDA.
// Long enough that a rank pausing on its own (a short sleep, a slow Python step) keeps bounding
// the simulation — its later work may start early in simulated time — and short enough that
// waits for other ranks (TCPStore, Gloo) cost little real time.
constexpr int64_t kIdleAfterNs = 2'000'000'000;
// Share of that time the main thread may have been on (or queued for) a CPU and still count
// as waiting; above it, the process is computing and keeps bounding the simulation.
constexpr double kIdleBusyShare = 0.2;

// How long the process may wait for the simulator's answers without a break (some request
// always waiting, one or many in turn) before the shim says what holds its bound
// (PHANTORA_HELD_BOUND_REPORT_MS; tests shorten it). A minute: far beyond any wait of a run
// that progresses, well before --timeout's usual values.
constexpr int64_t kHeldBoundReportNs = 60'000'000'000;

// A process bound as the stall report words it.
std::string bound_text(int64_t bound_ps) {
  if (bound_ps == wire::kNoBound) return "none (every thread waits)";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", static_cast<double>(bound_ps) / 1e9);
  return text;
}

// The main thread's demand (real_clock.hpp), so that a rank starved of CPU on an
// oversubscribed machine still counts as busy.
int64_t main_thread_demand_ns() {
  return std::max<int64_t>(0, thread_demand_ns(getpid()));
}

// The thread's CPU clock is a system call to read (no vDSO fast path), so it is read once per
// intercepted call, on entry. Where the previous call left the shim is estimated as its entry
// plus the shim's own CPU time per call, which is measured on one call in kSampleEvery.
constexpr uint64_t kSampleEvery = 64;

struct ThreadClock {
  int depth = 0;
  uint64_t calls = 0;
  uint64_t work = 0;         // records sent that submit work or wait (thread_work_count)
  int64_t entry_ns = -1;     // thread CPU time when the current (or last) call entered
  int64_t shim_cost_ns = 0;  // running estimate of the shim's CPU time per call
  bool expensive = false;    // the current call's end is to be measured (note_expensive)
  bool internal = false;     // the shim's own reader thread
};
thread_local ThreadClock t_clock;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(v, &end, 10);
  if (*end != '\0') fatal(std::string(name) + "='" + v + "' is not an integer");
  return static_cast<int>(parsed);
}

void write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
}

bool read_all(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void fatal(const std::string& message) {
  std::fprintf(stderr, "phantora: %s\n", message.c_str());
  std::fflush(stderr);
  _exit(70);
}

Runtime& Runtime::get() {
  // Never destroyed: other libraries' destructors may still call into the shim at exit.
  static Runtime* instance = [] {
    auto* r = new Runtime();
    pthread_atfork([] { Runtime::get().before_fork(); },
                   [] { Runtime::get().after_fork_in_parent(); },
                   [] { Runtime::get().after_fork_in_child(); });
    // on_exit rather than atexit: the daemon is told the exit status.
    on_exit([](int status, void*) { Runtime::get().exiting(status); }, nullptr);
    return r;
  }();
  return *instance;
}

Runtime::Runtime() {
  batch_.reserve(kFlushBytes + 4096);
}

void Runtime::ensure_connected() {
  if (connected_) return;
  std::lock_guard lock(mu_);
  if (!connected_) connect_locked();
}

void Runtime::connect_locked() {
  if (closed_) fatal("CUDA call after the simulator connection was closed at process exit");
  // The warm-rank server (tools/python/phantora_warm.py) imports for the ranks it forks and
  // must never become a client itself: its ranks would inherit its connection and clocks.
  const char* warm = std::getenv("PHANTORA_WARM_SERVER");
  if (warm != nullptr && *warm != '\0')
    fatal(
        "the warm-rank server made a CUDA call (one of PHANTORA_WARM_MODULES touches the GPU "
        "when imported); run with --no-warm-ranks");
  const DaemonConnection daemon = connect_to_daemon();
  fd_ = daemon.fd;
  wire::Hello hello;
  const char* token = std::getenv("PHANTORA_TOKEN");
  if (token != nullptr)
    std::memcpy(hello.token, token, std::min(std::strlen(token), wire::kTokenBytes));
  host_ = env_int("PHANTORA_HOST", 0);
  hello.host = host_;
  hello.pid = getpid();
  const RankVariables& numbered = rank_variables([](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  });
  hello.global_rank = env_int(numbered.rank, -1);
  hello.local_rank = env_int(numbered.local_rank, -1);
  hello.world_size = env_int(numbered.world_size, -1);
  try {
    send_frame_locked(wire::FrameType::kHello, &hello, sizeof(hello));
  } catch (const std::exception& e) {
    fatal(std::string("simulator refused the connection: ") + e.what());
  }
  wire::FrameHeader h;
  const bool header_ok =
      read_all(fd_, &h, sizeof(h)) && h.magic == wire::kMagic && h.version == wire::kVersion;
  if (header_ok && h.type == wire::FrameType::kRefused && h.length <= wire::kMaxRefusalBytes) {
    std::string why(h.length, '\0');
    if (!read_all(fd_, why.data(), why.size())) why = "(no reason given)";
    fatal("the simulator at " + daemon.where + " refused this process: " + why +
          (why.find("token") != std::string::npos
               ? "\n  (PHANTORA_TOKEN must be the run's token: the one phantora generated, or "
                 "the contents of its --token-file)"
               : ""));
  }
  if (!header_ok || h.type != wire::FrameType::kWelcome || h.length != sizeof(wire::Welcome) ||
      !read_all(fd_, &welcome_, sizeof(welcome_))) {
    fatal("the simulator at " + daemon.where +
          " did not welcome this process (a phantora of another version?)");
  }
  Timelines::set_mode(welcome_.cpu_time);
  watch_fatal_signals();
  connected_ = true;
  reader_ = std::thread([this] {
    t_clock.internal = true;
    reader_loop();
  });
  reader_.detach();
}

void Runtime::send_frame_locked(wire::FrameType type, const void* body, size_t size) {
  wire::FrameHeader h;
  h.type = type;
  h.length = static_cast<uint32_t>(size);
  write_all(fd_, &h, sizeof(h));
  if (size > 0) write_all(fd_, body, size);
}

void Runtime::append_locked(wire::RecordType type, uint64_t request, const void* head,
                            size_t head_size, const void* tail, size_t tail_size) {
  const bool is_call = type != wire::RecordType::kDefineKernel &&
                       type != wire::RecordType::kDefineGraph &&
                       type != wire::RecordType::kHostClock;
  Timeline& self = Timelines::self();
  if (is_call && welcome_.cpu_time != wire::CpuTimeMode::kZero && !t_clock.internal) {
    self.clock_ps.fetch_add(welcome_.per_call_cost_ps, std::memory_order_relaxed);
  }
  // Queries (syncs answered by the daemon) and bookkeeping are not new work.
  if (is_call && request == 0) work_records_.fetch_add(1, std::memory_order_relaxed);
  wire::RecordHeader h;
  h.type = type;
  h.size = static_cast<uint32_t>(head_size + tail_size);
  h.request = request;
  h.host_time_ps = self.clock_ps.load(std::memory_order_relaxed);
  h.bound_ps = Timelines::bound_ps();
  last_bound_sent_.store(h.bound_ps, std::memory_order_relaxed);
  const size_t total = sizeof(h) + head_size + tail_size;
  if (batch_.size() + total > kFlushBytes) flush_locked();
  const size_t at = batch_.size();
  batch_.resize(at + total);
  std::memcpy(batch_.data() + at, &h, sizeof(h));
  if (head_size > 0) std::memcpy(batch_.data() + at + sizeof(h), head, head_size);
  if (tail_size > 0) std::memcpy(batch_.data() + at + sizeof(h) + head_size, tail, tail_size);
}

void Runtime::submit(wire::RecordType type, const void* body, size_t size) {
  submit_parts(type, body, size, nullptr, 0);
}

void Runtime::submit_parts(wire::RecordType type, const void* head, size_t head_size,
                           const void* tail, size_t tail_size) {
  ensure_connected();
  ++t_clock.work;
  std::lock_guard lock(mu_);
  if (closed_) return;  // the process is exiting; nothing more is simulated
  append_locked(type, 0, head, head_size, tail, tail_size);
}

SimTime Runtime::request(wire::RecordType type, const void* body, size_t size, bool advance) {
  return wait_reply(send_request(type, body, size), advance).time;
}

uint64_t Runtime::send_request(wire::RecordType type, const void* body, size_t size) {
  ensure_connected();
  std::lock_guard lock(mu_);
  if (closed_) return 0;
  uint64_t id = 0;
  {
    std::lock_guard rl(reply_mu_);
    id = next_request_++;
    auto reply = std::make_shared<PendingReply>();
    reply->sent_ns = real_monotonic_ns();
    if (pending_.empty()) {
      waiting_since_ns_ = reply->sent_ns;
      answered_while_waiting_ = 0;
    }
    pending_.emplace(id, std::move(reply));
  }
  // The thread waits for the answer: it leaves the bound before the request is sent, and the
  // daemon bounds the process by the answer's time until the thread says it runs again.
  Timeline& self = Timelines::self();
  self.call_waits++;
  Timelines::set_state(ThreadState::kCallWait);
  append_locked(type, id, body, size, nullptr, 0);
  flush_locked();
  return id;
}

Runtime::Answer Runtime::wait_reply(uint64_t id, bool advance) {
  return wait_for(id, advance, /*query=*/false);
}

Runtime::Answer Runtime::query(wire::RecordType type, const void* body, size_t size) {
  return wait_for(send_request(type, body, size), /*advance=*/false, /*query=*/true);
}

Runtime::Answer Runtime::wait_for(uint64_t id, bool advance, bool query) {
  note_expensive();
  if (advance) ++t_clock.work;                // a wait; a query (no advance) is not work
  if (id == 0) return Answer{clock(), 0, 0};  // the process is exiting; nothing waits any more
  Timeline& self = Timelines::self();
  std::shared_ptr<PendingReply> pending;
  {
    std::lock_guard rl(reply_mu_);
    pending = pending_.at(id);
    pending->waiter = &self;
    pending->query = query;
    pending->query_clock_ps = self.clock_ps.load(std::memory_order_relaxed);
    self.answers_from_ps.store(pending->answers_from_ps, std::memory_order_relaxed);
  }
  self.takes_answer_time.store(advance, std::memory_order_relaxed);
  Timelines::nudge_answer_watchers();
  // Until the reply comes, or for a query until a Progress frame says that its answer comes
  // after the thread's clock: then it is "not done yet" whatever the work's end, and the thread
  // goes on without it, since it goes on from its own clock in any case.
  bool went_on = false;
  for (;;) {
    uint32_t seen = 0;
    {
      std::lock_guard rl(reply_mu_);
      went_on = !pending->replied && query && pending->answers_from_ps > pending->query_clock_ps;
      if (pending->replied || went_on) {
        pending->waiter = nullptr;
        pending_.erase(id);
        if (went_on) gone_on_.insert(id);
        ++answered_while_waiting_;
        if (pending_.empty()) waiting_since_ns_ = 0;
        break;
      }
      seen = pending->arrived.load();
    }
    pending->arrived.wait_while(seen);
  }
  self.takes_answer_time.store(false, std::memory_order_relaxed);
  self.answers_from_ps.store(-1, std::memory_order_relaxed);
  const wire::Reply r = pending->reply;
  const SimTime t = went_on ? SimTime::ps(pending->answers_from_ps) : SimTime::ps(r.time_ps);
  if (advance) advance_clock_to(t);
  if (--self.call_waits <= 0) {
    self.call_waits = 0;
    Timelines::set_state(ThreadState::kRunning);
  }
  // Sent before the reply when the query went on: the daemon then lets the reply bound nothing.
  const wire::HostClock resumed{id, wire::kHostResumed, 0};
  {
    std::lock_guard lock(mu_);
    if (!closed_)
      append_locked(wire::RecordType::kHostClock, 0, &resumed, sizeof(resumed), nullptr, 0);
  }
  return Answer{t, r.value0, r.value1, !went_on};
}

void Runtime::on_progress(const wire::Progress& p) {
  std::lock_guard rl(reply_mu_);
  // It covers the requests the daemon had read (ids up to through_request): their answers come
  // no earlier than answers_from_ps. Later requests may be answered earlier.
  for (auto& [id, pending] : pending_) {
    if (id > p.through_request) break;
    if (p.answers_from_ps <= pending->answers_from_ps) continue;
    pending->answers_from_ps = p.answers_from_ps;
    if (pending->waiter != nullptr) Timelines::answers_from(*pending->waiter, p.answers_from_ps);
    if (pending->query && pending->answers_from_ps > pending->query_clock_ps)
      pending->arrived.bump_and_wake_all();
  }
}

SimTime Runtime::clock() const {
  return SimTime::ps(Timelines::self().clock_ps.load(std::memory_order_relaxed));
}

void Runtime::advance_clock_to(SimTime t) {
  Timelines::advance_to(t.as_ps());
}

void Runtime::flush() {
  if (!connected_) return;
  std::lock_guard lock(mu_);
  flush_locked();
}

void Runtime::flush_locked() {
  if (batch_.empty() || fd_ < 0) return;
  try {
    send_frame_locked(wire::FrameType::kBatch, batch_.data(), batch_.size());
  } catch (const std::exception& e) {
    lost_daemon(e.what());
  }
  batch_.clear();
}

void Runtime::reader_loop() {
  // Queued records are flushed and the stall report is watched every kIdleFlushMs, whether or
  // not answers arrive meanwhile: a thread that polls an event makes one answer follow another,
  // and a reader that did both only when the connection fell silent would leave another
  // thread's records unsent and its stall unreported. (The bound is watched after every answer
  // as well; idleness only in silence, as a process that is answered is not idle.)
  int64_t watched_ns = real_monotonic_ns();
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, kIdleFlushMs);
    const bool silent = ready == 0;
    const int64_t now = real_monotonic_ns();
    if (silent || now - watched_ns >= int64_t{kIdleFlushMs} * 1'000'000) {
      watched_ns = now;
      {
        std::unique_lock lock(mu_, std::try_to_lock);
        if (lock.owns_lock() && !closed_) flush_locked();
      }
      if (silent) {
        watch_idle();
        watch_bound();
      }
      watch_held_bound();
    }
    if (silent) continue;
    if (ready < 0 && errno == EINTR) continue;
    wire::FrameHeader h;
    if (!read_all(fd_, &h, sizeof(h))) {
      if (shutting_down_) return;
      lost_daemon("connection closed");
    }
    if (h.magic != wire::kMagic || h.version != wire::kVersion) {
      if (shutting_down_) return;
      lost_daemon("malformed frame");
    }
    if (h.type == wire::FrameType::kPayload) {
      receive_payload(h.length);
      continue;
    }
    if (h.type == wire::FrameType::kProgress) {
      wire::Progress p;
      if (h.length != sizeof(p) || !read_all(fd_, &p, sizeof(p))) {
        if (shutting_down_) return;
        lost_daemon("malformed progress");
      }
      on_progress(p);
      continue;
    }
    wire::Reply r;
    if (h.type != wire::FrameType::kReply || h.length != sizeof(r) ||
        !read_all(fd_, &r, sizeof(r))) {
      if (shutting_down_) return;
      lost_daemon("malformed reply");
    }
    std::shared_ptr<PendingReply> pending;
    bool dropped = false;
    {
      std::lock_guard rl(reply_mu_);
      auto it = pending_.find(r.request);
      if (it != pending_.end()) {
        pending = it->second;
        pending->reply = r;
        pending->replied = true;
      } else {
        dropped = gone_on_.erase(r.request) != 0;  // a query went on without it
      }
    }
    if (dropped) continue;
    if (pending == nullptr) {
      if (shutting_down_) return;
      lost_daemon("a reply to no request of this process");
    }
    pending->arrived.bump_and_wake_all();
    watch_bound();
  }
}

void Runtime::watch_bound() {
  Timelines::watch_stalls();
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || closed_) return;
  if (Timelines::bound_ps() == last_bound_sent_.load(std::memory_order_relaxed)) return;
  const wire::HostClock moved{0, 0, 0};
  append_locked(wire::RecordType::kHostClock, 0, &moved, sizeof(moved), nullptr, 0);
  flush_locked();
  // For the stall report: a process whose threads all wait should send no finite bound here;
  // one that does has a thread entering its bound at an old clock.
  ++reader_bound_sends_;
  const int64_t sent = last_bound_sent_.load(std::memory_order_relaxed);
  if (sent != wire::kNoBound) {
    reader_last_finite_ps_ = sent;
    reader_last_finite_tid_ = Timelines::bound_holder_tid(sent);
  }
}

void Runtime::watch_held_bound() {
  static const int64_t limit_ns = [] {
    const int ms = env_int("PHANTORA_HELD_BOUND_REPORT_MS", 0);
    return ms > 0 ? int64_t{ms} * 1'000'000 : kHeldBoundReportNs;
  }();
  const int64_t now = real_monotonic_ns();
  int64_t since = 0;
  uint64_t oldest = 0, answered = 0;
  size_t waiting = 0;
  {
    std::lock_guard rl(reply_mu_);
    since = waiting_since_ns_;
    answered = answered_while_waiting_;
    waiting = pending_.size();
    if (!pending_.empty()) oldest = pending_.begin()->first;  // ids grow: the first is oldest
  }
  if (since == 0 || since == held_reported_since_ns_ || now - since < limit_ns) return;
  held_reported_since_ns_ = since;
  // Every rank of a stalled job says so, not only the one whose bound holds the simulation: a
  // holder may have sent none at this instant and a finite one the next (docs/reliability.md).
  const int64_t sent = last_bound_sent_.load(std::memory_order_relaxed);
  // What holds the bound now; and, if it has moved, why the simulator was not told (the reader
  // sends a moved bound every few milliseconds unless the connection's lock is taken).
  const int64_t local = Timelines::bound_ps();
  char now_line[256] = "";
  if (local != sent) {
    char lock[96];
    if (mu_.try_lock()) {
      std::snprintf(lock, sizeof(lock),
                    "the connection's lock is free, %zu bytes of records unsent", batch_.size());
      mu_.unlock();
    } else {
      std::snprintf(lock, sizeof(lock), "the connection's lock is held by thread %d",
                    mu_.native_handle()->__data.__owner);
    }
    std::snprintf(now_line, sizeof(now_line),
                  "  the process's bound is now %s but was not sent (%s)\n",
                  bound_text(local).c_str(), lock);
  }
  char sends[160];
  if (reader_last_finite_ps_ < 0) {
    std::snprintf(sends, sizeof(sends), "  the reader has sent %llu moved bound(s), none finite\n",
                  static_cast<unsigned long long>(reader_bound_sends_));
  } else {
    std::snprintf(sends, sizeof(sends),
                  "  the reader has sent %llu moved bound(s), the latest finite one %.3f ms "
                  "with thread %d at it\n",
                  static_cast<unsigned long long>(reader_bound_sends_),
                  static_cast<double>(reader_last_finite_ps_) / 1e9, reader_last_finite_tid_);
  }
  const std::string holders = local == wire::kNoBound ? std::string() : Timelines::describe_bound();
  std::fprintf(stderr,
               "phantora: pid %d has waited %.0f s of real time for the simulator's answers "
               "(%zu request(s) waiting, the oldest %llu; %llu answered meanwhile) while its own "
               "bound (the earliest time at which it can still submit work, which the simulation "
               "may not pass) stood at %s; what holds it:\n%s%s%s"
               "(docs/reliability.md, \"What holds a stalled run\")\n",
               static_cast<int>(getpid()), static_cast<double>(now - since) / 1e9, waiting,
               static_cast<unsigned long long>(oldest), static_cast<unsigned long long>(answered),
               bound_text(sent).c_str(), now_line, holders.c_str(), sends);
  std::fflush(stderr);
}

void Runtime::receive_payload(uint32_t length) {
  wire::PayloadHeader p;
  std::vector<std::byte> bytes;
  if (length < sizeof(p) || !read_all(fd_, &p, sizeof(p)) || p.bytes != length - sizeof(p) ||
      p.bytes > wire::kMaxPayloadBytes) {
    lost_daemon("malformed collective payload");
  }
  bytes.resize(p.bytes);
  if (!bytes.empty() && !read_all(fd_, bytes.data(), bytes.size()))
    lost_daemon("truncated collective payload");
  ShadowStore::get().write(p.recvbuff, bytes.data(), bytes.size());
  PayloadInbox::get().arrived(p.recvbuff);
}

void Runtime::watch_idle() {
  const uint64_t work = work_records_.load(std::memory_order_relaxed);
  const int64_t now = real_monotonic_ns();
  if (work != idle_seen_work_) {
    idle_seen_work_ = work;
    idle_since_ns_ = 0;
    idle_sent_ = false;
    return;
  }
  // The window opens at the first look that finds no new work (one /proc read per window).
  if (idle_since_ns_ == 0) {
    idle_since_ns_ = now;
    idle_busy_ns_ = main_thread_demand_ns();
    return;
  }
  if (idle_sent_ || now - idle_since_ns_ < kIdleAfterNs) return;
  const int64_t busy = main_thread_demand_ns() - idle_busy_ns_;
  if (static_cast<double>(busy) > kIdleBusyShare * static_cast<double>(now - idle_since_ns_)) {
    // Computing: start a new window; the process still bounds the simulation.
    idle_since_ns_ = now;
    idle_busy_ns_ += busy;
    return;
  }
  wire::HostClock idle{0, wire::kHostIdle, 0};
  submit(wire::RecordType::kHostClock, &idle, sizeof(idle));
  flush();
  idle_sent_ = true;
  idle_seen_work_ = work_records_.load(std::memory_order_relaxed);  // our own record is no work
}

void Runtime::lost_daemon(const std::string& why) {
  fatal("lost the connection to the simulator daemon (" + why +
        "); the run has ended or the daemon died. Exiting.");
}

uint32_t Runtime::kernel_id(const std::string& mangled) {
  std::lock_guard lock(kernels_mu_);
  auto [it, inserted] =
      kernel_ids_.try_emplace(mangled, static_cast<uint32_t>(kernel_ids_.size() + 1));
  if (inserted) {
    wire::DefineKernel k{it->second, static_cast<uint32_t>(mangled.size())};
    submit_parts(wire::RecordType::kDefineKernel, &k, sizeof(k), mangled.data(), mangled.size());
  }
  return it->second;
}

void Runtime::on_enter() {
  ThreadClock& t = t_clock;
  if (t.depth++ > 0) return;
  ++t.calls;
  ensure_connected();
  if (t.calls == 1) Timelines::register_self();
  if (welcome_.cpu_time != wire::CpuTimeMode::kMeasured) return;
  // Every thread's clock counts its CPU time since it started (the main thread's first call
  // also counts the process's start-up: imports, model construction), less the shim's own.
  const int64_t now = thread_cpu_ns();
  Timelines::charge_cpu_until(now);
  t.entry_ns = now;
}

int64_t Runtime::virtual_time_ns() {
  if (!in_shim()) Timelines::charge_cpu_now();
  return Timelines::self().clock_ps.load(std::memory_order_relaxed) / 1000;
}

bool Runtime::in_shim() {
  return t_clock.depth > 0 || t_clock.internal;
}

uint64_t Runtime::thread_call_count() {
  return t_clock.calls;
}

uint64_t Runtime::thread_work_count() {
  return t_clock.work;
}

void Runtime::note_expensive() {
  t_clock.expensive = true;
}

void Runtime::on_leave() {
  ThreadClock& t = t_clock;
  if (--t.depth > 0) return;
  if (welcome_.cpu_time != wire::CpuTimeMode::kMeasured) {
    t.expensive = false;
    return;
  }
  if (t.expensive) {
    // The program's time resumes where this call measurably ended.
    Timelines::set_cpu_mark(thread_cpu_ns());
    t.expensive = false;
    return;
  }
  // Sampled calls: the 2nd, then every kSampleEvery-th (the 1st also connected to the daemon,
  // which later calls do not pay). Averaged with what was known, weight 1/4.
  if (t.calls % kSampleEvery == 2) {
    const int64_t spent = thread_cpu_ns() - t.entry_ns;
    t.shim_cost_ns = t.calls == 2 ? spent : (3 * t.shim_cost_ns + spent) / 4;
  }
  // Where the call ended is estimated: its entry plus the shim's usual cost per call.
  Timelines::set_cpu_mark(t.entry_ns + t.shim_cost_ns);
}

void Runtime::exiting(int status) {
  exit_code_ = status;
  shutdown();
}

namespace {
// Fatal signals whose default action ends the process, and what was installed before ours.
constexpr int kFatalSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT};
struct sigaction g_previous[std::size(kFatalSignals)];

void on_fatal_signal(int sig) {
  Runtime::get().killed_by(sig);
  for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
    if (kFatalSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  }
  raise(sig);  // delivered with the previous action once this handler returns
}
}  // namespace

void Runtime::watch_fatal_signals() {
  // Only where the program keeps the default action (which ends the process): a handler of its
  // own may decide not to end it.
  for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
    struct sigaction current {};
    if (sigaction(kFatalSignals[i], nullptr, &current) != 0 || current.sa_handler != SIG_DFL)
      continue;
    struct sigaction ours {};
    ours.sa_handler = on_fatal_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESETHAND | SA_NODEFER;
    g_previous[i] = current;
    sigaction(kFatalSignals[i], &ours, nullptr);
  }
}

void Runtime::killed_by(int sig) {
  // In a signal handler: nothing that allocates or waits. A thread holding the connection's
  // lock may be in the middle of a frame; then the daemon only sees the connection close.
  if (!mu_.try_lock()) return;
  if (connected_ && !closed_) {
    const wire::Bye bye{Timelines::latest_ps(), wire::kByeSignalled, sig,
                        Timelines::lapsed_handoffs()};
    wire::FrameHeader h;
    h.type = wire::FrameType::kBye;
    h.length = sizeof(bye);
    char frame[sizeof(h) + sizeof(bye)];
    std::memcpy(frame, &h, sizeof(h));
    std::memcpy(frame + sizeof(h), &bye, sizeof(bye));
    (void)::send(fd_, frame, sizeof(frame), MSG_NOSIGNAL);
    closed_ = true;
    shutting_down_ = true;
  }
  mu_.unlock();
}

void Runtime::shutdown() {
  std::lock_guard lock(mu_);
  if (!connected_ || closed_) return;
  shutting_down_ = true;
  flush_locked();
  const wire::Bye bye{Timelines::latest_ps(), wire::kByeExited, exit_code_,
                      Timelines::lapsed_handoffs()};
  try {
    send_frame_locked(wire::FrameType::kBye, &bye, sizeof(bye));
  } catch (const std::exception&) {
    // The daemon is gone; there is nobody left to tell.
  }
  closed_ = true;
  ::shutdown(fd_, SHUT_RDWR);
}

void Runtime::start_afresh(int64_t startup_cpu_ns) {
  // The pthread_atfork child handler (after_fork_in_child) has already dropped the connection,
  // if this process had one; the warm-rank server never has (connect_locked).
  t_clock = ThreadClock{};
  forget_clock_reads();
  Timelines::start_afresh(startup_cpu_ns);
}

void Runtime::before_fork() {
  mu_.lock();
}
void Runtime::after_fork_in_parent() {
  mu_.unlock();
}

void Runtime::after_fork_in_child() {
  // The timelines were started afresh by their own handler (host_timelines.cpp), which runs
  // first: it was registered when the shim loaded.
  // The child shares the parent's socket but not its reader thread. It starts afresh as a new
  // client if it ever makes a CUDA call (a forked data-loader worker normally never does).
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  connected_ = false;
  closed_ = false;
  batch_.clear();
  pending_.clear();
  gone_on_.clear();  // the parent's connection's requests
  new (&reply_mu_) std::mutex();
  new (&kernels_mu_) std::mutex();
  kernel_ids_.clear();
  mu_.unlock();
}

}  // namespace phantora::shim

// Called by a rank forked from the warm-rank server (tools/python/phantora_warm.py) right after
// the fork, before it runs anything of the job: its shim state starts as a new process's.
extern "C" __attribute__((visibility("default"))) void phantora_fresh_process(
    long long startup_cpu_ns) {
  phantora::shim::Runtime::start_afresh(startup_cpu_ns);
}

// Called by a rank forked from the warm-rank server after phantora_fresh_process. Registered
// last, this handler runs first at exit(3) (handlers run in reverse order of registration): it
// sends the shim's exit report, flushes C stdio and ends the process, so that the handlers the
// server registered while importing (the C++ static destructors of torch and of the libraries
// it loaded) do not run in the rank. Run there, they free the server's data structures, and
// every free writes to, and so copies, a page the rank shares with the server and the other
// ranks: 50-90 MiB per GPT rank, the rank's peak (docs/performance.md). Python's own shutdown
// (atexit callbacks, thread joins, module teardown, flushing sys.stdout) has run before exit(3)
// is called, and handlers that libraries loaded by the job after the fork registered still run
// (before this one). A normal start runs those destructors, but what they do is invisible to
// the job; pytorch_warm_ranks_same checks that the simulated results are the same.
extern "C" __attribute__((visibility("default"))) void
phantora_end_without_inherited_exit_handlers() {
  on_exit(
      [](int status, void*) {
        phantora::shim::Runtime::get().exiting(status);
        std::fflush(nullptr);
        _exit(status);
      },
      nullptr);
}
