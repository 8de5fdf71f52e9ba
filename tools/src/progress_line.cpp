#include "progress_line.hpp"

#include <cmath>

#include <fmt/format.h>

namespace phantora::tools {

std::string clock_text(double seconds) {
  const long s = seconds > 0 ? static_cast<long>(std::floor(seconds)) : 0;
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string duration_text(double seconds) {
  if (seconds >= 1) return fmt::format("{:.3f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
  if (seconds >= 1e-6) return fmt::format("{:.3f} us", seconds * 1e6);
  return fmt::format("{:.0f} ns", seconds * 1e9);
}

std::string format_progress(const ProgressFigures& f) {
  std::string out =
      "phantora: sim " + duration_text(f.simulated_s) + " | steps " + std::to_string(f.steps);
  if (f.expect_steps) out += "/" + std::to_string(*f.expect_steps);
  if (f.last_step_s) out += " (last " + duration_text(*f.last_step_s) + ")";
  out += " | ranks " + std::to_string(f.ranks_alive);
  if (f.world_size > 0) out += "/" + std::to_string(f.world_size);
  out += " | wall " + clock_text(f.wall_s);
  if (f.remaining_s) out += " | ETA " + clock_text(*f.remaining_s);
  return out;
}

std::optional<double> estimate_remaining(const std::vector<double>& seen_at_s, int expect_steps) {
  const int seen = static_cast<int>(seen_at_s.size());
  if (seen < 2 || seen >= expect_steps) return std::nullopt;
  const double per_step = (seen_at_s.back() - seen_at_s.front()) / (seen - 1);
  return per_step * (expect_steps - seen);
}

}  // namespace phantora::tools
