// `phantora run`: simulate a cluster and run the job's command on it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace phantora::tools {

struct RunOptions {
  int hosts = 1;
  int gpus_per_host = 8;
  std::string gpu = "h100";
  std::optional<std::filesystem::path> topology;
  std::filesystem::path out = "phantora-out";
  std::string cpu_time = "measured";
  std::optional<std::filesystem::path> kernel_times;
  double launch_latency_us = 4.0;
  double call_cost_us = 2.0;
  std::optional<int> timeout_s;
  bool quiet = false;
  std::vector<std::string> command;
};

// Returns the process exit status for phantora: the job's (the first failing host's code).
int run_command(const RunOptions& options);

}  // namespace phantora::tools
