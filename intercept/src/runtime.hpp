// The shim's process-wide state: the connection to the daemon, the batch of asynchronous
// records, and the identity of this process in the simulated cluster. Host clocks are per thread
// (host_timelines.hpp).
//
// Every intercepted API function opens an ApiCall first. It advances the calling thread's clock
// by the CPU time that thread spent since its previous intercepted call (design.md, "Time"), and
// excludes the shim's own time by reading the thread's CPU clock again on the way out.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "futex_word.hpp"
#include "phantora/protocol.hpp"
#include "phantora/units.hpp"

namespace phantora::shim {

struct Timeline;

class Runtime {
 public:
  static Runtime& get();

  // This process is the simulator's client (a rank): it has made a CUDA call since it started
  // or was forked.
  bool is_client() const { return connected_.load(); }
  // Connects on first use. Exits the process with a clear message when no simulator runs.
  void ensure_connected();
  const wire::Welcome& welcome() {
    ensure_connected();
    return welcome_;
  }
  int host() const { return host_; }

  // Host clock of the calling thread (picoseconds of simulated time).
  SimTime clock() const;
  void advance_clock_to(SimTime t);

  // Queues an asynchronous record, stamped with the current host clock.
  void submit(wire::RecordType type, const void* body, size_t size);
  // Sends a record that the daemon answers, flushing everything queued before it, and waits
  // for the answer. Returns the simulated time of what it waited for; the host clock has
  // already been moved to at least that time when `advance` is true.
  SimTime request(wire::RecordType type, const void* body, size_t size, bool advance = true);
  // The two halves of request(), for calls that send several requests before waiting on any
  // (ncclCommInitAll, communicator inits inside a group).
  struct Answer {
    SimTime time;
    int32_t value0 = 0;
    int32_t value1 = 0;
    // False for a query that went on before its answer: the work ends after `time`.
    bool exact = true;
  };
  uint64_t send_request(wire::RecordType type, const void* body, size_t size);
  Answer wait_reply(uint64_t id, bool advance = true);
  // A query (cudaStreamQuery, cudaEventQuery): a request that does not move the clock, whose
  // thread goes on from its own clock whatever the answer. So it need not wait for the work's
  // end: once the daemon says the answer comes after the thread's clock (wire::Progress) it
  // goes on with that (an answer with `exact` false: the work ends after `time`), and the reply
  // that comes later is dropped (docs/time.md, "A sleep beside a query").
  Answer query(wire::RecordType type, const void* body, size_t size);
  // Appends a record built from parts (a fixed struct followed by variable bytes).
  void submit_parts(wire::RecordType type, const void* head, size_t head_size, const void* tail,
                    size_t tail_size);

  void flush();
  void shutdown();             // at process exit: flush, say goodbye, close
  void exiting(int status);    // exit(status): shutdown() telling the daemon the status
  void killed_by(int signal);  // in a fatal signal's handler: tell the daemon, close

  // Interns a kernel name; the daemon learns each name once.
  uint32_t kernel_id(const std::string& mangled);
  uint64_t next_stream_id() { return next_stream_.fetch_add(1); }
  uint64_t next_event_id() { return next_event_.fetch_add(1); }
  uint64_t next_graph_id() { return next_graph_.fetch_add(1); }

  // The calling thread's host clock as the program's own clock functions report it
  // (clock_gettime and friends, api_host_clocks.cpp). Never connects: before the process has
  // made a CUDA call it answers from the CPU time spent so far, which is what the first call
  // will charge.
  static int64_t virtual_time_ns();
  // The calling thread is inside an intercepted call or is one of the shim's own threads: the
  // libc interposers pass its calls straight through.
  static bool in_shim();

  // How many outermost intercepted calls this thread has made.
  static uint64_t thread_call_count();
  // How many records this thread has sent that submit work or wait for it (every record but a
  // query, a request that does not move the caller's clock).
  static uint64_t thread_work_count();

  // The current call does real work of its own (moves payload bytes, fills a large host buffer,
  // waits for the daemon): its end is measured instead of estimated, so that none of it is
  // charged to the program's host clock.
  static void note_expensive();

  // Called by ApiCall.
  void on_enter();
  void on_leave();

  void after_fork_in_child();
  void before_fork();
  // A rank forked from the warm-rank server: this thread's clock and call state start afresh.
  static void start_afresh(int64_t startup_cpu_ns);
  void after_fork_in_parent();

 private:
  Runtime();
  void connect_locked();
  void append_locked(wire::RecordType type, uint64_t request, const void* head, size_t head_size,
                     const void* tail, size_t tail_size);
  void flush_locked();
  void send_frame_locked(wire::FrameType type, const void* body, size_t size);
  void reader_loop();
  // Called by the reader thread between frames: tells the daemon when the process waits
  // outside CUDA (wire::kHostIdle).
  void watch_idle();
  // Called by the reader thread: tells the daemon when the process bound moved without a record
  // (a thread began to wait for another).
  void watch_bound();
  // Called by the reader thread: when a request has waited a long time for its answer (a
  // stall), prints once what holds the process bound, whether it has moved without being sent,
  // and the bounds the reader sent meanwhile with the thread at the latest finite one.
  void watch_held_bound();
  void watch_fatal_signals();
  void receive_payload(uint32_t length);
  [[noreturn]] void lost_daemon(const std::string& why);

  std::mutex mu_;  // guards the batch buffer, the socket's write side and connection state
  int fd_ = -1;
  std::atomic<bool> connected_{false};  // read without mu_ by ensure_connected and is_client
  bool closed_ = false;
  int host_ = 0;
  wire::Welcome welcome_{};
  std::vector<std::byte> batch_;
  std::thread reader_;

  // A request sent and not yet answered: the reader thread fills in the reply, then moves
  // `arrived` on, which wakes the thread waiting for it (futex_word.hpp says why not a
  // condition variable).
  // A Progress frame (the reader) moves `arrived` on as well, for a query it lets go on.
  struct PendingReply {
    FutexWord arrived;
    int64_t sent_ns = 0;  // real monotonic time the request was made (the stall report)
    // Under reply_mu_:
    wire::Reply reply{};
    bool replied = false;
    Timeline* waiter = nullptr;  // the thread blocked on it, once it waits
    bool query = false;          // ... in query(), from this clock:
    int64_t query_clock_ps = 0;
    int64_t answers_from_ps = -1;  // the answer comes no earlier (wire::Progress; -1: not said)
  };
  // Answers wire::Progress frames: what each says of the requests it covers.
  void on_progress(const wire::Progress& p);
  Answer wait_for(uint64_t id, bool advance, bool query);
  std::mutex reply_mu_;  // guards pending_, gone_on_, next_request_ and the wait below
  std::map<uint64_t, std::shared_ptr<PendingReply>> pending_;
  std::set<uint64_t> gone_on_;  // queries that went on before their reply: drop it
  uint64_t next_request_ = 1;
  // Since when some request has always been waiting (0: none waits), and how many were
  // answered since: a thread that polls (cudaEventQuery in a loop) waits on one request after
  // another, and the process may wait for minutes while no single request does.
  int64_t waiting_since_ns_ = 0;
  uint64_t answered_while_waiting_ = 0;

  // The process bound of the latest record (written under mu_; the reader's stall report reads
  // it without).
  std::atomic<int64_t> last_bound_sent_{-1};
  int32_t exit_code_ = 0;
  std::atomic<uint64_t> next_stream_{wire::kFirstUserStream};
  std::atomic<uint64_t> next_event_{1};
  std::atomic<uint64_t> next_graph_{1};
  std::atomic<bool> shutting_down_{false};
  // Idle detection (reader thread only, apart from the counter).
  std::atomic<uint64_t> work_records_{0};
  uint64_t idle_seen_work_ = 0;
  int64_t idle_since_ns_ = 0;
  int64_t idle_busy_ns_ = 0;
  bool idle_sent_ = false;
  // Stall report (reader thread only): the wait last reported, and the bounds the reader
  // itself sent because the process bound moved without a record (watch_bound).
  int64_t held_reported_since_ns_ = 0;
  uint64_t reader_bound_sends_ = 0;
  int64_t reader_last_finite_ps_ = -1;  // the latest finite one, and the thread at it
  int reader_last_finite_tid_ = -1;

  std::mutex kernels_mu_;
  std::map<std::string, uint32_t> kernel_ids_;
};

// RAII marker for one intercepted API call (see Runtime::on_enter / on_leave).
class ApiCall {
 public:
  ApiCall() { Runtime::get().on_enter(); }
  ~ApiCall() { Runtime::get().on_leave(); }
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;
};

// Prints "phantora: <message>" to stderr and ends the process.
[[noreturn]] void fatal(const std::string& message);

}  // namespace phantora::shim
