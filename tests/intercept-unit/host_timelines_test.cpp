// Hand-offs between threads (host_timelines.cpp): a signal keeps the process bound at the
// signaller's clock until the waiter it released takes it up, and makes no hand-off that no
// waiter will take (such a one would hold the simulation for a second before it lapsed: the
// crawl of docs/reliability.md, finding 11). The bound is read through Timelines::bound_ps,
// which the shim sends with every record. And what another thread's timeout waits for
// (Timelines::least_other_clock_ps) of a thread blocked in a request.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "host_timelines.hpp"

namespace phantora::shim {
namespace {

// The calling thread bounds the simulation from `ps` on (clocks only move forward: each test
// starts past where the last one left the clock).
int64_t bound_from_here() {
  Timelines::set_mode(wire::CpuTimeMode::kZero);  // clocks move only where the test says
  Timelines::register_self();
  return Timelines::self().clock_ps.load() + 1'000'000;
}

// A thread that enters a wait on `object` at once and leaves it when `leave` is set, returning
// the clock of the hand-off it took (-1: none).
struct Waiter {
  std::promise<void> entered;
  std::promise<void> leave;
  std::future<int64_t> took;
  explicit Waiter(const void* object) {
    took = std::async(std::launch::async, [this, object] {
      Timelines::before_wait(object);
      entered.set_value();
      leave.get_future().wait();
      return Timelines::after_wait(object);
    });
    entered.get_future().wait();
  }
  int64_t release() {
    leave.set_value();
    return took.get();
  }
};

TEST(HandOffs, ASecondSignalBeforeTheWaiterRunsReleasesNobody) {
  const int64_t at = bound_from_here();
  int cv = 0;
  Waiter w(&cv);
  Timelines::advance_to(at);
  Timelines::signal(&cv, false);
  Timelines::signal(&cv, false);  // the same waiter, not yet run: nobody new is released
  Timelines::advance_to(at + 5'000);
  EXPECT_EQ(Timelines::bound_ps(), at);  // the hand-off is not yet taken up
  EXPECT_EQ(w.release(), at);
  // Taken: the bound is this thread's clock again, with nothing left behind at `at`.
  EXPECT_EQ(Timelines::bound_ps(), at + 5'000);
}

TEST(HandOffs, ABroadcastReleasesEachWaiterOnce) {
  const int64_t at = bound_from_here();
  int cv = 0;
  Waiter a(&cv), b(&cv);
  Timelines::advance_to(at);
  Timelines::signal(&cv, true);
  Timelines::advance_to(at + 1'000);
  Timelines::signal(&cv, true);   // both already released
  Timelines::signal(&cv, false);  // likewise
  Timelines::advance_to(at + 9'000);
  EXPECT_EQ(a.release(), at);
  EXPECT_EQ(Timelines::bound_ps(), at);  // b's hand-off still counts
  EXPECT_EQ(b.release(), at);
  EXPECT_EQ(Timelines::bound_ps(), at + 9'000);
}

TEST(HandOffs, EachOfTwoSignalsReleasesOneOfTwoWaiters) {
  const int64_t at = bound_from_here();
  int sem = 0;
  Waiter a(&sem), b(&sem);
  Timelines::advance_to(at);
  Timelines::signal(&sem, false);
  Timelines::advance_to(at + 2'000);
  Timelines::signal(&sem, false);
  Timelines::signal(&sem, false);  // a third post finds no waiter left to release
  Timelines::advance_to(at + 7'000);
  // Oldest first: the first to leave takes the first post's clock.
  EXPECT_EQ(a.release(), at);
  EXPECT_EQ(b.release(), at + 2'000);
  EXPECT_EQ(Timelines::bound_ps(), at + 7'000);
}

TEST(HandOffs, ASignalOnAnotherObjectReleasesNobody) {
  const int64_t at = bound_from_here();
  int waited = 0, signalled = 0;
  Waiter w(&waited);
  Timelines::advance_to(at);
  Timelines::signal(&signalled, false);
  Timelines::advance_to(at + 3'000);
  EXPECT_EQ(Timelines::bound_ps(), at + 3'000);
  EXPECT_EQ(w.release(), -1);
}

TEST(HandOffs, AWaiterThatLeftBeforeTheSignalIsNotReleasedByIt) {
  const int64_t at = bound_from_here();
  int cv = 0;
  Waiter w(&cv);
  EXPECT_EQ(w.release(), -1);  // timed out: nothing signalled
  Timelines::advance_to(at);
  Timelines::signal(&cv, false);
  Timelines::advance_to(at + 4'000);
  EXPECT_EQ(Timelines::bound_ps(), at + 4'000);
}

TEST(HandOffs, AHandOffNobodyTakesUpLapsesAfterASecondAndIsCounted) {
  const int64_t at = bound_from_here();
  const uint64_t lapsed_before = Timelines::lapsed_handoffs();
  int cv = 0;
  Waiter w(&cv);  // a waiter that does not come back for longer than the lapse
  Timelines::advance_to(at);
  Timelines::signal(&cv, false);
  Timelines::advance_to(at + 6'000);
  EXPECT_EQ(Timelines::bound_ps(), at);
  EXPECT_EQ(Timelines::lapsed_handoffs(), lapsed_before);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(Timelines::bound_ps(), at + 6'000);
  EXPECT_EQ(Timelines::lapsed_handoffs(), lapsed_before + 1);
  EXPECT_EQ(w.release(), -1);  // it lapsed: nothing left to take
}

// A thread blocked in a request (wire::Progress, docs/time.md "Sleeps and timed waits"): when
// `takes_answer_time`, it goes on from its answer's time, which the daemon says comes no earlier
// than its Timeline::answers_from_ps; a query goes on from its own clock. Stands in the others'
// clocks from a thread of its own until told to go.
struct BlockedInRequest {
  std::promise<void> entered;
  std::promise<void> leave;
  std::future<void> done;
  Timeline* timeline = nullptr;
  BlockedInRequest(int64_t clock_ps, bool takes_answer_time) {
    done = std::async(std::launch::async, [this, clock_ps, takes_answer_time] {
      Timelines::register_self();
      Timelines::advance_to(clock_ps);
      Timeline& self = Timelines::self();
      timeline = &self;
      self.takes_answer_time.store(takes_answer_time);
      Timelines::set_state(ThreadState::kCallWait);
      entered.set_value();
      leave.get_future().wait();
      self.takes_answer_time.store(false);
      self.answers_from_ps.store(-1);
      Timelines::set_state(ThreadState::kRunning);
    });
    entered.get_future().wait();
  }
  void release() {
    leave.set_value();
    done.get();
  }
};

TEST(AnswersFrom, AThreadBlockedInARequestCountsNoEarlierThanItsAnswerComes) {
  const int64_t at = bound_from_here();
  Timelines::advance_to(at + 50'000'000);  // this thread's sleep, say, ends well after
  BlockedInRequest sync(at, /*takes_answer_time=*/true);
  BlockedInRequest other(at + 2'000, /*takes_answer_time=*/true);
  EXPECT_EQ(Timelines::least_other_clock_ps(), at);
  const uint32_t moves = Timelines::answers_from_moves();
  Timelines::answers_from(*sync.timeline, at + 7'000);
  EXPECT_EQ(Timelines::answers_from_moves(), moves + 1);
  // Said of one thread's answer only: the other still counts at its clock.
  EXPECT_EQ(Timelines::least_other_clock_ps(), at + 2'000);
  Timelines::answers_from(*other.timeline, at + 9'000);
  EXPECT_EQ(Timelines::least_other_clock_ps(), at + 7'000);
  Timelines::answers_from(*sync.timeline, at + 3'000);  // never backwards: no move
  EXPECT_EQ(Timelines::answers_from_moves(), moves + 2);
  EXPECT_EQ(Timelines::least_other_clock_ps(), at + 7'000);
  sync.release();
  other.release();
}

TEST(AnswersFrom, AQueryGoesOnFromItsOwnClock) {
  const int64_t at = bound_from_here();
  Timelines::advance_to(at + 50'000'000);
  BlockedInRequest query(at, /*takes_answer_time=*/false);
  Timelines::answers_from(*query.timeline, at + 9'000);
  EXPECT_EQ(Timelines::least_other_clock_ps(), at);
  query.release();
}

TEST(AnswersFrom, AWaitForTheNextMoveEndsWhenItComes) {
  const int64_t at = bound_from_here();
  Timelines::advance_to(at + 50'000'000);
  BlockedInRequest sync(at, /*takes_answer_time=*/true);
  const uint32_t seen = Timelines::answers_from_moves();
  const auto start = std::chrono::steady_clock::now();
  std::thread mover([at, &sync] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Timelines::answers_from(*sync.timeline, at + 11'000);
  });
  // A slice of 10 s: it ends with the move, not the slice.
  EXPECT_TRUE(Timelines::wait_answers_from_move(seen, 10'000'000'000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(Timelines::answers_from_moves(), seen);
  mover.join();
  // A move already made ends the wait at once.
  EXPECT_TRUE(Timelines::wait_answers_from_move(seen, 10'000'000'000));
  sync.release();
}

TEST(AnswersFrom, AThreadThatBlocksInARequestNudgesTheSleepsThatWatch) {
  // No sleep watches: a nudge costs nothing and moves nothing.
  const uint32_t before = Timelines::answers_from_moves();
  Timelines::nudge_answer_watchers();
  EXPECT_EQ(Timelines::answers_from_moves(), before);
  // One watches (a sleep waiting for the others): the nudge ends its slice.
  const Timelines::AnswerWatch watch;
  const auto start = std::chrono::steady_clock::now();
  std::thread blocking([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Timelines::nudge_answer_watchers();
  });
  EXPECT_TRUE(Timelines::wait_answers_from_move(before, 10'000'000'000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(Timelines::answers_from_moves(), before + 1);
  blocking.join();
}

}  // namespace
}  // namespace phantora::shim
