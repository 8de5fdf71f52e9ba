#include "memory_gate.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace phantora::tools {
namespace {

struct Peak {
  int host = -1, device = -1;
  double bytes = 0;
};

std::map<int, Peak> peaks(const nlohmann::json& report) {
  std::map<int, Peak> out;
  if (!report.contains("gpus") || !report["gpus"].is_array()) return out;
  for (const auto& g : report["gpus"]) {
    out[g.value("gpu", -1)] = {g.value("host", -1), g.value("device", -1),
                               g.value("peak_memory_bytes", 0.0)};
  }
  return out;
}

std::string bytes_text(double bytes) {
  if (bytes >= 1 << 30) return fmt::format("{:.3f} GiB", bytes / (1 << 30));
  return fmt::format("{:.3f} MiB", bytes / (1 << 20));
}

// Growth as a fraction; from nothing to something is infinite (past any limit).
double growth(const Change& c) {
  if (c.base == 0) return c.current > 0 ? INFINITY : 0;
  return c.relative();
}

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:+.2f}%", 100 * fraction) : "new";
}

}  // namespace

MemoryGate check_memory_growth(const nlohmann::json& base, const nlohmann::json& current,
                               double limit) {
  const std::map<int, Peak> b = peaks(base), c = peaks(current);
  std::map<int, Change> by_gpu;
  for (const auto& [side, is_base] : {std::pair{&b, true}, std::pair{&c, false}}) {
    for (const auto& [gpu, peak] : *side) {
      const std::string name =
          fmt::format("GPU {} (host {}, device {})", gpu, peak.host, peak.device);
      Change& ch = by_gpu.try_emplace(gpu, Change{name, 0, 0, std::string("B")}).first->second;
      (is_base ? ch.base : ch.current) = peak.bytes;
    }
  }
  MemoryGate gate;
  for (auto& [gpu, ch] : by_gpu) {
    gate.gpus.push_back(ch);
    if (growth(ch) > limit) gate.grown.push_back(ch);
  }
  std::stable_sort(gate.grown.begin(), gate.grown.end(),
                   [](const Change& x, const Change& y) { return growth(x) > growth(y); });
  return gate;
}

std::string format_memory_gate(const MemoryGate& gate, double limit) {
  // The headline is the GPU that grew most, whether or not it passed.
  const Change* most = nullptr;
  for (const Change& ch : gate.gpus) {
    if (most == nullptr || growth(ch) > growth(*most)) most = &ch;
  }
  if (most == nullptr) return fmt::format("peak memory per GPU: no GPUs in either report: ok\n");
  std::string out =
      fmt::format("peak memory per GPU: {} on {} (limit +{:.2f}%){}\n", percent(growth(*most)),
                  most->name, 100 * limit, gate.regression() ? ": REGRESSION" : ": ok");
  for (const Change& ch : gate.grown) {
    out += fmt::format("  {}: {} -> {} ({})\n", ch.name, bytes_text(ch.base),
                       bytes_text(ch.current), percent(growth(ch)));
  }
  return out;
}

}  // namespace phantora::tools
