// When has a job whose ranks came by themselves (`phantora serve`) finished? Nobody hands the
// daemon the job's processes, so it judges by the connections: every host has had a process,
// every rank a launcher announced (RANK / WORLD_SIZE) has come, none is connected any more,
// and none has come or gone for a settling time (a host whose command starts its ranks one
// after the other must not end the run between two of them).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace phantora::tools {

class JobCompletion {
 public:
  using Clock = std::chrono::steady_clock;
  JobCompletion(int hosts, Clock::duration settle) : hosts_(hosts), settle_(settle) {}

  void joined(uint32_t client, int host, int global_rank, int world_size, Clock::time_point now);
  void left(uint32_t client, Clock::time_point now);

  bool done(Clock::time_point now) const;
  // What it still waits for, for a message: "hosts 1, 3 have not connected; ...".
  std::string waiting_for() const;
  int connected() const { return static_cast<int>(connected_.size()); }
  // When the first process came, and when the last came or went (the job's wall time).
  Clock::time_point first_joined() const { return first_joined_; }
  Clock::time_point last_change() const { return last_change_; }
  bool anyone() const { return anyone_; }

 private:
  int hosts_;
  Clock::duration settle_;
  std::set<int> hosts_seen_;
  std::set<int> ranks_seen_;
  int world_size_ = 0;
  std::set<uint32_t> connected_;
  bool anyone_ = false;
  Clock::time_point first_joined_{};
  Clock::time_point last_change_{};
};

}  // namespace phantora::tools
