// Two runs side by side: what got slower and by how much. Used by `phantora run --baseline`
// (a CI gate on the simulated step time) and `phantora report A B`. Works on report.json
// documents (schema phantora.report/1, docs/report.md) only.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace phantora::tools {

struct Change {
  std::string name;
  double base = 0;
  double current = 0;
  std::string unit;  // "s", "B", "" (a count)
  double relative() const { return base != 0 ? current / base - 1 : (current != 0 ? 1 : 0); }
};

struct ReportComparison {
  // What a slowdown is measured on: the median step time both runs printed, or, where either
  // printed none, the simulated time of the whole run.
  Change headline;
  std::vector<Change> totals;       // simulated time, GPU time, communication, peak memory
  std::vector<Change> kernels;      // top kernels of either run, largest absolute change first
  std::vector<Change> collectives;  // per NCCL call kind: bytes
};

// Reads a report.json, or DIR/report.json for a run directory; throws std::runtime_error with
// the path and the reason for a missing or unreadable file or another schema.
nlohmann::json load_report(const std::filesystem::path& path);

ReportComparison compare_reports(const nlohmann::json& base, const nlohmann::json& current);

// A table for people: the headline, the totals, and the `top` largest kernel and collective
// changes.
std::string format_comparison(const ReportComparison& c, std::string_view base_name,
                              std::string_view current_name, size_t top = 8);

// "2%", "2", "0.5 %": a percentage; throws std::invalid_argument otherwise.
double parse_percent(const std::string& text);

}  // namespace phantora::tools
