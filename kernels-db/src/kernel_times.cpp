#include "phantora/kernels/kernel_times.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "csv.hpp"
#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/kernel_name.hpp"

namespace phantora::kernels {
namespace {

constexpr std::string_view kHeader = "kernel,duration_us";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

KernelTimes KernelTimes::from_csv_text(std::string_view text, std::string_view source) {
  KernelTimes times;
  std::unordered_map<std::string, size_t> line_of;  // for "duplicate of line N"
  size_t line_no = 0;
  bool seen_header = false;
  auto fail = [&](std::string_view what) -> DataError {
    return DataError(fmt::format("{}:{}: {}", source, line_no, what));
  };

  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;

    if (!seen_header) {
      if (line != kHeader) {
        throw fail(fmt::format("bad header '{}': expected exactly '{}'", line, kHeader));
      }
      seen_header = true;
      continue;
    }

    std::string error;
    const auto fields = detail::split_csv_line(line, error);
    if (!fields) throw fail(error);
    if (fields->size() != 2) {
      throw fail(fmt::format("expected 2 fields (kernel,duration_us), found {}", fields->size()));
    }
    const std::string kernel(trim((*fields)[0]));
    const std::string_view duration_text = trim((*fields)[1]);
    if (kernel.empty()) throw fail("missing kernel name");
    if (duration_text.empty()) throw fail(fmt::format("missing duration for '{}'", kernel));

    double us = 0;
    const char* end = duration_text.data() + duration_text.size();
    const auto [ptr, ec] = std::from_chars(duration_text.data(), end, us);
    if (ec != std::errc() || ptr != end) {
      throw fail(fmt::format("duration '{}' of '{}' is not a number", duration_text, kernel));
    }
    if (!std::isfinite(us)) {
      throw fail(fmt::format("duration of '{}' is not finite ({})", kernel, duration_text));
    }
    if (us < 0) throw fail(fmt::format("duration of '{}' is negative ({})", kernel, us));
    // One hour per kernel is far beyond any real kernel and far inside what SimTime holds.
    constexpr double kMaxUs = 3600e6;
    if (us > kMaxUs) {
      throw fail(fmt::format("duration of '{}' is {} us, more than an hour: not a kernel time",
                             kernel, us));
    }

    const auto [it, inserted] = line_of.emplace(kernel, line_no);
    if (!inserted) {
      throw fail(fmt::format("kernel '{}' is listed twice (first on line {})", kernel, it->second));
    }
    times.by_name_.emplace(kernel, SimTime::us(us));
  }
  if (!seen_header) {
    throw DataError(fmt::format("{}:1: empty file: expected the header '{}'", source, kHeader));
  }
  return times;
}

KernelTimes KernelTimes::from_csv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open kernel times file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return from_csv_text(text.str(), path.string());
}

std::optional<SimTime> KernelTimes::lookup(std::string_view mangled_name) const {
  if (by_name_.empty()) return std::nullopt;
  if (auto it = by_name_.find(std::string(mangled_name)); it != by_name_.end()) return it->second;
  if (auto it = by_name_.find(kernel_base_name(mangled_name)); it != by_name_.end()) {
    return it->second;
  }
  return std::nullopt;
}

}  // namespace phantora::kernels
