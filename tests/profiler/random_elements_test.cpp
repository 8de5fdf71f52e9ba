// The random operands of replayed GEMMs (profiler/include/phantora/profiler/random_elements.hpp):
// standard normal values in each floating type, as torch.randn makes them, never zeros.
#include "phantora/profiler/random_elements.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

namespace phantora::profiler {
namespace {

using kernels::DType;

// Element i of `bytes` as a double.
double value_at(const std::vector<std::byte>& bytes, DType type, size_t i) {
  switch (type) {
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      const uint32_t bits = uint32_t{h} << 16;  // bf16 is the upper half of an f32
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::kF16: {
      _Float16 h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      return static_cast<double>(h);
    }
    case DType::kF32:
    case DType::kTF32: {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    case DType::kF64: {
      double d;
      std::memcpy(&d, bytes.data() + 8 * i, 8);
      return d;
    }
    default:
      throw std::logic_error("not a floating type");
  }
}

TEST(RandomElements, FloatingTypesAreStandardNormal) {
  constexpr size_t n = 200'000;
  for (DType type : {DType::kBF16, DType::kF16, DType::kF32, DType::kTF32, DType::kF64}) {
    SCOPED_TRACE(std::string(kernels::to_string(type)));
    const std::vector<std::byte> bytes = normal_elements(type, n, 7);
    ASSERT_EQ(bytes.size(), n * kernels::dtype_bytes(type));
    double sum = 0, sum_sq = 0;
    size_t beyond_two = 0, zeros = 0;
    for (size_t i = 0; i < n; ++i) {
      const double x = value_at(bytes, type, i);
      ASSERT_TRUE(std::isfinite(x));
      sum += x;
      sum_sq += x * x;
      beyond_two += std::abs(x) > 2 ? 1 : 0;
      zeros += x == 0 ? 1 : 0;
    }
    const double mean = sum / n;
    // Mean 0 and variance 1 within ~5 standard errors (1/sqrt(n) = 0.0022; variance's 0.0032).
    EXPECT_NEAR(mean, 0.0, 0.011);
    EXPECT_NEAR(sum_sq / n - mean * mean, 1.0, 0.016);
    // P(|x| > 2) = 4.55 % for a standard normal: the shape, not only two moments.
    EXPECT_NEAR(static_cast<double>(beyond_two) / n, 0.0455, 0.003);
    EXPECT_LT(zeros, 5u);
  }
}

TEST(RandomElements, IntegersCoverTheirRange) {
  const std::vector<std::byte> bytes = normal_elements(DType::kI8, 100'000, 3);
  std::set<int8_t> seen;
  for (std::byte b : bytes) seen.insert(static_cast<int8_t>(b));
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(normal_elements(DType::kI32, 10, 3).size(), 40u);
}

TEST(RandomElements, FixedBySeedAndDistinctAcrossSeeds) {
  EXPECT_EQ(normal_elements(DType::kBF16, 1000, 1), normal_elements(DType::kBF16, 1000, 1));
  EXPECT_NE(normal_elements(DType::kBF16, 1000, 1), normal_elements(DType::kBF16, 1000, 2));
}

TEST(RandomElements, Fp8IsRefusedByName) {
  try {
    normal_elements(DType::kF8E4M3, 4, 1);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("f8e4m3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace phantora::profiler
