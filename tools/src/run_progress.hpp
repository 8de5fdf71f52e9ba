// Progress of a running job on the terminal (docs/report.md, "Progress on a terminal"): every
// quarter second, `phantora run` gathers the simulated time (from the daemon's thread), the step
// lines the job has printed so far (from the job's log as the copier writes it), the ranks
// connected and the wall time, and hands the copier the line to keep under the job's output.
// Inactive — nothing gathered, nothing drawn — unless stderr is a terminal.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon.hpp"
#include "job_output.hpp"
#include "run_command.hpp"
#include "step_times.hpp"

namespace phantora::tools {

class RunProgress {
 public:
  // Whether a run with these options shows progress: not --quiet, stderr a terminal that
  // understands erasing a line (TERM is not "dumb").
  static bool wanted(const RunOptions& options);

  // `log`: the job's log as JobOutput writes it (read while it grows).
  RunProgress(bool active, const StepTimeScanner& scanner, std::filesystem::path log,
              std::optional<int> expect_steps);
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;
  ~RunProgress();

  bool active() const { return active_; }
  // For the Daemon: counts the processes as they connect and leave.
  ClientObserver observer();
  // Called often while the job runs (the launcher's poll); does its work at most every 250 ms.
  void tick(Daemon& daemon, JobOutput& output);

 private:
  void read_new_lines();

  bool active_;
  const StepTimeScanner& scanner_;
  std::filesystem::path log_;
  std::optional<int> expect_steps_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_tick_{};
  int log_fd_ = -1;
  std::string partial_;
  std::vector<double> step_seen_at_s_;
  std::optional<double> last_step_s_;
  std::string shown_;

  // Written on the daemon's thread.
  std::mutex mu_;
  std::map<uint32_t, bool> connected_;  // client -> has a RANK
  bool ever_ranked_ = false;            // some process had a RANK: only those count as ranks
  int world_size_ = 0;
  int64_t simulated_ps_ = 0;
};

}  // namespace phantora::tools
