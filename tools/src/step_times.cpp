#include "step_times.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace phantora::tools {
namespace {

constexpr auto kFlags = std::regex::ECMAScript | std::regex::icase | std::regex::optimize;

const char* const kBuiltin[] = {
    R"(\bstep\s+\d+.*?\bstep time\s*[:=]?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(ms|s|us)\b)",
    R"(elapsed time per iteration \((ms)\)\s*:\s*([0-9][0-9,]*(?:\.[0-9]+)?))",
};

double parse_number(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  return std::stod(text);
}

double to_seconds(double value, const std::string& unit) {
  if (unit == "s" || unit == "S") return value;
  if (unit == "us" || unit == "US") return value * 1e-6;
  return value * 1e-3;  // ms, and no unit
}

}  // namespace

StepTimeScanner::StepTimeScanner(const std::string& pattern) {
  if (pattern.empty()) {
    for (const char* p : kBuiltin) patterns_.emplace_back(p, kFlags);
    description_ =
        "built-in (\"step N ... step time X ms\", Megatron's \"elapsed time per "
        "iteration (ms): X\")";
    return;
  }
  try {
    patterns_.emplace_back(pattern, kFlags);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--step-time-regex '" + pattern +
                                "' is not a valid regex: " + e.what());
  }
  if (patterns_.front().mark_count() < 1) {
    throw std::invalid_argument("--step-time-regex '" + pattern +
                                "' needs a capture group around the number");
  }
  description_ = pattern;
}

std::optional<double> StepTimeScanner::scan(std::string_view line) const {
  for (size_t i = 0; i < patterns_.size(); ++i) {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(line.begin(), line.end(), m, patterns_[i])) continue;
    // The Megatron pattern names its unit before the number.
    const bool unit_first = patterns_.size() > 1 && i == 1;
    const std::string number = m[unit_first ? 2 : 1].str();
    const std::string unit = m.size() > 2 ? m[unit_first ? 1 : 2].str() : "";
    try {
      return to_seconds(parse_number(number), unit);
    } catch (const std::exception&) {
      continue;  // the group matched something that is not a number
    }
  }
  return std::nullopt;
}

std::optional<StepStats> summarize_steps(const std::vector<double>& times_s) {
  if (times_s.empty()) return std::nullopt;
  StepStats s;
  s.times_s = times_s;
  s.skipped_first = times_s.size() > 1;
  std::vector<double> kept(times_s.begin() + (s.skipped_first ? 1 : 0), times_s.end());
  s.mean_s = std::accumulate(kept.begin(), kept.end(), 0.0) / static_cast<double>(kept.size());
  std::sort(kept.begin(), kept.end());
  const size_t n = kept.size();
  s.median_s = n % 2 == 1 ? kept[n / 2] : (kept[n / 2 - 1] + kept[n / 2]) / 2;
  return s;
}

}  // namespace phantora::tools
