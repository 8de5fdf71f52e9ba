#include "prices_key.hpp"

#include <system_error>

#include <fmt/format.h>

#include "phantora/fnv1a.hpp"
#include "phantora/kernels/builtin_key.hpp"

namespace phantora::tools {
namespace {

// A file's identity for the key: where it is, how large, when last written (what the run reads
// is the file's content; these stand for it without reading a database of many megabytes).
std::string file_identity(const std::filesystem::path& p) {
  std::error_code path_ec, size_ec, time_ec;
  std::filesystem::path path = std::filesystem::weakly_canonical(p, path_ec);
  if (path_ec) path = p;
  const uintmax_t size = std::filesystem::file_size(p, size_ec);
  const auto written = std::filesystem::last_write_time(p, time_ec);
  return fmt::format("{}|{}|{}", path.string(), size_ec ? 0 : size,
                     time_ec ? 0 : written.time_since_epoch().count());
}

}  // namespace

std::string prices_key(const std::string& gpu_key,
                       const std::optional<std::filesystem::path>& kernel_db,
                       const std::optional<std::filesystem::path>& kernel_times) {
  uint64_t h = fnv1a(kernels::builtin_data_key());
  h = fnv1a("|db:" + (kernel_db ? file_identity(*kernel_db) : std::string("-")), h);
  h = fnv1a("|times:" + (kernel_times ? file_identity(*kernel_times) : std::string("-")), h);
  return fmt::format("{}-{:016x}", gpu_key, h);
}

}  // namespace phantora::tools
