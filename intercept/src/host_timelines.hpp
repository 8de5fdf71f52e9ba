// Host timelines: one simulated clock per thread of the process (docs/time.md, "Host clocks").
//
// A thread's clock advances by its own CPU time (measured mode) or call costs (model mode) and by
// its own waits: a blocking CUDA call moves only the caller. Threads hand work to each other
// through condition variables, semaphores and thread creation and joining; the thread that
// wakes takes the clock of the thread that woke it (a happens-before edge), so a thread that
// waited for another never resumes before it.
//
// The process bound (wire::RecordHeader::bound_ps) is the earliest time at which any thread can
// still submit work: the least clock of the threads that have made CUDA calls and run, and of
// hand-offs signalled but not yet taken up. Threads waiting for a reply or for another thread
// do not bound it, so the simulation goes on while they wait.
//
// Everything here works before the process has connected to the daemon and in processes that
// never do (the libc clock interposers use it from the first instruction of main).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "phantora/protocol.hpp"

namespace phantora::shim {

enum class ThreadState : uint8_t {
  kRunning,   // runs the program
  kCallWait,  // blocked in a call the simulator answers: runs again from the answer's time
  kHostWait,  // waits for another thread: runs again from a hand-off, counted until taken up
  kExited,
};

struct Timeline {
  std::atomic<int64_t> clock_ps{0};
  std::atomic<ThreadState> state{ThreadState::kRunning};
  std::atomic<bool> bounds{false};   // made a CUDA call: its submissions are simulated
  std::atomic<bool> awaited{false};  // exited, and a joiner waits for its clock
  std::atomic<bool> detached{false};
  // In a poll, select or epoll wait with a timeout: where that timeout ends (-1: not in one).
  // Another thread's timeout that ends later is not due before it (least_other_clock_ps).
  std::atomic<int64_t> poll_end_ps{-1};
  // Waits for CPython's GIL: it goes on from its own clock once the holder lets go, so another
  // thread's timeout waits for it as for a running thread (never marked stalled), but it does
  // not hold the process's bound: the holder may be blocked in a call the simulation answers.
  std::atomic<bool> gil_waiting{false};
  // Blocked in a request whose answer's time it runs on from (not a query, which goes on from
  // its own clock): least_other_clock_ps counts it no earlier than `answers_from_ps`, where the
  // daemon said that answer comes no earlier (wire::Progress; -1: it has not said).
  std::atomic<bool> takes_answer_time{false};
  std::atomic<int64_t> answers_from_ps{-1};
  // Started by a thread that does CUDA work and not yet waiting for anything: it runs from its
  // parent's clock, and whatever it hands on carries that clock (the autograd engine's device
  // threads, which the main thread waits for at the first backward): when it started (real
  // monotonic ns; 0: not starting). Counted for kStartingWindowNs of real time at most.
  std::atomic<int64_t> starting_since_ns{0};
  unsigned long thread = 0;  // pthread_t
  int call_waits = 0;        // requests this thread waits for (owner only)
  // Stall detection (Timelines::watch_stalls): the owner counts what it does; the watcher
  // marks a thread stalled that did nothing and used (or waited for) no CPU for a while.
  std::atomic<uint64_t> activity{0};
  std::atomic<bool> stalled{false};
  // Stalled in a system call that waits for another process (thread_waits_for_io): input from
  // a DataLoader's workers, a compiler's pipe. Such a wait ends without any thread of this
  // process, and the others' timeouts wait for it (least_other_clock_ps). Kept by the watcher.
  std::atomic<bool> stalled_in_io{false};
  int tid = 0;
  uint64_t seen_activity = 0;  // watcher only
  int64_t window_start_ns = 0;
  int64_t window_demand_ns = 0;
};

class Timelines {
 public:
  // This thread's timeline (made on first use).
  static Timeline& self();
  // How host time advances between calls: from the daemon's welcome once connected, else from
  // PHANTORA_CPU_TIME (which `phantora run` sets; unset or unknown: measured).
  static wire::CpuTimeMode mode();
  static void set_mode(wire::CpuTimeMode m);

  // Measured mode: charges this thread's CPU time since the last charge to its clock (now, or
  // up to `cpu_ns` of thread CPU time). set_cpu_mark says up to where it has been accounted
  // (the shim's own time in a call is not the program's).
  static void charge_cpu_now();
  static void charge_cpu_until(int64_t cpu_ns);
  static void set_cpu_mark(int64_t cpu_ns);

  // Marks this thread as one whose clock bounds the simulation (its first CUDA call).
  static void register_self();
  // The least clock of running bounding threads and pending hand-offs (wire::kNoBound: none).
  static int64_t bound_ps();
  // What holds the process bound now, one line each: the running threads at the least clock
  // (tid, name, state in /proc) and the hand-offs not taken up (their clock and age); empty
  // when nothing does. For the report of a request that has waited long for its answer.
  static std::string describe_bound();
  // A thread that counts in the bound with its clock at `bound_ps` (a bound just sent): its
  // tid, or 0 when none is (the bound came from a hand-off or a thread being created, or has
  // moved since).
  static int bound_holder_tid(int64_t bound_ps);
  // The latest clock of any thread: where the process is when it ends.
  static int64_t latest_ps();
  // The least clock of the other threads that do the program's CUDA work (running, not stalled,
  // or blocked in a call the simulator answers; ended, with a joiner waiting for their end;
  // polling with a timeout: where it ends; stalled in a wait for another process, unless
  // `with_io_waits` is false), of threads they started or woken that have not yet waited again
  // (or ended so, with a joiner waiting), and of hand-offs not yet taken up (wire::kNoBound:
  // none): a timed wait of this thread that ends later would run ahead of the rest of the
  // process.
  static int64_t least_other_clock_ps(bool with_io_waits = true);
  // The daemon says that the answer `waiter` is blocked for comes no earlier than `ps`
  // (wire::Progress): if it takes its answer's time it counts no earlier in
  // least_other_clock_ps. Never backwards within one wait (Runtime resets it to -1 between).
  static void answers_from(Timeline& waiter, int64_t ps);
  // For a sleep that waits for the others: how often answers_from has moved, and a wait of
  // `slice_ns` of real time at most for its next move after `seen` (false: a signal cut it
  // short). The move is what lets such a sleep come due when a thread of the process is blocked
  // in a request.
  static uint32_t answers_from_moves();
  static bool wait_answers_from_move(uint32_t seen, int64_t slice_ns);
  // Moves that word on when a sleep waits on it: the calling thread has just blocked in a
  // request, where it counts from a clock it may have moved since such a sleep last looked (a
  // query's poll that went on moves it to where the daemon got, then asks again). Without it the
  // sleep would look again only at the end of its slice, and a slice longer than the stall
  // detector's window would take it out of the bound.
  static void nudge_answer_watchers();
  // A sleep that waits on the word holds one from before it first reads it to its end, so that
  // no nudge falls between its look at the others and its wait.
  struct AnswerWatch {
    AnswerWatch();
    ~AnswerWatch();
    AnswerWatch(const AnswerWatch&) = delete;
    AnswerWatch& operator=(const AnswerWatch&) = delete;
  };

  // Hand-offs through a synchronisation object (a condition variable or semaphore address).
  // The signal releases one waiter, or all for a broadcast, of those in a wait on `object` that
  // an earlier signal has not released already.
  static void signal(const void* object, bool all);
  // Around a wait on `object`: before() counts the waiter and leaves the bound; after() takes
  // the hand-off that released it, if any (returns its clock, or -1), and runs again.
  static void before_wait(const void* object);
  static int64_t after_wait(const void* object);
  // The clock of the latest signal or post on `object` (-1: none), for a semaphore taken
  // without waiting.
  static int64_t last_signal_ps(const void* object);
  // Hand-offs that no waiter took up, dropped after holding the bound for a second of real
  // time each (a diagnostic: none is expected).
  static uint64_t lapsed_handoffs();

  // Thread creation and joining (the child starts at the parent's clock, the joiner resumes no
  // earlier than the joined thread's end). A thread created by one that does CUDA work is
  // counted from its creation (thread_created) until it first waits, at the parent's clock.
  static void thread_created(int64_t parent_clock_ps);
  // The thread started (start_thread does it) or was not created.
  static void thread_creation_done(int64_t parent_clock_ps);
  static void start_thread(int64_t parent_clock_ps, bool detached, bool counted);
  static void detach(unsigned long thread);
  // Before joining `thread`: leaves the bound and counts the thread's end in it.
  static void before_join(unsigned long thread);
  // After the join returned: takes the joined thread's end (when `joined`) and runs again.
  static void after_join(unsigned long thread, bool joined);

  // Moves this thread's clock forward to at least `ps`.
  static void advance_to(int64_t ps);
  // Runs on from a clock handed over by a signal or a join (advance_to, then kRunning); one
  // `carries_bound` (from a thread that bounds the simulation or stands for one) makes this
  // thread stand for it until it waits again, if it does not bound itself.
  static void resume_from(int64_t clock_ps, bool carries_bound);
  // Sets this thread's clock back to `ps`: only for a sleep that committed its clock to its end
  // and was cut short by a signal.
  static void rewind_to(int64_t ps);
  static void set_state(ThreadState s);
  // This thread starts or ends a wait for CPython's GIL (Timeline::gil_waiting).
  static void set_gil_waiting(bool waiting);

  static void after_fork_in_child();
  // In a process forked from a warmed one to be a rank (phantora_fresh_process): the calling
  // thread, now the only one, starts a new timeline at 0, as a new process's main thread does,
  // with `startup_cpu_ns` of CPU time (the warmed process's imports) still to be charged in
  // measured mode.
  static void start_afresh(int64_t startup_cpu_ns);

  // Called by the shim's reader thread every few milliseconds: a thread counted in the bound
  // that has made no call the shim sees and neither run nor waited for a CPU for
  // kStallAfterNs is blocked in something the shim cannot see (a mutex, a futex, a socket);
  // it leaves the bound until it does something again (a call the shim sees, or running on a
  // later pass), so that it cannot hold the simulation back while the thread it waits for waits
  // on the simulation. Returns whether a thread was newly marked.
  static bool watch_stalls();
};

// Forgets this thread's run of clock reads (the spin detector of api_host_clocks.cpp).
void forget_clock_reads();

}  // namespace phantora::shim
