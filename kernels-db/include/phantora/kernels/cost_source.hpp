// Where a duration came from: the one vocabulary for it. The cost model tags every answer with
// it, and the daemon's statistics, trace and report count GPU time by it.
#pragma once

#include <cstdint>
#include <string_view>

namespace phantora::kernels {

enum class CostSource : uint8_t {
  kPinned = 0,    // the user's CSV of kernel times
  kMeasured = 1,  // the kernel database (measured on a real GPU)
  kModelled = 2,  // an analytical model (GEMM roofline, known kernel families)
  kDefault = 3,   // the last-resort default by grid size
};
// pinned, measured, modelled, default: the names report.json and trace.json use.
std::string_view to_string(CostSource source);

}  // namespace phantora::kernels
