#include "report_compare.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace phantora::tools {
namespace {

double number_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return 0;
    at = &(*at)[key];
  }
  return at->is_number() ? at->get<double>() : 0;
}

double peak_memory(const nlohmann::json& r) {
  double peak = 0;
  if (r.contains("gpus") && r["gpus"].is_array()) {
    for (const auto& g : r["gpus"]) peak = std::max(peak, number_at(g, {"peak_memory_bytes"}));
  }
  return peak;
}

std::string format_value(double v, const std::string& unit) {
  if (unit == "s") {
    if (v >= 1) return fmt::format("{:.3f} s", v);
    if (v >= 1e-3) return fmt::format("{:.3f} ms", v * 1e3);
    return fmt::format("{:.3f} us", v * 1e6);
  }
  if (unit == "B") {
    if (v >= 1 << 30) return fmt::format("{:.2f} GiB", v / (1 << 30));
    if (v >= 1 << 20) return fmt::format("{:.2f} MiB", v / (1 << 20));
    return fmt::format("{:.0f} B", v);
  }
  return fmt::format("{:.0f}", v);
}

std::string format_change(const Change& c) {
  if (c.base == 0 && c.current == 0) return "";
  if (c.base == 0) return "new";
  if (c.current == 0) return "gone";
  return fmt::format("{:+.1f}%", 100 * c.relative());
}

std::string shorten(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

}  // namespace

nlohmann::json load_report(const std::filesystem::path& path) {
  const std::filesystem::path file =
      std::filesystem::is_directory(path) ? path / "report.json" : path;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", file.string()));
  nlohmann::json r;
  try {
    r = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{} is not valid JSON: {}", file.string(), e.what()));
  }
  if (!r.is_object() || r.value("schema", "") != "phantora.report/1") {
    throw std::runtime_error(fmt::format(
        "{} is not a phantora report (schema phantora.report/1 expected)", file.string()));
  }
  return r;
}

ReportComparison compare_reports(const nlohmann::json& base, const nlohmann::json& current) {
  ReportComparison c;
  const double base_step = number_at(base, {"steps", "median_s"});
  const double cur_step = number_at(current, {"steps", "median_s"});
  if (base_step > 0 && cur_step > 0) {
    c.headline = {"step time (median)", base_step, cur_step, "s"};
  } else {
    c.headline = {"simulated time", number_at(base, {"simulated_time_s"}),
                  number_at(current, {"simulated_time_s"}), "s"};
  }
  c.totals = {
      {"simulated time", number_at(base, {"simulated_time_s"}),
       number_at(current, {"simulated_time_s"}), "s"},
      {"GPU time (all GPUs)", number_at(base, {"gpu_time", "total_s"}),
       number_at(current, {"gpu_time", "total_s"}), "s"},
      {"communication", number_at(base, {"communication", "time_s"}),
       number_at(current, {"communication", "time_s"}), "s"},
      {"exposed communication", number_at(base, {"communication", "exposed_time_s"}),
       number_at(current, {"communication", "exposed_time_s"}), "s"},
      {"peak memory (largest GPU)", peak_memory(base), peak_memory(current), "B"},
  };

  std::map<std::string, Change> kernels;
  auto add_kernels = [&kernels](const nlohmann::json& r, bool is_base) {
    if (!r.contains("top_kernels")) return;
    for (const auto& k : r["top_kernels"]) {
      const std::string key = k.value("mangled", k.value("kernel", ""));
      Change& ch = kernels[key];
      ch.name = k.value("kernel", key);
      ch.unit = "s";
      (is_base ? ch.base : ch.current) = k.value("total_s", 0.0);
    }
  };
  add_kernels(base, true);
  add_kernels(current, false);
  for (auto& [key, ch] : kernels) c.kernels.push_back(ch);
  std::sort(c.kernels.begin(), c.kernels.end(), [](const Change& a, const Change& b) {
    return std::fabs(a.current - a.base) > std::fabs(b.current - b.base);
  });

  std::map<std::string, Change> ops;
  auto add_ops = [&ops](const nlohmann::json& r, bool is_base) {
    if (!r.contains("communication") || !r["communication"].contains("operations")) return;
    for (const auto& [name, op] : r["communication"]["operations"].items()) {
      Change& ch = ops[name];
      ch.name = name;
      ch.unit = "B";
      (is_base ? ch.base : ch.current) = op.value("bytes", 0.0);
    }
  };
  add_ops(base, true);
  add_ops(current, false);
  for (auto& [name, ch] : ops) c.collectives.push_back(ch);
  std::sort(c.collectives.begin(), c.collectives.end(), [](const Change& a, const Change& b) {
    return std::fabs(a.current - a.base) > std::fabs(b.current - b.base);
  });
  return c;
}

std::string format_comparison(const ReportComparison& c, std::string_view base_name,
                              std::string_view current_name, size_t top) {
  std::string out;
  auto row = [&out](const Change& ch, size_t width) {
    out += fmt::format("  {:<{}} {:>14} {:>14} {:>9}\n", shorten(ch.name, width), width,
                       format_value(ch.base, ch.unit), format_value(ch.current, ch.unit),
                       format_change(ch));
  };
  out += fmt::format("  {:<40} {:>14} {:>14} {:>9}\n", "", shorten(std::string(base_name), 14),
                     shorten(std::string(current_name), 14), "change");
  row(c.headline, 40);
  for (const Change& ch : c.totals) {
    if (ch.name != c.headline.name) row(ch, 40);
  }
  auto section = [&](const char* title, const std::vector<Change>& changes) {
    size_t shown = 0;
    for (const Change& ch : changes) {
      if (shown == top || ch.current == ch.base) break;
      if (shown++ == 0) out += fmt::format("  {}\n", title);
      row(ch, 40);
    }
  };
  section("kernels that changed most (total time, top kernels of either run):", c.kernels);
  section("collectives that changed (bytes):", c.collectives);
  return out;
}

double parse_percent(const std::string& text) {
  std::string t = text;
  t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
  if (!t.empty() && t.back() == '%') t.pop_back();
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v < 0) {
    throw std::invalid_argument(
        fmt::format("'{}' is not a percentage (write it as 2% or 2)", text));
  }
  return v / 100;
}

}  // namespace phantora::tools
