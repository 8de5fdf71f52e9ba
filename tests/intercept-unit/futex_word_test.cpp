// The shim's hand-offs between its reader thread and the threads that wait for a reply or a
// collective's result (futex_word.hpp, payload_inbox.hpp). A hand-off that a waiter misses hangs
// the test (ctest's TIMEOUT fails it).
#include "futex_word.hpp"
#include "payload_inbox.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace phantora::shim {
namespace {

TEST(FutexWord, AWaitReturnsAtOnceWhenTheWordHasMovedOn) {
  FutexWord w;
  EXPECT_EQ(w.load(), 0u);
  w.bump_and_wake_all();
  EXPECT_EQ(w.load(), 1u);
  w.wait_while(0);  // would sleep for ever if it slept on a changed word
}

TEST(FutexWord, ASleeperWakesWhenAnotherThreadMovesTheWordOn) {
  FutexWord w;
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    w.wait_while(0);
    woke = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(woke);  // nothing has moved the word yet
  w.bump_and_wake_all();
  sleeper.join();
  EXPECT_TRUE(woke);
}

TEST(FutexWord, ManyHandOffsBackAndForthAreNeverMissed) {
  // Two threads take turns 100,000 times, each sleeping until the other moves its word on, with
  // more threads than cores contending: one missed wake-up and both sleep for ever.
  constexpr int kRounds = 100'000;
  FutexWord ping, pong;
  std::atomic<bool> stop{false};
  std::vector<std::thread> noise;
  for (int i = 0; i < 2; ++i) {
    noise.emplace_back([&] {
      while (!stop) std::this_thread::yield();
    });
  }
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) {
      ping.wait_while(static_cast<uint32_t>(i));
      pong.bump_and_wake_all();
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    ping.bump_and_wake_all();
    pong.wait_while(static_cast<uint32_t>(i));
  }
  other.join();
  stop = true;
  for (std::thread& t : noise) t.join();
  EXPECT_EQ(ping.load(), static_cast<uint32_t>(kRounds));
  EXPECT_EQ(pong.load(), static_cast<uint32_t>(kRounds));
}

TEST(PayloadInbox, AReadWaitsForTheResultThatWillWriteItsBytes) {
  PayloadInbox& inbox = PayloadInbox::get();
  inbox.expect(0x1000, 256);
  EXPECT_TRUE(inbox.overlaps(0x10f0, 64));
  EXPECT_FALSE(inbox.overlaps(0x1100, 64));
  inbox.wait_for(0x1100, 64);  // nothing expected there: returns at once
  std::atomic<bool> read{false};
  std::thread reader([&] {
    inbox.wait_for(0x10f0, 64);
    read = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(read);
  inbox.arrived(0x1000);
  reader.join();
  EXPECT_TRUE(read);
  EXPECT_FALSE(inbox.overlaps(0x1000, 256));
}

}  // namespace
}  // namespace phantora::shim
