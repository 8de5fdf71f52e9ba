// Pinned kernel durations: a CSV the user supplies (`kernel,duration_us`) to fix the time of
// named kernels, overriding every model. `kernel` is a mangled name or the demangled name
// without return type and parameters (see kernel_name.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "phantora/units.hpp"

namespace phantora::kernels {

class KernelTimes {
 public:
  KernelTimes() = default;
  // Throws DataError naming file:line on a bad header, a missing field, a duration that is
  // negative or not a finite number, or a kernel listed twice.
  static KernelTimes from_csv(const std::filesystem::path& path);
  static KernelTimes from_csv_text(std::string_view text, std::string_view source);

  // The pinned duration of the kernel with this mangled (or plain extern "C") name.
  std::optional<SimTime> lookup(std::string_view mangled_name) const;

  size_t size() const { return by_name_.size(); }
  bool empty() const { return by_name_.empty(); }

 private:
  std::unordered_map<std::string, SimTime> by_name_;
};

}  // namespace phantora::kernels
