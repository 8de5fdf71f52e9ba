// A kernel's parameter sizes as its cubin states them: the ELF section `.nv.info.<kernel>`
// holds one EIATTR_KPARAM_INFO attribute per parameter (ordinal, offset in the parameter
// buffer, size). Triton's kernels are extern "C", so their names say nothing of their
// parameters, and they arrive as plain cubins (cuModuleLoadData): this is how their launches
// are recorded exactly. Fat binaries (possibly compressed) are not looked into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace phantora::shim {

// Sizes in bytes by ordinal; nullopt when `image` is not a 64-bit ELF file of `bytes` bytes
// with a complete parameter table for `kernel`.
std::optional<std::vector<uint32_t>> cubin_param_sizes(const void* image, size_t bytes,
                                                       std::string_view kernel);

}  // namespace phantora::shim
