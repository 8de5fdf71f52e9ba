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

// A count held in launch parameter `at` (`args` as cudaLaunchKernel hands them: one pointer per
// parameter), an integer of `bytes` (4 or 8) bytes. A negative value or one beyond any tensor a
// GPU holds (2^40 items) is not what the kernel's name promised: it clears `ok` (and reads as
// 0 when negative).
inline uint64_t read_count(void* const* args, int at, int bytes, bool& ok) {
  const auto* p = static_cast<const uint8_t*>(args[at]);
  const int64_t v = bytes == 8 ? load<int64_t>(p, 0) : load<int32_t>(p, 0);
  if (v < 0 || v > (int64_t{1} << 40)) ok = false;
  return v < 0 ? 0 : static_cast<uint64_t>(v);
}

// `v` rounded up to a multiple of `a`: where the next field of alignment `a` starts.
constexpr size_t align_up(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace phantora::shim
