// `phantora run`: simulate a cluster and run the job's command on it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace phantora::tools {

struct RunOptions {
  // Unset: from --topology if given, else 1 host x 8 H100.
  std::optional<int> hosts;
  std::optional<int> gpus_per_host;
  std::optional<std::string> gpu;
  std::optional<std::filesystem::path> topology;
  std::filesystem::path out = "phantora-out";
  std::string cpu_time = "measured";
  std::optional<std::filesystem::path> kernel_times;
  std::optional<std::filesystem::path> kernel_db;
  double launch_latency_us = 4.0;
  double call_cost_us = 2.0;
  std::optional<int> timeout_s;
  int collective_timeout_s = 300;
  bool quiet = false;
  std::vector<std::string> command;
};

// Returns the process exit status for phantora: the job's (the first failing host's code).
int run_command(const RunOptions& options);

}  // namespace phantora::tools
