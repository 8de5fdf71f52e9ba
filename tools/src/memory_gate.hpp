// The memory gate beside the step-time one: did any GPU's peak memory grow past a limit over
// the baseline run's? `phantora run --baseline R --max-memory-growth P` and `phantora report A B
// --max-memory-growth P` exit 3 (kRegressionExit) when one did, naming it. Works on report.json
// documents (docs/report.md, key gpus[]).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report_compare.hpp"

namespace phantora::tools {

struct MemoryGate {
  std::vector<Change> gpus;   // peak memory of every GPU of either run, by global GPU index
  std::vector<Change> grown;  // those past the limit, the largest growth first
  bool regression() const { return !grown.empty(); }
};

// GPUs are matched by their global index (`gpu`); one that only the current run has counts as
// grown from nothing, past any limit. `limit` is a fraction (0.05: 5 %).
MemoryGate check_memory_growth(const nlohmann::json& base, const nlohmann::json& current,
                               double limit);

// One verdict line ("peak memory per GPU: +12.50% on GPU 1 (host 0, device 1) (limit +5.00%):
// REGRESSION"), then a line per GPU past the limit.
std::string format_memory_gate(const MemoryGate& gate, double limit);

}  // namespace phantora::tools
