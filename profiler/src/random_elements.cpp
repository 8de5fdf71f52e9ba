#include "phantora/profiler/random_elements.hpp"

#include <bit>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

namespace phantora::profiler {
namespace {

// bf16 is the upper half of an f32, rounded to nearest even (no NaN arises from finite draws).
uint16_t to_bf16(float x) {
  const auto bits = std::bit_cast<uint32_t>(x);
  const uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

template <typename T>
void put(std::vector<std::byte>& out, size_t i, T value) {
  std::memcpy(out.data() + i * sizeof(T), &value, sizeof(T));
}

}  // namespace

std::vector<std::byte> normal_elements(kernels::DType type, size_t count, uint64_t seed) {
  using kernels::DType;
  if (type == DType::kF8E4M3 || type == DType::kF8E5M2)
    throw std::invalid_argument("normal_elements: FP8 (" + std::string(kernels::to_string(type)) +
                                ") is not filled");
  std::vector<std::byte> out(count * kernels::dtype_bytes(type));
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (size_t i = 0; i < count; ++i) {
    switch (type) {
      case DType::kF16:
        put(out, i, static_cast<_Float16>(normal(engine)));
        break;
      case DType::kBF16:
        put(out, i, to_bf16(static_cast<float>(normal(engine))));
        break;
      case DType::kF32:
      case DType::kTF32:  // stored as f32
        put(out, i, static_cast<float>(normal(engine)));
        break;
      case DType::kF64:
        put(out, i, normal(engine));
        break;
      case DType::kI8:
        put(out, i, static_cast<int8_t>(engine() & 0xff));
        break;
      case DType::kI32:
        put(out, i, static_cast<int32_t>(engine() & 0xffffffffu));
        break;
      case DType::kF8E4M3:
      case DType::kF8E5M2:
        break;  // refused above
    }
  }
  return out;
}

}  // namespace phantora::profiler
