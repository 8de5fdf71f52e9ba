// One row per sweep point, from its report.json: step time, throughput, scaling efficiency,
// peak memory, exposed communication; and the comparison table as CSV and Markdown.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sweep_plan.hpp"

namespace phantora::tools {

struct PointResult {
  SweepPoint point;
  std::string status = "failed";  // "ok" or "failed"
  std::string reason;             // why it failed
  double step_s = 0;              // median step time the job printed, else the simulated time
  bool step_from_log = false;
  double simulated_s = 0;
  double items_per_step = 1;
  double throughput = 0;  // items per second
  double throughput_per_gpu = 0;
  double efficiency = 0;  // throughput per GPU relative to the reference point
  double peak_memory_bytes = 0;
  double exposed_comm_share = 0;  // exposed communication / (GPUs x simulated time)
  double wall_s = 0;
  std::string series;  // what the point shares with others on one curve (all but the size)
};

// Reads `dir`/report.json; a missing report or a failed run gives status "failed" with the
// reason (`exit_code` is phantora run's status).
PointResult read_point(const SweepPoint& p, const std::filesystem::path& dir, double items,
                       int exit_code, double wall_s);

// Scaling efficiency of every ok point: throughput per GPU over that of the smallest ok point
// (fewest GPUs, first in order) of the same series, or of all points where a series has one.
void compute_efficiency(std::vector<PointResult>& results);

void write_csv(const std::vector<PointResult>& results, const std::string& items_name,
               const std::filesystem::path& file);
std::string markdown_table(const std::vector<PointResult>& results, const std::string& items_name);

}  // namespace phantora::tools
