// The trace's span of each completed operation: kernels under their names, other operations
// under their kind. Collectives write their own spans (with algorithm and bandwidth) and event
// waits have none.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "phantora/simcore/engine.hpp"
#include "phantora/simcore/trace_writer.hpp"

namespace phantora::sim {

class OpTrace {
 public:
  explicit OpTrace(TraceWriter* writer) : writer_(writer) {}

  // `kernels`: the client's kernel names by id (kernels are named from it once, then cached).
  void on_op(const CompletedOp& op, int gpu, const std::map<uint32_t, std::string>& kernels);

 private:
  TraceWriter* writer_;
  std::unordered_map<uint64_t, std::string> quoted_;  // kernel names as JSON strings
};

}  // namespace phantora::sim
