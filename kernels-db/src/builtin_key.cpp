#include "phantora/kernels/builtin_key.hpp"

#include <fmt/format.h>

#include "builtin_data.hpp"
#include "phantora/fnv1a.hpp"

namespace phantora::kernels {

std::string builtin_data_key() {
  uint64_t h = kFnv1aOffset;
  for (std::string_view text :
       {builtin::kGpusToml, builtin::kCostModelToml, builtin::kModelsToml}) {
    h = fnv1a(text, h);
    h = fnv1a(std::string_view("\0", 1), h);  // where one file ends and the next begins
  }
  return fmt::format("{:016x}", h);
}

}  // namespace phantora::kernels
