// The run's statistics, kept as operations complete: op counts, the simulated end, each GPU's
// busy time and its compute and communication intervals (for exposed communication and for the
// overlap of its streams' kernels), GPU time by cost source, and per-kernel totals, merged by
// kernel name at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "phantora/simcore/engine.hpp"
#include "phantora/simcore/interval_union.hpp"
#include "phantora/simcore/run_stats.hpp"

namespace phantora::sim {

class RunAccounting {
 public:
  explicit RunAccounting(size_t gpus);

  RunStats& stats() { return stats_; }
  const RunStats& stats() const { return stats_; }

  // `gpu` is the operation's global GPU index.
  void on_op(const CompletedOp& op, int gpu);

  // Fills the per-kernel totals (each named by `kernel_name(client, label)`) and each GPU's
  // communication, exposed communication and overlap of its streams.
  void finish(const std::function<const std::string&(ClientId, uint32_t)>& kernel_name);

 private:
  struct KernelTally {
    uint64_t count = 0;
    SimTime total;
    std::optional<CostSource> source;
  };
  static uint64_t key(ClientId client, uint32_t label) {
    return (static_cast<uint64_t>(client) << 32) | label;
  }

  RunStats stats_;
  std::vector<IntervalUnion> comm_time_;
  std::vector<IntervalUnion> compute_time_;
  // The same operations' durations summed: the operations of one stream never overlap, so this
  // is the sum of each stream's busy time, more than the union when streams overlap.
  std::vector<SimTime> compute_sum_;
  std::unordered_map<uint64_t, KernelTally> kernels_;  // by key(client, label)
};

}  // namespace phantora::sim
