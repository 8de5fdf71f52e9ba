// The clocks that bytes carry through the job's pipes. A pipe joins two processes, and what one
// reads the other wrote at some simulated time: a DataLoader's worker process hands its batch
// back through one, having spent its CPU time on it (docs/time.md, "Time carried by pipes").
// This table, in memory the job's processes on a machine share, holds for each pipe a job's
// process made the clock of each write at its offset in the pipe's byte stream; a reader that
// gets a byte runs on no earlier than the clock it was written at.
//
// Knows nothing of clocks' meaning, system calls or processes: api_pipes.cpp feeds it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace phantora::shim {

class PipeClocks {
 public:
  // Pipes tracked at once (the oldest tracked is forgotten for a new one: a DataLoader makes a
  // few per worker and epoch), and writes remembered per pipe (a reader more than this many
  // writes behind reads the older bytes without a clock).
  static constexpr size_t kPipes = 256;
  static constexpr size_t kStamps = 256;

  // The bytes of memory a table needs; it starts zeroed (a new mapping or file is).
  static size_t bytes();
  // A table over `memory`, which may be shared with other processes' tables.
  explicit PipeClocks(void* memory);

  // A pipe the job made (its inode): tracked from its first byte.
  void track(uint64_t inode);
  bool tracked(uint64_t inode) const;

  // A write to a tracked pipe: before it, the writer's clock (its bytes start at the pipe's
  // current offset; writers that share a pipe take turns, as a multiprocessing queue's lock
  // makes them); after it, how many bytes it wrote.
  void before_write(uint64_t inode, int64_t clock_ps);
  void after_write(uint64_t inode, size_t written);

  // `n` bytes read from a tracked pipe (readers take turns too): the clock the last of them was
  // written at, if a write of this table's wrote it and is still remembered.
  std::optional<int64_t> after_read(uint64_t inode, size_t n);

 private:
  struct Stamp {
    std::atomic<uint64_t> offset;  // the first byte the write wrote
    std::atomic<int64_t> clock_ps;
  };
  struct Pipe {
    std::atomic<uint64_t> inode;  // 0: no pipe
    std::atomic<uint64_t> written;
    std::atomic<uint64_t> read;
    std::atomic<uint64_t> stamps;  // how many were recorded: the latest is stamps - 1
    Stamp stamp[kStamps];
  };
  struct Table {
    std::atomic<uint64_t> tracked;  // pipes tracked so far: the next goes to tracked % kPipes
    Pipe pipe[kPipes];
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared between processes");

  Pipe* find(uint64_t inode) const;

  Table* table_;
};

}  // namespace phantora::shim
