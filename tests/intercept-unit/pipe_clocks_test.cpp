#include "pipe_clocks.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace phantora::shim {
namespace {

// Two processes' views of one table: two PipeClocks over the same (zeroed) memory.
struct SharedTable {
  std::vector<std::uint64_t> memory =
      std::vector<std::uint64_t>(PipeClocks::bytes() / sizeof(std::uint64_t) + 1, 0);
  PipeClocks writer{memory.data()};
  PipeClocks reader{memory.data()};
};

void write(PipeClocks& t, uint64_t inode, int64_t clock_ps, size_t bytes) {
  t.before_write(inode, clock_ps);
  t.after_write(inode, bytes);
}

TEST(PipeClocks, OnlyTrackedPipesCarryClocks) {
  SharedTable s;
  s.writer.track(7);
  EXPECT_TRUE(s.reader.tracked(7));
  EXPECT_FALSE(s.reader.tracked(8));
  write(s.writer, 8, 100, 4);  // not a pipe the job made: nothing kept
  EXPECT_FALSE(s.reader.after_read(8, 4).has_value());
  EXPECT_FALSE(s.reader.tracked(0));
}

// Three messages of 10, 20 and 5 bytes written at 100, 200 and 300: a read ends in one of them
// and takes the clock of the write that wrote its last byte, whatever the read's size.
TEST(PipeClocks, AReadTakesTheClockItsLastByteWasWrittenAt) {
  SharedTable s;
  s.writer.track(42);
  write(s.writer, 42, 100, 10);                 // bytes 0-9
  write(s.writer, 42, 200, 20);                 // 10-29
  write(s.writer, 42, 300, 5);                  // 30-34
  EXPECT_EQ(s.reader.after_read(42, 4), 100);   // 0-3
  EXPECT_EQ(s.reader.after_read(42, 6), 100);   // 4-9
  EXPECT_EQ(s.reader.after_read(42, 1), 200);   // 10
  EXPECT_EQ(s.reader.after_read(42, 24), 300);  // 11-34: the last byte's write
}

// A write is stamped before the bytes can be read (the reader may get them before the writer
// returns); one that wrote nothing leaves a stamp the next write at the same offset replaces.
TEST(PipeClocks, AStampComesBeforeItsBytesAndAnEmptyWriteLeavesNone) {
  SharedTable s;
  s.writer.track(5);
  s.writer.before_write(5, 500);
  EXPECT_EQ(s.reader.after_read(5, 3), 500);  // read while the write is under way
  s.writer.after_write(5, 3);
  s.writer.before_write(5, 600);  // interrupted: wrote nothing
  write(s.writer, 5, 700, 2);     // bytes 3-4
  EXPECT_EQ(s.reader.after_read(5, 2), 700);
}

// A reader more than a ring of writes behind reads the oldest bytes without a clock, and the
// newer ones with theirs.
TEST(PipeClocks, WritesBeyondTheRingAreForgotten) {
  SharedTable s;
  s.writer.track(9);
  const size_t writes = PipeClocks::kStamps + 10;
  for (size_t i = 0; i < writes; ++i) write(s.writer, 9, 1000 + static_cast<int64_t>(i), 1);
  EXPECT_FALSE(s.reader.after_read(9, 10).has_value());  // bytes 0-9: their stamps are gone
  EXPECT_EQ(s.reader.after_read(9, 1), 1010);
  EXPECT_EQ(s.reader.after_read(9, writes - 11), 1000 + static_cast<int64_t>(writes) - 1);
}

// Tracking a pipe starts its counts afresh, also when its inode was a dead pipe's (pipefs
// reuses them) or its slot held the oldest of kPipes others.
TEST(PipeClocks, ANewPipeStartsFromItsFirstByte) {
  SharedTable s;
  s.writer.track(3);
  write(s.writer, 3, 100, 50);
  EXPECT_EQ(s.reader.after_read(3, 20), 100);
  s.writer.track(3);  // the old pipe 3 closed; a new one got its inode
  write(s.writer, 3, 900, 5);
  EXPECT_EQ(s.reader.after_read(3, 5), 900);
  for (uint64_t i = 0; i < PipeClocks::kPipes; ++i) s.writer.track(1000 + i);
  EXPECT_FALSE(s.reader.tracked(3));  // pushed out by kPipes newer pipes
  EXPECT_TRUE(s.reader.tracked(1000 + PipeClocks::kPipes - 1));
}

}  // namespace
}  // namespace phantora::shim
