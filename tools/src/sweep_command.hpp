// `phantora sweep`: one workload over a list of cluster variations (sweep_plan.hpp), each point
// a `phantora run` of its own (several at once with --parallel), then the comparison table and
// plots (sweep_results.hpp, sweep_plots.hpp). docs/sweep.md.
#pragma once

#include <CLI/CLI.hpp>

#include "sweep_plan.hpp"

namespace phantora::tools {

class SweepCommand {
 public:
  explicit SweepCommand(CLI::App& app);
  bool chosen() const { return cmd_->parsed(); }
  // 0 when every point ran, 1 when some failed (the outputs are written either way), 130 when
  // interrupted.
  int run();

 private:
  CLI::App* cmd_;
  SweepSpec spec_;
  std::string hosts_, gpus_per_host_, gpu_, topology_, nic_, oversubscription_, represent_dp_;
  std::string file_;
  std::vector<std::string> vars_;
};

}  // namespace phantora::tools
