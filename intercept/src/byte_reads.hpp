// Reading fields out of a kernel's parameter bytes (the structs PyTorch passes by value), at
// offsets the decoders compute from the struct layouts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace phantora::shim {

// A T at `base + offset`, whatever its alignment there.
template <typename T>
T load(const uint8_t* base, size_t offset) {
  T v;
  std::memcpy(&v, base + offset, sizeof(T));
  return v;
}

// `v` rounded up to a multiple of `a`: where the next field of alignment `a` starts.
constexpr size_t align_up(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace phantora::shim
