// Launches a simulated run recorded for measuring (PHANTORA_RECORD_LAUNCHES; the shim's
// launch_recorder.hpp writes them, docs/kernels-db.md "Measuring" gives the format): enough to
// launch the same kernel with the same arguments on a real GPU, its device pointers moved to
// scratch buffers.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "phantora/protocol.hpp"

namespace phantora::profiler {

// An 8-byte word of a parameter that held a device address: allocation `allocation` of the
// record, `at` bytes into it.
struct RecordedPointer {
  size_t param = 0;
  size_t offset = 0;  // within the parameter
  size_t allocation = 0;
  uint64_t at = 0;
};

struct RecordedParam {
  std::string bytes;   // what was read: the parameter, or a window that starts with it
  bool exact = false;  // the size is the cubin's; else a window, trimmed at replay
};

struct LaunchRecord {
  std::string kernel;           // mangled (or extern "C") name
  std::filesystem::path image;  // the saved image its code is in; empty when unknown
  std::array<uint32_t, 3> grid{}, block{};
  uint64_t shared_mem = 0;
  wire::KernelWork work{};  // what the shim decoded from the launch
  std::vector<RecordedParam> params;
  std::vector<RecordedPointer> pointers;
  std::vector<uint64_t> allocations;  // sizes of the allocations the pointers are into
};

// Every complete record under `dir` (launches-*.txt; a record cut short by a crash is skipped).
// Throws kernels::DataError naming file and line for anything else malformed.
std::vector<LaunchRecord> read_launch_records(const std::filesystem::path& dir);

// The signature a run without a measured row charges the launch under, and lists as missing:
// its attention shape, else its memory-bound work, else its kernel name and configuration
// (kernels::CostModel::cost_of_kernel).
std::string modelled_signature(const LaunchRecord& r);

// The first record of each modelled signature: which launch stands for a signature at replay.
std::map<std::string, const LaunchRecord*> launches_by_signature(
    const std::vector<LaunchRecord>& records);

}  // namespace phantora::profiler
