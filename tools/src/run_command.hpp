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
  // A topology file, or the name of a preset (netmodel/data: dgx-a100, dgx-h100, ...).
  std::optional<std::string> topology;
  // Adjustments to the topology (file, preset or the default for the GPU model).
  std::optional<double> nic_gbytes_per_s;  // per NIC, per direction
  std::optional<double> oversubscription;  // leaf-to-spine, >= 1
  // The job is one of this many data-parallel slices of the cluster (simcore/replicas.hpp);
  // dp_comms says which of its communicators are data-parallel ("all", "size:K[,K...]").
  int represent_dp = 1;
  std::string dp_comms = "all";
  std::filesystem::path out = "phantora-out";
  std::string cpu_time = "measured";
  std::optional<std::filesystem::path> kernel_times;
  std::optional<std::filesystem::path> kernel_db;
  double launch_latency_us = 4.0;
  double call_cost_us = 2.0;
  std::optional<int> timeout_s;
  int collective_timeout_s = 300;
  bool quiet = false;
  // Step times from the job's output (step_times.hpp); empty: the built-in patterns.
  std::string step_time_regex;
  // Regression gate: compare with this report and fail past max_slowdown (a fraction).
  std::optional<std::filesystem::path> baseline;
  double max_slowdown = 0.02;
  std::vector<std::string> command;
};

// Returns the process exit status for phantora: the job's (the first failing host's code), or
// kRegressionExit when the job succeeded but is slower than --baseline allows.
int run_command(const RunOptions& options);
inline constexpr int kRegressionExit = 3;

}  // namespace phantora::tools
