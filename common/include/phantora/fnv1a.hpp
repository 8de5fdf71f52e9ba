// FNV-1a, 64 bits: a short, stable name for some bytes (the same bytes give the same name in
// every process and every build), for files and cache keys, not for security.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace phantora {

inline constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;

// The hash of `n` bytes at `data`, continuing from `h` (kFnv1aOffset to start). (Not an
// overload of fnv1a: fnv1a("text", h) would take h for n.)
inline uint64_t fnv1a_bytes(const void* data, size_t n, uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

inline uint64_t fnv1a(std::string_view s, uint64_t h = kFnv1aOffset) {
  return fnv1a_bytes(s.data(), s.size(), h);
}

}  // namespace phantora
