// Step times as the job prints them. Training scripts log each iteration's time; `phantora run`
// reads the job's output for those lines so that report.json carries the step time the user
// sees (docs/report.md, "steps"), which `--baseline` and `phantora sweep` compare.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace phantora::tools {

class StepTimeScanner {
 public:
  // `pattern`: an ECMAScript regex whose first group is the number and whose optional second
  // group is its unit (s, ms or us; ms when absent). Empty: the built-in patterns, which match
  //   "step 12 ... step time 35.5 ms"                  (examples/gpt.py and similar)
  //   "elapsed time per iteration (ms): 812.3"          (Megatron-LM)
  // Throws std::invalid_argument for a pattern that does not compile or has no group.
  explicit StepTimeScanner(const std::string& pattern = "");

  // The step time in seconds if the line reports one.
  std::optional<double> scan(std::string_view line) const;
  const std::string& description() const { return description_; }

 private:
  std::vector<std::regex> patterns_;
  std::string description_;
};

// Summary of the step times a run printed: the first one is left out as warm-up when there are
// more, the rest give the median and mean.
struct StepStats {
  std::vector<double> times_s;
  bool skipped_first = false;
  double median_s = 0;
  double mean_s = 0;
};
std::optional<StepStats> summarize_steps(const std::vector<double>& times_s);

}  // namespace phantora::tools
