// report.json (schema in docs/report.md) and the summary table printed at the end of a run.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "phantora/simcore/run_stats.hpp"
#include "phantora/simcore/simulation.hpp"

namespace phantora::sim {

inline constexpr const char* kReportSchema = "phantora.report/1";

struct RunOutcome {
  std::string status = "ok";  // "ok", "failed", "interrupted"
  int exit_code = 0;
  std::string message;  // why it failed, if it did
  double wall_seconds = 0;
  std::vector<std::string> command;
  // Who started the ranks: "local", "slurm", or "serve" (a daemon the ranks came to by
  // themselves, as in Kubernetes).
  std::string launcher = "local";
  // The step times the job printed (report key `steps`, docs/report.md); null when none.
  nlohmann::json steps;
  // The phantora process's own CPU time and peak resident memory (daemon and launcher).
  double simulator_cpu_seconds = 0;
  double simulator_max_rss_bytes = 0;
};

nlohmann::json make_report(const SimulationConfig& config, const RunStats& stats,
                           const RunOutcome& outcome);

// The human summary: ranks, simulated time, wall time, slowdown, peak memory per GPU, share of
// GPU time by cost source, top kernels.
std::string summary_table(const nlohmann::json& report);

// Writes to a temporary file in the same directory and renames it into place.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace phantora::sim
