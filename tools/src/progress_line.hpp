// The progress line `phantora run` keeps at the bottom of a terminal while a job runs
// (docs/report.md, "Progress on a terminal"): what it says, and the estimate of time left.
// Pure functions; run_progress.hpp gathers the figures, status_line.hpp draws the line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace phantora::tools {

struct ProgressFigures {
  double wall_s = 0;       // since the job started
  double simulated_s = 0;  // the end of the latest GPU operation simulated so far
  int steps = 0;           // step-time lines seen in the job's output
  std::optional<double> last_step_s;
  std::optional<int> expect_steps;  // --expect-steps
  int ranks_alive = 0;
  int world_size = 0;  // WORLD_SIZE a launcher announced; 0: none did
  std::optional<double> remaining_s;
};

// "phantora: sim 1.254 ms | steps 2/3 (last 1.250 ms) | ranks 1 | wall 0:03 | ETA 0:02".
std::string format_progress(const ProgressFigures& f);

// Wall time left from when each step line was seen (seconds since the start, in order) and
// how many there will be: the mean interval between step lines times the steps to come. The
// first line is only a starting point (it comes after the job's start-up and warm-up), so
// there is no estimate before the second, nor once every expected step has been seen.
std::optional<double> estimate_remaining(const std::vector<double>& seen_at_s, int expect_steps);

// "0:42", "12:05", "1:02:03" (rounded down to the second).
std::string clock_text(double seconds);
// "850 ns", "1.254 ms", "12.345 s": three decimals in the largest unit under the value.
std::string duration_text(double seconds);

}  // namespace phantora::tools
