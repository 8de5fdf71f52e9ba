// sim::collective_result and the narrow-float conversions: every collective kind on 1 to 4
// ranks, every NCCL data type under every built-in reduction, the rounding rules written down
// in payload.hpp, and the errors on inconsistent inputs. Expected values are worked out by hand
// next to each assertion; floating values are chosen exactly representable unless a test is
// about rounding.
#include "phantora/simcore/payload.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace phantora::sim {
namespace {

using wire::CollKind;
using wire::DataType;

template <typename T>
std::vector<std::byte> to_bytes(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> from_bytes(const std::vector<std::byte>& b) {
  EXPECT_EQ(b.size() % sizeof(T), 0u);
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Runs one operation on typed per-rank inputs; returns typed per-rank outputs (empty = not
// written).
template <typename T>
std::vector<std::vector<T>> run(CollKind kind, DataType dtype, int redop, uint64_t count, int root,
                                const std::vector<std::vector<T>>& per_rank) {
  std::vector<std::vector<std::byte>> storage;
  for (const auto& v : per_rank) storage.push_back(to_bytes(v));
  std::vector<std::span<const std::byte>> sends(storage.begin(), storage.end());
  auto out = collective_result(kind, dtype, redop, count, root, sends);
  EXPECT_EQ(out.size(), per_rank.size());
  std::vector<std::vector<T>> typed;
  for (const auto& b : out) typed.push_back(from_bytes<T>(b));
  return typed;
}

using I32s = std::vector<std::vector<int32_t>>;

// Reduces one element per rank, returning the single result element.
template <typename T>
T reduce1(DataType dtype, int redop, const std::vector<T>& values) {
  std::vector<std::vector<T>> per_rank;
  for (T v : values) per_rank.push_back({v});
  auto out = run<T>(CollKind::kAllReduce, dtype, redop, 1, 0, per_rank);
  for (size_t r = 1; r < out.size(); ++r) {
    EXPECT_EQ(to_bytes(out[r]), to_bytes(out[0])) << "rank " << r << " differs";
  }
  EXPECT_EQ(out[0].size(), 1u);
  return out[0].empty() ? T{} : out[0][0];
}

uint32_t bits_of(float f) {
  return std::bit_cast<uint32_t>(f);
}
float float_of(uint32_t b) {
  return std::bit_cast<float>(b);
}

// =============================================================================================
// Conversions

TEST(HalfConversion, KnownBitPatterns) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(3.0f), 0x4200);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);                  // max finite
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);     // min normal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);     // min subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1023.0f, -24)), 0x03FF);  // max subnormal
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::quiet_NaN()), 0x7FFF);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::quiet_NaN()), 0x7FFF);

  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(bits_of(half_to_float(0x8000)), 0x80000000u);
  EXPECT_EQ(half_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7C01)));
  EXPECT_TRUE(std::isnan(half_to_float(0xFFFF)));
}

TEST(HalfConversion, RoundsToNearestEven) {
  const float ulp1 = std::ldexp(1.0f, -10);               // ulp of half in [1, 2)
  EXPECT_EQ(float_to_half(1.0f + ulp1 / 2), 0x3C00);      // tie: to even (1.0)
  EXPECT_EQ(float_to_half(1.0f + 3 * ulp1 / 2), 0x3C02);  // tie between 0x3C01 and 0x3C02
  EXPECT_EQ(float_to_half(1.0f + ulp1 / 2 + std::ldexp(1.0f, -20)), 0x3C01);  // above the tie
  EXPECT_EQ(float_to_half(1.0f + ulp1 / 2 - std::ldexp(1.0f, -20)), 0x3C00);  // below the tie
  EXPECT_EQ(float_to_half(-(1.0f + 3 * ulp1 / 2)), 0xBC02);
  // Overflow: 65520 is the tie between 65504 and 65536 (odd mantissa 0x3FF) -> Inf.
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);
  EXPECT_EQ(float_to_half(-65520.0f), 0xFC00);
  EXPECT_EQ(float_to_half(1e6f), 0x7C00);
  // Subnormals: ties go to even, underflow keeps the sign.
  const float tiny = std::ldexp(1.0f, -25);  // half the min subnormal
  EXPECT_EQ(float_to_half(tiny), 0x0000);
  EXPECT_EQ(float_to_half(tiny * 1.5f), 0x0001);
  EXPECT_EQ(float_to_half(3 * tiny), 0x0002);  // tie between 1 and 2 ulps
  EXPECT_EQ(float_to_half(5 * tiny), 0x0002);  // tie between 2 and 3 ulps
  EXPECT_EQ(float_to_half(-1e-10f), 0x8000);
  // The largest subnormal rounding up into the smallest normal.
  EXPECT_EQ(float_to_half(std::ldexp(2047.0f, -25)), 0x0400);
}

TEST(HalfConversion, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = half_to_float(h);
    if (std::isnan(f)) {
      EXPECT_EQ(float_to_half(f), 0x7FFF) << std::hex << b;
    } else {
      EXPECT_EQ(float_to_half(f), h) << std::hex << b;
    }
  }
}

TEST(Bf16Conversion, KnownBitPatternsAndRounding) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-1.0f), 0xBF80);
  EXPECT_EQ(float_to_bf16(3.0f), 0x4040);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x7F7F), float_of(0x7F7F0000));  // max finite
  // Rounding: the dropped 16 bits decide, ties to even.
  EXPECT_EQ(float_to_bf16(float_of(0x3F808000)), 0x3F80);  // tie, even stays
  EXPECT_EQ(float_to_bf16(float_of(0x3F818000)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(float_to_bf16(float_of(0x3F808001)), 0x3F81);  // above the tie
  EXPECT_EQ(float_to_bf16(float_of(0x3F807FFF)), 0x3F80);  // below the tie
  // Overflow to Inf: FLT_MAX rounds past the largest bf16.
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(float_to_bf16(float_of(0x7F7F7FFF)), 0x7F7F);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7FFF);
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7FC0)));
  EXPECT_TRUE(std::isnan(bf16_to_float(0xFF81)));
  // Subnormals: float subnormal 0x00010000 is bf16 0x0001; 2^-149 rounds to zero.
  EXPECT_EQ(float_to_bf16(float_of(0x00010000)), 0x0001);
  EXPECT_EQ(float_to_bf16(float_of(0x00018000)), 0x0002);  // tie, odd rounds up
  EXPECT_EQ(float_to_bf16(float_of(0x00000001)), 0x0000);
  EXPECT_EQ(float_to_bf16(float_of(0x80000001)), 0x8000);
}

TEST(Bf16Conversion, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = bf16_to_float(h);
    // bf16 is float's upper half: widening is a shift.
    if (std::isnan(f)) {
      EXPECT_EQ(float_to_bf16(f), 0x7FFF) << std::hex << b;
    } else {
      EXPECT_EQ(bits_of(f), b << 16) << std::hex << b;
      EXPECT_EQ(float_to_bf16(f), h) << std::hex << b;
    }
  }
}

TEST(Fp8E4M3Conversion, KnownBitPatterns) {
  EXPECT_EQ(float_to_fp8_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_fp8_e4m3(-1.0f), 0xB8);
  EXPECT_EQ(float_to_fp8_e4m3(2.0f), 0x40);
  EXPECT_EQ(float_to_fp8_e4m3(3.0f), 0x44);
  EXPECT_EQ(float_to_fp8_e4m3(0.5f), 0x30);
  EXPECT_EQ(float_to_fp8_e4m3(448.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(-448.0f), 0xFE);
  EXPECT_EQ(float_to_fp8_e4m3(-0.0f), 0x80);
  EXPECT_EQ(fp8_e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x78), 256.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x08), std::ldexp(1.0f, -6));  // min normal
  EXPECT_EQ(fp8_e4m3_to_float(0x01), std::ldexp(1.0f, -9));  // min subnormal
  EXPECT_EQ(fp8_e4m3_to_float(0x07), std::ldexp(7.0f, -9));  // max subnormal
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0xFF)));
  // 0x78..0x7E are finite: E4M3 has no infinities.
  EXPECT_EQ(fp8_e4m3_to_float(0x7C), 384.0f);
}

TEST(Fp8E4M3Conversion, RoundingAndSaturation) {
  EXPECT_EQ(float_to_fp8_e4m3(1.0625f), 0x38);  // tie between 1 (even) and 1.125
  EXPECT_EQ(float_to_fp8_e4m3(1.1875f), 0x3A);  // tie between 1.125 (odd) and 1.25
  EXPECT_EQ(float_to_fp8_e4m3(1.07f), 0x39);
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(1.0f, -10)), 0x00);   // half the min subnormal
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(3.0f, -10)), 0x02);   // tie between 1 and 2 ulps
  EXPECT_EQ(float_to_fp8_e4m3(-std::ldexp(1.0f, -12)), 0x80);  // underflow keeps the sign
  // Max finite 448; 464 is the tie with the (non-existent) 480 and goes to even 448.
  EXPECT_EQ(float_to_fp8_e4m3(464.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(464.0f, false), 0x7E);
  // Beyond: satfinite clamps, nosat gives NaN (with the sign, as CUDA's host code does).
  EXPECT_EQ(float_to_fp8_e4m3(465.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(465.0f, false), 0x7F);
  EXPECT_EQ(float_to_fp8_e4m3(-1000.0f), 0xFE);
  EXPECT_EQ(float_to_fp8_e4m3(-1000.0f, false), 0xFF);
  EXPECT_EQ(float_to_fp8_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(float_to_fp8_e4m3(std::numeric_limits<float>::infinity(), false), 0x7F);
  EXPECT_EQ(float_to_fp8_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_fp8_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0x7F);
}

TEST(Fp8E4M3Conversion, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFF; ++b) {
    const auto v = static_cast<uint8_t>(b);
    const float f = fp8_e4m3_to_float(v);
    if (b == 0x7F || b == 0xFF) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_EQ(float_to_fp8_e4m3(f), 0x7F);
    } else {
      EXPECT_FALSE(std::isnan(f)) << std::hex << b;
      EXPECT_EQ(float_to_fp8_e4m3(f), v) << std::hex << b;
      EXPECT_EQ(float_to_fp8_e4m3(f, false), v) << std::hex << b;
      // Exact through half, which is how NCCL widens fp8.
      EXPECT_EQ(half_to_float(float_to_half(f)), f) << std::hex << b;
    }
  }
}

TEST(Fp8E5M2Conversion, KnownBitPatternsAndRounding) {
  EXPECT_EQ(float_to_fp8_e5m2(1.0f), 0x3C);
  EXPECT_EQ(float_to_fp8_e5m2(-1.0f), 0xBC);
  EXPECT_EQ(float_to_fp8_e5m2(2.0f), 0x40);
  EXPECT_EQ(float_to_fp8_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(fp8_e5m2_to_float(0x7B), 57344.0f);
  EXPECT_EQ(fp8_e5m2_to_float(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(fp8_e5m2_to_float(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp8_e5m2_to_float(0xFC), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(fp8_e5m2_to_float(0x7D)));
  EXPECT_TRUE(std::isnan(fp8_e5m2_to_float(0xFF)));
  EXPECT_EQ(float_to_fp8_e5m2(1.125f), 0x3C);  // tie between 1 (even) and 1.25
  EXPECT_EQ(float_to_fp8_e5m2(1.375f), 0x3E);  // tie between 1.25 (odd) and 1.5
  // 61440 is the tie between 57344 (odd) and 65536: Inf without saturation, max with it.
  EXPECT_EQ(float_to_fp8_e5m2(61439.0f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(61440.0f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(61440.0f, false), 0x7C);
  EXPECT_EQ(float_to_fp8_e5m2(-1e9f, false), 0xFC);
  EXPECT_EQ(float_to_fp8_e5m2(std::numeric_limits<float>::infinity()), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(-std::numeric_limits<float>::infinity()), 0xFB);
  EXPECT_EQ(float_to_fp8_e5m2(std::numeric_limits<float>::infinity(), false), 0x7C);
  EXPECT_EQ(float_to_fp8_e5m2(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_fp8_e5m2(std::ldexp(1.0f, -17)), 0x00);  // tie with zero
  EXPECT_EQ(float_to_fp8_e5m2(std::ldexp(3.0f, -17)), 0x02);
}

TEST(Fp8E5M2Conversion, EveryPatternRoundTripsAndIsHalfsUpperByte) {
  for (uint32_t b = 0; b <= 0xFF; ++b) {
    const auto v = static_cast<uint8_t>(b);
    const float f = fp8_e5m2_to_float(v);
    const float as_half = half_to_float(static_cast<uint16_t>(b << 8));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(as_half));
      EXPECT_EQ(float_to_fp8_e5m2(f), 0x7F);
    } else {
      EXPECT_EQ(f, as_half) << std::hex << b;
      EXPECT_EQ(std::signbit(f), std::signbit(as_half)) << std::hex << b;
      EXPECT_EQ(float_to_fp8_e5m2(f, false), v) << std::hex << b;
      if (!std::isinf(f)) {
        EXPECT_EQ(float_to_fp8_e5m2(f), v) << std::hex << b;
      }
    }
  }
}

// =============================================================================================
// Buffer sizes

TEST(PayloadSizes, PerKind) {
  // 3 f32 elements on 4 ranks: 12 bytes a block.
  struct Row {
    CollKind kind;
    uint64_t send, recv;
  };
  const Row rows[] = {
      {CollKind::kAllReduce, 12, 12},     {CollKind::kBroadcast, 12, 12},
      {CollKind::kReduce, 12, 12},        {CollKind::kAllGather, 12, 48},
      {CollKind::kReduceScatter, 48, 12}, {CollKind::kAllToAll, 48, 48},
      {CollKind::kGather, 12, 48},        {CollKind::kScatter, 48, 12},
      {CollKind::kSend, 12, 0},           {CollKind::kRecv, 0, 12},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(send_bytes(row.kind, DataType::kF32, 3, 4), row.send) << int(row.kind);
    EXPECT_EQ(recv_bytes(row.kind, DataType::kF32, 3, 4), row.recv) << int(row.kind);
  }
  EXPECT_EQ(send_bytes(CollKind::kAllGather, DataType::kBF16, 5, 2), 10u);
  EXPECT_EQ(recv_bytes(CollKind::kAllGather, DataType::kFP8E5M2, 5, 3), 15u);
  EXPECT_EQ(recv_bytes(CollKind::kAllToAll, DataType::kU64, 2, 3), 48u);
  EXPECT_EQ(send_bytes(CollKind::kAllReduce, DataType::kI8, 0, 8), 0u);
}

TEST(PayloadSizes, DataTypeBytes) {
  EXPECT_EQ(dtype_bytes(DataType::kI8), 1u);
  EXPECT_EQ(dtype_bytes(DataType::kU8), 1u);
  EXPECT_EQ(dtype_bytes(DataType::kFP8E4M3), 1u);
  EXPECT_EQ(dtype_bytes(DataType::kFP8E5M2), 1u);
  EXPECT_EQ(dtype_bytes(DataType::kF16), 2u);
  EXPECT_EQ(dtype_bytes(DataType::kBF16), 2u);
  EXPECT_EQ(dtype_bytes(DataType::kI32), 4u);
  EXPECT_EQ(dtype_bytes(DataType::kU32), 4u);
  EXPECT_EQ(dtype_bytes(DataType::kF32), 4u);
  EXPECT_EQ(dtype_bytes(DataType::kI64), 8u);
  EXPECT_EQ(dtype_bytes(DataType::kU64), 8u);
  EXPECT_EQ(dtype_bytes(DataType::kF64), 8u);
  EXPECT_THROW(dtype_bytes(DataType::kUnknown), PayloadError);
  EXPECT_THROW(dtype_bytes(DataType::kTF32), PayloadError);
}

TEST(PayloadSizes, BadArguments) {
  EXPECT_THROW(send_bytes(CollKind::kAllReduce, DataType::kTF32, 1, 2), PayloadError);
  EXPECT_THROW(send_bytes(CollKind::kAllReduce, DataType::kF32, 1, 0), PayloadError);
  EXPECT_THROW(recv_bytes(CollKind::kAllGather, DataType::kF32, 1, -1), PayloadError);
  EXPECT_THROW(send_bytes(static_cast<CollKind>(99), DataType::kF32, 1, 2), PayloadError);
  EXPECT_THROW(recv_bytes(CollKind::kAllGather, DataType::kF64, uint64_t{1} << 60, 2),
               PayloadError);
  EXPECT_THROW(send_bytes(CollKind::kAllReduce, DataType::kF64, uint64_t{1} << 62, 1),
               PayloadError);
}

TEST(PayloadSizes, WhichBuffersAreUsed) {
  EXPECT_TRUE(reads_sendbuff(CollKind::kBroadcast, 1, 1));
  EXPECT_FALSE(reads_sendbuff(CollKind::kBroadcast, 0, 1));
  EXPECT_TRUE(reads_sendbuff(CollKind::kScatter, 2, 2));
  EXPECT_FALSE(reads_sendbuff(CollKind::kScatter, 0, 2));
  EXPECT_TRUE(reads_sendbuff(CollKind::kReduce, 0, 2));
  EXPECT_TRUE(reads_sendbuff(CollKind::kGather, 0, 2));
  EXPECT_TRUE(reads_sendbuff(CollKind::kSend, 0, 0));
  EXPECT_FALSE(reads_sendbuff(CollKind::kRecv, 0, 0));
  EXPECT_TRUE(writes_recvbuff(CollKind::kReduce, 2, 2));
  EXPECT_FALSE(writes_recvbuff(CollKind::kReduce, 0, 2));
  EXPECT_TRUE(writes_recvbuff(CollKind::kGather, 1, 1));
  EXPECT_FALSE(writes_recvbuff(CollKind::kGather, 0, 1));
  EXPECT_TRUE(writes_recvbuff(CollKind::kBroadcast, 0, 1));
  EXPECT_TRUE(writes_recvbuff(CollKind::kScatter, 0, 1));
  EXPECT_FALSE(writes_recvbuff(CollKind::kSend, 0, 0));
  EXPECT_TRUE(writes_recvbuff(CollKind::kRecv, 0, 0));
  for (auto kind : {CollKind::kAllReduce, CollKind::kAllGather, CollKind::kReduceScatter,
                    CollKind::kAllToAll}) {
    EXPECT_TRUE(reads_sendbuff(kind, 3, 0));
    EXPECT_TRUE(writes_recvbuff(kind, 3, 0));
  }
}

// =============================================================================================
// Collective kinds, hand-computed on int32.

TEST(CollectiveKinds, AllReduce) {
  // 1 rank: a copy.
  EXPECT_EQ(run<int32_t>(CollKind::kAllReduce, DataType::kI32, kRedSum, 2, 0, {{5, -6}}),
            (I32s{{5, -6}}));
  EXPECT_EQ(run<int32_t>(CollKind::kAllReduce, DataType::kI32, kRedSum, 2, 0, {{1, 2}, {10, 20}}),
            (I32s{{11, 22}, {11, 22}}));
  EXPECT_EQ(run<int32_t>(CollKind::kAllReduce, DataType::kI32, kRedSum, 2, 0,
                         {{1, 2}, {10, 20}, {100, 200}}),
            (I32s{{111, 222}, {111, 222}, {111, 222}}));
  EXPECT_EQ(run<int32_t>(CollKind::kAllReduce, DataType::kI32, kRedMax, 3, 0,
                         {{1, 9, -5}, {4, 2, -7}, {3, 3, -1}, {-8, 8, -2}}),
            (I32s{{4, 9, -1}, {4, 9, -1}, {4, 9, -1}, {4, 9, -1}}));
  // Zero elements: every rank's recvbuff receives nothing.
  EXPECT_EQ(run<int32_t>(CollKind::kAllReduce, DataType::kI32, kRedSum, 0, 0, {{}, {}}),
            (I32s{{}, {}}));
}

TEST(CollectiveKinds, Broadcast) {
  EXPECT_EQ(run<int32_t>(CollKind::kBroadcast, DataType::kI32, 0, 2, 0, {{7, 8}}), (I32s{{7, 8}}));
  // Non-root send buffers are not read: pass them empty.
  EXPECT_EQ(run<int32_t>(CollKind::kBroadcast, DataType::kI32, 0, 2, 1, {{}, {7, 8}}),
            (I32s{{7, 8}, {7, 8}}));
  EXPECT_EQ(run<int32_t>(CollKind::kBroadcast, DataType::kI32, 0, 1, 2, {{}, {}, {42}}),
            (I32s{{42}, {42}, {42}}));
  // ... or full-sized: still ignored.
  EXPECT_EQ(run<int32_t>(CollKind::kBroadcast, DataType::kI32, 0, 1, 0, {{3}, {4}, {5}, {6}}),
            (I32s{{3}, {3}, {3}, {3}}));
}

TEST(CollectiveKinds, Reduce) {
  EXPECT_EQ(run<int32_t>(CollKind::kReduce, DataType::kI32, kRedSum, 1, 0, {{9}}), (I32s{{9}}));
  EXPECT_EQ(run<int32_t>(CollKind::kReduce, DataType::kI32, kRedSum, 2, 0, {{1, 2}, {3, 4}}),
            (I32s{{4, 6}, {}}));
  EXPECT_EQ(
      run<int32_t>(CollKind::kReduce, DataType::kI32, kRedMin, 2, 2, {{5, -1}, {3, 0}, {4, -2}}),
      (I32s{{}, {}, {3, -2}}));
  EXPECT_EQ(run<int32_t>(CollKind::kReduce, DataType::kI32, kRedProd, 1, 1, {{2}, {3}, {4}, {5}}),
            (I32s{{}, {120}, {}, {}}));
}

TEST(CollectiveKinds, AllGather) {
  EXPECT_EQ(run<int32_t>(CollKind::kAllGather, DataType::kI32, 0, 2, 0, {{1, 2}}), (I32s{{1, 2}}));
  EXPECT_EQ(run<int32_t>(CollKind::kAllGather, DataType::kI32, 0, 1, 0, {{1}, {2}}),
            (I32s{{1, 2}, {1, 2}}));
  EXPECT_EQ(
      run<int32_t>(CollKind::kAllGather, DataType::kI32, 0, 2, 0, {{1, 2}, {10, 20}, {100, 200}}),
      (I32s{{1, 2, 10, 20, 100, 200}, {1, 2, 10, 20, 100, 200}, {1, 2, 10, 20, 100, 200}}));
  const std::vector<int32_t> all4{0, 1, 2, 3};
  EXPECT_EQ(run<int32_t>(CollKind::kAllGather, DataType::kI32, 0, 1, 0, {{0}, {1}, {2}, {3}}),
            (I32s{all4, all4, all4, all4}));
}

TEST(CollectiveKinds, ReduceScatter) {
  EXPECT_EQ(run<int32_t>(CollKind::kReduceScatter, DataType::kI32, kRedSum, 2, 0, {{1, 2}}),
            (I32s{{1, 2}}));
  // 2 ranks, recvcount 1: sum {1,2}+{10,20} = {11,22}; rank 0 gets 11, rank 1 gets 22.
  EXPECT_EQ(
      run<int32_t>(CollKind::kReduceScatter, DataType::kI32, kRedSum, 1, 0, {{1, 2}, {10, 20}}),
      (I32s{{11}, {22}}));
  // 3 ranks, recvcount 2: sum = {111, 222, 333, 444, 555, 666}.
  EXPECT_EQ(
      run<int32_t>(CollKind::kReduceScatter, DataType::kI32, kRedSum, 2, 0,
                   {{1, 2, 3, 4, 5, 6}, {10, 20, 30, 40, 50, 60}, {100, 200, 300, 400, 500, 600}}),
      (I32s{{111, 222}, {333, 444}, {555, 666}}));
  // 4 ranks, max.
  EXPECT_EQ(run<int32_t>(CollKind::kReduceScatter, DataType::kI32, kRedMax, 1, 0,
                         {{1, 0, 0, 9}, {0, 2, 0, 0}, {0, 0, 3, 0}, {-1, -1, -1, 4}}),
            (I32s{{1}, {2}, {3}, {9}}));
}

TEST(CollectiveKinds, AllToAll) {
  EXPECT_EQ(run<int32_t>(CollKind::kAllToAll, DataType::kI32, 0, 2, 0, {{1, 2}}), (I32s{{1, 2}}));
  // Rank r's block p goes to rank p's block r.
  EXPECT_EQ(run<int32_t>(CollKind::kAllToAll, DataType::kI32, 0, 1, 0, {{0, 1}, {10, 11}}),
            (I32s{{0, 10}, {1, 11}}));
  EXPECT_EQ(run<int32_t>(CollKind::kAllToAll, DataType::kI32, 0, 1, 0,
                         {{0, 1, 2}, {10, 11, 12}, {20, 21, 22}}),
            (I32s{{0, 10, 20}, {1, 11, 21}, {2, 12, 22}}));
  // 4 ranks, 2 elements per peer: rank r sends {10r + 2p, 10r + 2p + 1} to p.
  I32s sends(4), expected(4);
  for (int r = 0; r < 4; ++r) {
    for (int p = 0; p < 4; ++p) {
      sends[r].push_back(10 * r + 2 * p);
      sends[r].push_back(10 * r + 2 * p + 1);
    }
  }
  expected[0] = {0, 1, 10, 11, 20, 21, 30, 31};
  expected[1] = {2, 3, 12, 13, 22, 23, 32, 33};
  expected[2] = {4, 5, 14, 15, 24, 25, 34, 35};
  expected[3] = {6, 7, 16, 17, 26, 27, 36, 37};
  EXPECT_EQ(run<int32_t>(CollKind::kAllToAll, DataType::kI32, 0, 2, 0, sends), expected);
}

TEST(CollectiveKinds, Gather) {
  EXPECT_EQ(run<int32_t>(CollKind::kGather, DataType::kI32, 0, 1, 0, {{4}}), (I32s{{4}}));
  EXPECT_EQ(run<int32_t>(CollKind::kGather, DataType::kI32, 0, 2, 1, {{1, 2}, {3, 4}}),
            (I32s{{}, {1, 2, 3, 4}}));
  EXPECT_EQ(run<int32_t>(CollKind::kGather, DataType::kI32, 0, 1, 0, {{7}, {8}, {9}}),
            (I32s{{7, 8, 9}, {}, {}}));
  EXPECT_EQ(run<int32_t>(CollKind::kGather, DataType::kI32, 0, 1, 3, {{7}, {8}, {9}, {10}}),
            (I32s{{}, {}, {}, {7, 8, 9, 10}}));
}

TEST(CollectiveKinds, Scatter) {
  EXPECT_EQ(run<int32_t>(CollKind::kScatter, DataType::kI32, 0, 2, 0, {{4, 5}}), (I32s{{4, 5}}));
  EXPECT_EQ(run<int32_t>(CollKind::kScatter, DataType::kI32, 0, 1, 1, {{}, {5, 6}}),
            (I32s{{5}, {6}}));
  EXPECT_EQ(run<int32_t>(CollKind::kScatter, DataType::kI32, 0, 2, 2, {{}, {}, {1, 2, 3, 4, 5, 6}}),
            (I32s{{1, 2}, {3, 4}, {5, 6}}));
  EXPECT_EQ(run<int32_t>(CollKind::kScatter, DataType::kI32, 0, 1, 0, {{9, 8, 7, 6}, {}, {}, {}}),
            (I32s{{9}, {8}, {7}, {6}}));
}

TEST(CollectiveKinds, SendRecv) {
  // [0] sender, [1] receiver; the receiver's entry is ignored; either kind means the same.
  EXPECT_EQ(run<int32_t>(CollKind::kSend, DataType::kI32, 0, 3, 0, {{1, 2, 3}, {}}),
            (I32s{{}, {1, 2, 3}}));
  EXPECT_EQ(run<int32_t>(CollKind::kRecv, DataType::kI32, 0, 3, 5, {{1, 2, 3}, {}}),
            (I32s{{}, {1, 2, 3}}));
  // Bytes travel verbatim whatever the type.
  auto out = run<uint16_t>(CollKind::kSend, DataType::kF16, 0, 2, 0, {{0x7E01, 0xFFFF}, {}});
  EXPECT_EQ(out[1], (std::vector<uint16_t>{0x7E01, 0xFFFF}));
}

TEST(CollectiveKinds, CopiesAreBitExact) {
  // Broadcast / AllGather of NaN payloads and odd bytes: no conversion on the way.
  auto out =
      run<uint8_t>(CollKind::kAllGather, DataType::kFP8E4M3, 0, 2, 0, {{0xFF, 0x7F}, {0x80, 0x01}});
  EXPECT_EQ(out[1], (std::vector<uint8_t>{0xFF, 0x7F, 0x80, 0x01}));
  auto f = run<uint32_t>(CollKind::kBroadcast, DataType::kF32, 0, 1, 0, {{0x7FC01234u}, {}});
  EXPECT_EQ(f[1], (std::vector<uint32_t>{0x7FC01234u}));
}

// =============================================================================================
// Reductions by data type

template <typename T>
class IntReduce : public ::testing::Test {};

template <typename T, DataType D>
struct IntCase {
  using Type = T;
  static constexpr DataType kType = D;
};
using IntCases =
    ::testing::Types<IntCase<int8_t, DataType::kI8>, IntCase<uint8_t, DataType::kU8>,
                     IntCase<int32_t, DataType::kI32>, IntCase<uint32_t, DataType::kU32>,
                     IntCase<int64_t, DataType::kI64>, IntCase<uint64_t, DataType::kU64>>;
TYPED_TEST_SUITE(IntReduce, IntCases);

TYPED_TEST(IntReduce, AllOpsOnSmallValues) {
  using T = typename TypeParam::Type;
  constexpr DataType D = TypeParam::kType;
  const std::vector<T> two{T(6), T(9)};
  EXPECT_EQ(reduce1<T>(D, kRedSum, two), T(15));
  EXPECT_EQ(reduce1<T>(D, kRedProd, two), T(54));
  EXPECT_EQ(reduce1<T>(D, kRedMax, two), T(9));
  EXPECT_EQ(reduce1<T>(D, kRedMin, two), T(6));
  EXPECT_EQ(reduce1<T>(D, kRedAvg, two), T(7));  // 15 / 2, floor
  const std::vector<T> four{T(1), T(2), T(3), T(5)};
  EXPECT_EQ(reduce1<T>(D, kRedSum, four), T(11));
  EXPECT_EQ(reduce1<T>(D, kRedProd, four), T(30));
  EXPECT_EQ(reduce1<T>(D, kRedMax, four), T(5));
  EXPECT_EQ(reduce1<T>(D, kRedMin, four), T(1));
  EXPECT_EQ(reduce1<T>(D, kRedAvg, four), T(2));  // 11 / 4
  const std::vector<T> three{T(4), T(4), T(5)};
  EXPECT_EQ(reduce1<T>(D, kRedAvg, three), T(4));  // 13 / 3
  EXPECT_EQ(reduce1<T>(D, kRedSum, {T(42)}), T(42));
  EXPECT_EQ(reduce1<T>(D, kRedAvg, {T(42)}), T(42));
  // Custom (PreMulSum) ops: computed as a plain sum.
  EXPECT_EQ(reduce1<T>(D, 5, two), T(15));
  EXPECT_EQ(reduce1<T>(D, 200, four), T(11));
}

TYPED_TEST(IntReduce, WrapsAndComparesInItsOwnType) {
  using T = typename TypeParam::Type;
  using L = std::numeric_limits<T>;
  constexpr DataType D = TypeParam::kType;
  // max + 1 wraps to min; max * 2 wraps to -2 (signed) or max - 1 (unsigned).
  EXPECT_EQ(reduce1<T>(D, kRedSum, {L::max(), T(1)}), L::min());
  EXPECT_EQ(reduce1<T>(D, kRedProd, {L::max(), T(2)}),
            std::is_signed_v<T> ? T(-2) : static_cast<T>(L::max() - 1));
  EXPECT_EQ(reduce1<T>(D, kRedMax, {L::min(), L::max(), T(0)}), L::max());
  EXPECT_EQ(reduce1<T>(D, kRedMin, {L::max(), L::min(), T(1)}), L::min());
}

TEST(IntReduceSigned, MaxMinSignedVersusUnsigned) {
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedMax, {-1, 1}), 1);
  EXPECT_EQ(reduce1<uint8_t>(DataType::kU8, kRedMax, {0xFF, 1}), 0xFF);
  EXPECT_EQ(reduce1<int32_t>(DataType::kI32, kRedMin, {-5, 3, -7, 0}), -7);
  EXPECT_EQ(reduce1<uint32_t>(DataType::kU32, kRedMin, {0xFFFFFFF9u, 3u}), 3u);
  EXPECT_EQ(reduce1<int64_t>(DataType::kI64, kRedMax, {INT64_MIN, -1}), -1);
  EXPECT_EQ(reduce1<uint64_t>(DataType::kU64, kRedMax, {UINT64_MAX, 1}), UINT64_MAX);
}

TEST(IntReduceSigned, ProductsWrap) {
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedProd, {16, 16}), 0);  // 256 mod 256
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedProd, {-3, 5, 7}), -105);
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedProd, {12, 12}), -112);  // 144 - 256
  EXPECT_EQ(reduce1<uint8_t>(DataType::kU8, kRedProd, {20, 20}), 144);  // 400 - 256
  EXPECT_EQ(reduce1<int32_t>(DataType::kI32, kRedProd, {65536, 65536}), 0);
  EXPECT_EQ(reduce1<int64_t>(DataType::kI64, kRedProd, {-3, -5, 7}), 105);
  EXPECT_EQ(reduce1<int64_t>(DataType::kI64, kRedProd, {INT64_MIN, -1}), INT64_MIN);
  EXPECT_EQ(reduce1<uint64_t>(DataType::kU64, kRedProd, {uint64_t{1} << 63, 2}), 0u);
}

TEST(IntReduceSigned, AvgTruncatesTowardZeroAfterAWrappingSum) {
  // NCCL's FuncSumPostDiv: sum (wrapping), then divide the magnitude and restore the sign.
  EXPECT_EQ(reduce1<int32_t>(DataType::kI32, kRedAvg, {-3, -4}), -3);         // -7 / 2 = -3.5
  EXPECT_EQ(reduce1<int32_t>(DataType::kI32, kRedAvg, {-1, 0, 0}), 0);        // -1 / 3
  EXPECT_EQ(reduce1<int32_t>(DataType::kI32, kRedAvg, {-5, -5, -5, 4}), -2);  // -11 / 4
  EXPECT_EQ(reduce1<int64_t>(DataType::kI64, kRedAvg, {-9, 2}), -3);          // -7 / 2
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedAvg, {-7, 0}), -3);
  // The sum wraps before the division: 100 + 100 = 200 = -56 as int8, / 2 = -28.
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedAvg, {100, 100}), -28);
  // INT8_MIN: magnitude 128 (as unsigned), / 1 = 128, negated back to -128.
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedAvg, {-128}), -128);
  EXPECT_EQ(reduce1<int8_t>(DataType::kI8, kRedAvg, {-128, 0}), -64);
  EXPECT_EQ(reduce1<int64_t>(DataType::kI64, kRedAvg, {INT64_MIN, 0}), INT64_MIN / 2);
  // Unsigned: floor; 250 + 10 wraps to 4 for uint8.
  EXPECT_EQ(reduce1<uint8_t>(DataType::kU8, kRedAvg, {250, 10}), 2);
  EXPECT_EQ(reduce1<uint32_t>(DataType::kU32, kRedAvg, {0xFFFFFFFFu, 1u}), 0u);
  EXPECT_EQ(reduce1<uint64_t>(DataType::kU64, kRedAvg, {UINT64_MAX, UINT64_MAX - 2, 0}),
            (UINT64_MAX - 3) / 3);  // sum wraps to 2^64 - 4
}

template <typename T, DataType D>
void check_wide_float_ops() {
  const std::vector<T> two{T(1.5), T(-4)};
  EXPECT_EQ(reduce1<T>(D, kRedSum, two), T(-2.5));
  EXPECT_EQ(reduce1<T>(D, kRedProd, two), T(-6));
  EXPECT_EQ(reduce1<T>(D, kRedMax, two), T(1.5));
  EXPECT_EQ(reduce1<T>(D, kRedMin, two), T(-4));
  EXPECT_EQ(reduce1<T>(D, kRedAvg, two), T(-1.25));
  const std::vector<T> four{T(1), T(2), T(0.5), T(-8)};
  EXPECT_EQ(reduce1<T>(D, kRedSum, four), T(-4.5));
  EXPECT_EQ(reduce1<T>(D, kRedProd, four), T(-8));
  EXPECT_EQ(reduce1<T>(D, kRedMax, four), T(2));
  EXPECT_EQ(reduce1<T>(D, kRedMin, four), T(-8));
  EXPECT_EQ(reduce1<T>(D, kRedAvg, four), T(-1.125));
  EXPECT_EQ(reduce1<T>(D, 7, four), T(-4.5));  // custom op: plain sum
  // avg with 3 ranks is a sum of pre-multiplied inputs: x * T(1/3) each, summed in order.
  const T s = D == DataType::kF32 ? T(static_cast<float>(1.0 / 3)) : T(1.0 / 3);
  const std::vector<T> three{T(1), T(2), T(4)};
  const T want = T(T(T(1) * s + T(2) * s) + T(4) * s);
  EXPECT_EQ(reduce1<T>(D, kRedAvg, three), want);
  // NaN and signed zeros in max / min; Inf.
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  EXPECT_EQ(reduce1<T>(D, kRedMax, {nan, T(3)}), T(3));
  EXPECT_EQ(reduce1<T>(D, kRedMin, {T(3), nan}), T(3));
  EXPECT_TRUE(std::isnan(reduce1<T>(D, kRedMax, {nan, nan})));
  EXPECT_TRUE(std::isnan(reduce1<T>(D, kRedSum, {nan, T(1)})));
  EXPECT_TRUE(std::isnan(reduce1<T>(D, kRedSum, {inf, -inf})));
  EXPECT_EQ(reduce1<T>(D, kRedSum, {inf, T(1)}), inf);
  EXPECT_FALSE(std::signbit(reduce1<T>(D, kRedMax, {T(-0.0), T(0.0)})));
  EXPECT_FALSE(std::signbit(reduce1<T>(D, kRedMax, {T(0.0), T(-0.0)})));
  EXPECT_TRUE(std::signbit(reduce1<T>(D, kRedMin, {T(0.0), T(-0.0)})));
  EXPECT_TRUE(std::signbit(reduce1<T>(D, kRedMin, {T(-0.0), T(0.0)})));
}

TEST(FloatReduce, F32) {
  check_wide_float_ops<float, DataType::kF32>();
  // Rounds in float: 2^24 + 1 is a tie, to even 2^24.
  EXPECT_EQ(reduce1<float>(DataType::kF32, kRedSum, {16777216.0f, 1.0f}), 16777216.0f);
  EXPECT_EQ(reduce1<float>(DataType::kF32, kRedSum, {16777216.0f, 3.0f}), 16777220.0f);
}

TEST(FloatReduce, F64) {
  check_wide_float_ops<double, DataType::kF64>();
  // Not rounded through float: 2^24 + 1 is exact in double.
  EXPECT_EQ(reduce1<double>(DataType::kF64, kRedSum, {16777216.0, 1.0}), 16777217.0);
}

TEST(FloatReduce, F16Exact) {
  const auto h = [](float f) { return float_to_half(f); };
  const auto r = [](int op, std::vector<uint16_t> v) {
    return reduce1<uint16_t>(DataType::kF16, op, v);
  };
  EXPECT_EQ(r(kRedSum, {0x3C00, 0x4000}), 0x4200);  // 1 + 2 = 3
  EXPECT_EQ(r(kRedSum, {h(1.5f), h(-4), h(0.25f), h(8)}), h(5.75f));
  EXPECT_EQ(r(kRedProd, {h(1.5f), h(-4)}), h(-6));
  EXPECT_EQ(r(kRedProd, {h(0.5f), h(3), h(-2), h(0.25f)}), h(-0.75f));
  EXPECT_EQ(r(kRedMax, {h(1.5f), h(-4), h(7)}), h(7));
  EXPECT_EQ(r(kRedMin, {h(1.5f), h(-4), h(7)}), h(-4));
  // avg: inputs pre-multiplied by half(1/n), exact for n = 2 and 4.
  EXPECT_EQ(r(kRedAvg, {h(1), h(2)}), 0x3E00);            // 1.5
  EXPECT_EQ(r(kRedAvg, {h(1), h(2), h(3), h(6)}), h(3));  // 0.25+0.5+0.75+1.5
  EXPECT_EQ(r(kRedAvg, {h(-6), h(2)}), h(-2));
  EXPECT_EQ(r(7, {h(1), h(2), h(3), h(6)}), h(12));  // custom op: plain sum
}

TEST(FloatReduce, F16RoundingAndSpecials) {
  const auto h = [](float f) { return float_to_half(f); };
  const auto r = [](int op, std::vector<uint16_t> v) {
    return reduce1<uint16_t>(DataType::kF16, op, v);
  };
  // Each step rounds to half: 2048 + 1 = 2049 is a tie between 2048 and 2050 -> 2048.
  EXPECT_EQ(r(kRedSum, {0x6800, 0x3C00}), 0x6800);
  EXPECT_EQ(r(kRedSum, {h(2048), h(3)}), h(2052));  // tie 2050 / 2052 -> even
  // ... so the order of steps shows: (2048 + 1) + 1 = 2048 in rank order.
  EXPECT_EQ(r(kRedSum, {h(2048), h(1), h(1)}), h(2048));
  EXPECT_EQ(r(kRedSum, {h(65504), h(65504)}), 0x7C00);  // overflow -> Inf
  EXPECT_EQ(r(kRedProd, {h(256), h(256)}), 0x7C00);
  EXPECT_EQ(r(kRedSum, {0x7C00, 0xFC00}), 0x7FFF);  // Inf - Inf = canonical NaN
  EXPECT_EQ(r(kRedSum, {0x7E01, h(1)}), 0x7FFF);
  EXPECT_EQ(r(kRedMax, {0x7E00, h(1)}), h(1));  // NaN loses to a number
  EXPECT_EQ(r(kRedMin, {h(1), 0xFE00}), h(1));
  EXPECT_EQ(r(kRedMax, {0x7E01, 0xFE00}), 0x7FFF);  // two NaNs: canonical
  EXPECT_EQ(r(kRedMax, {0x8000, 0x0000}), 0x0000);  // +0 > -0
  EXPECT_EQ(r(kRedMax, {0x0000, 0x8000}), 0x0000);
  EXPECT_EQ(r(kRedMin, {0x0000, 0x8000}), 0x8000);
  EXPECT_EQ(r(kRedMax, {0x7C00, h(1)}), 0x7C00);    // Inf stays Inf in half
  EXPECT_EQ(r(kRedSum, {0x0001, 0x0001}), 0x0002);  // subnormals add exactly
  // avg over 3 ranks: 3 * half(1/3) = 3 * 0.333251953125 = 0.999755859375 = 1 - 2^-12,
  // the tie between 0x3BFF and 1.0 -> 1.0 (even).
  EXPECT_EQ(half_to_float(float_to_half(static_cast<float>(1.0 / 3))), 0.333251953125f);
  EXPECT_EQ(r(kRedAvg, {h(3), h(0), h(0)}), h(1));
}

TEST(FloatReduce, Bf16) {
  const auto b = [](float f) { return float_to_bf16(f); };
  const auto r = [](int op, std::vector<uint16_t> v) {
    return reduce1<uint16_t>(DataType::kBF16, op, v);
  };
  EXPECT_EQ(r(kRedSum, {0x3F80, 0x4000}), 0x4040);  // 1 + 2 = 3
  EXPECT_EQ(r(kRedSum, {b(1.5f), b(-4), b(0.25f), b(8)}), b(5.75f));
  EXPECT_EQ(r(kRedProd, {b(3), b(3)}), 0x4110);  // 9
  EXPECT_EQ(r(kRedProd, {b(0.5f), b(3), b(-2), b(0.25f)}), b(-0.75f));
  EXPECT_EQ(r(kRedMax, {b(1.5f), b(-4), b(7)}), b(7));
  EXPECT_EQ(r(kRedMin, {b(1.5f), b(-4), b(7)}), b(-4));
  EXPECT_EQ(r(kRedAvg, {b(1), b(3)}), 0x4000);  // 2
  EXPECT_EQ(r(kRedAvg, {b(1), b(2), b(3), b(6)}), b(3));
  EXPECT_EQ(r(9, {b(1), b(3)}), b(4));  // custom op: plain sum
  // Rounding per step: 256 + 1 is a tie between 256 and 258 -> 256; 256 + 3 -> 260.
  EXPECT_EQ(r(kRedSum, {b(256), b(1)}), 0x4380);
  EXPECT_EQ(r(kRedSum, {b(256), b(3)}), b(260));
  EXPECT_EQ(r(kRedSum, {0x7F7F, 0x7F7F}), 0x7F80);  // overflow -> Inf
  EXPECT_EQ(r(kRedSum, {0x7FC0, b(1)}), 0x7FFF);    // NaN -> canonical
  EXPECT_EQ(r(kRedMax, {0xFFC0, b(-1)}), b(-1));
  EXPECT_EQ(r(kRedMin, {0x7FC0, 0x7FC1}), 0x7FFF);
  EXPECT_EQ(r(kRedMax, {0x8000, 0x0000}), 0x0000);
  EXPECT_EQ(r(kRedMin, {0x0000, 0x8000}), 0x8000);
}

TEST(FloatReduce, Fp8E4M3) {
  const auto e = [](float f) { return float_to_fp8_e4m3(f); };
  const auto r = [](int op, std::vector<uint8_t> v) {
    return reduce1<uint8_t>(DataType::kFP8E4M3, op, v);
  };
  EXPECT_EQ(r(kRedSum, {0x38, 0x40}), 0x44);  // 1 + 2 = 3
  // -2.5, -2.25, then 5.75: a tie between 5.5 (odd) and 6 -> 6.
  EXPECT_EQ(r(kRedSum, {e(1.5f), e(-4), e(0.25f), e(8)}), e(6));
  EXPECT_EQ(r(kRedProd, {e(16), e(16)}), 0x78);  // 256
  EXPECT_EQ(r(kRedProd, {e(0.5f), e(3), e(-2), e(0.25f)}), e(-0.75f));
  EXPECT_EQ(r(kRedMax, {e(1.5f), e(-4), e(7)}), e(7));
  EXPECT_EQ(r(kRedMin, {e(1.5f), e(-4), e(7)}), e(-4));
  EXPECT_EQ(r(kRedAvg, {e(1), e(3)}), 0x40);  // 0.5 + 1.5 = 2
  EXPECT_EQ(r(kRedAvg, {e(1), e(2), e(3), e(6)}), e(3));
  EXPECT_EQ(r(6, {e(1), e(3)}), e(4));  // custom op: plain sum
  // Satfinite: results beyond 448 clamp.
  EXPECT_EQ(r(kRedSum, {0x7E, 0x7E}), 0x7E);
  EXPECT_EQ(r(kRedSum, {0xFE, 0xFE}), 0xFE);
  EXPECT_EQ(r(kRedProd, {e(32), e(32)}), 0x7E);
  // Rounding to fp8 per step: 16 + 1 = 17 is a tie between 16 (even) and 18 -> 16.
  EXPECT_EQ(r(kRedSum, {e(16), e(1)}), e(16));
  EXPECT_EQ(r(kRedSum, {e(16), e(3)}), e(20));  // 19: tie 18 (odd) / 20 -> 20
  // NaN: sums give 0x7F; max/min skip a NaN operand; two NaNs give 0x7F.
  EXPECT_EQ(r(kRedSum, {0xFF, 0x38}), 0x7F);
  EXPECT_EQ(r(kRedMax, {0x7F, 0x38}), 0x38);
  EXPECT_EQ(r(kRedMin, {0xB8, 0xFF}), 0xB8);
  EXPECT_EQ(r(kRedMax, {0xFF, 0xFF}), 0x7F);
  EXPECT_EQ(r(kRedMax, {0x80, 0x00}), 0x00);
  EXPECT_EQ(r(kRedMin, {0x00, 0x80}), 0x80);
}

TEST(FloatReduce, Fp8E5M2) {
  const auto e = [](float f) { return float_to_fp8_e5m2(f); };
  const auto r = [](int op, std::vector<uint8_t> v) {
    return reduce1<uint8_t>(DataType::kFP8E5M2, op, v);
  };
  EXPECT_EQ(r(kRedSum, {0x3C, 0x40}), e(3));  // 1 + 2 = 3 (0x42)
  EXPECT_EQ(e(3), 0x42);
  // 1.5 - 4 = -2.5; -2.5 + 0.25 = -2.25, a tie between -2 (even) and -2.5 -> -2; -2 + 8 = 6.
  EXPECT_EQ(r(kRedSum, {e(1.5f), e(-4), e(0.25f), e(8)}), e(6));
  EXPECT_EQ(r(kRedSum, {e(1.5f), e(-4), e(0.5f), e(8)}), e(6));
  EXPECT_EQ(r(kRedProd, {e(0.5f), e(3), e(-2), e(0.25f)}), e(-0.75f));
  EXPECT_EQ(r(kRedMax, {e(1.5f), e(-4), e(7)}), e(7));
  EXPECT_EQ(r(kRedMin, {e(1.5f), e(-4), e(7)}), e(-4));
  EXPECT_EQ(r(kRedAvg, {e(1), e(3)}), e(2));
  EXPECT_EQ(r(kRedAvg, {e(1), e(2), e(3), e(6)}), e(3));
  EXPECT_EQ(r(11, {e(1), e(3)}), e(4));  // custom op: plain sum
  // Satfinite: overflow and even infinities come out as +-57344 once reduced, as on sm_90.
  EXPECT_EQ(r(kRedSum, {0x7B, 0x7B}), 0x7B);
  EXPECT_EQ(r(kRedSum, {0x7C, 0x3C}), 0x7B);
  EXPECT_EQ(r(kRedSum, {0xFC, 0x3C}), 0xFB);
  EXPECT_EQ(r(kRedMax, {0x7C, 0x3C}), 0x7B);
  EXPECT_EQ(r(kRedMin, {0x7C, 0x3C}), 0x3C);
  EXPECT_EQ(r(kRedSum, {0x7C, 0xFC}), 0x7F);  // Inf - Inf = NaN
  EXPECT_EQ(r(kRedSum, {0x7D, 0x3C}), 0x7F);
  EXPECT_EQ(r(kRedMax, {0x7E, 0x3C}), 0x3C);
  EXPECT_EQ(r(kRedMax, {0x7D, 0xFE}), 0x7F);
  // One rank: NCCL copies, so an infinity survives a one-rank sum.
  EXPECT_EQ(r(kRedSum, {0x7C}), 0x7C);
}

// =============================================================================================
// Other dtypes through non-reducing kinds and ReduceScatter.

TEST(CollectiveKinds, ReduceScatterOnNarrowAndWideTypes) {
  auto d = run<double>(CollKind::kReduceScatter, DataType::kF64, kRedProd, 1, 0,
                       {{2.0, 3.0, 0.5}, {4.0, -1.0, 8.0}, {0.5, 2.0, 2.0}});
  EXPECT_EQ(d, (std::vector<std::vector<double>>{{4.0}, {-6.0}, {8.0}}));
  const auto h = [](float f) { return float_to_half(f); };
  auto hs = run<uint16_t>(CollKind::kReduceScatter, DataType::kF16, kRedAvg, 2, 0,
                          {{h(1), h(2), h(3), h(4)}, {h(3), h(4), h(5), h(-4)}});
  EXPECT_EQ(hs, (std::vector<std::vector<uint16_t>>{{h(2), h(3)}, {h(4), h(0)}}));
  auto u = run<uint64_t>(CollKind::kAllGather, DataType::kU64, 0, 1, 0,
                         {{UINT64_MAX}, {1}, {uint64_t{1} << 40}});
  EXPECT_EQ(u[2], (std::vector<uint64_t>{UINT64_MAX, 1, uint64_t{1} << 40}));
}

// =============================================================================================
// Bad inputs

std::string error_of(CollKind kind, DataType dtype, int redop, uint64_t count, int root,
                     const std::vector<std::vector<std::byte>>& bufs) {
  std::vector<std::span<const std::byte>> sends(bufs.begin(), bufs.end());
  try {
    collective_result(kind, dtype, redop, count, root, sends);
  } catch (const PayloadError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::byte> nbytes(size_t n) {
  return std::vector<std::byte>(n, std::byte{0});
}

TEST(BadInputs, WrongSizesNameTheRank) {
  const auto msg = error_of(CollKind::kAllReduce, DataType::kF32, kRedSum, 2, 0,
                            {nbytes(8), nbytes(8), nbytes(6)});
  EXPECT_NE(msg.find("AllReduce"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("6 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected 8"), std::string::npos) << msg;
  // ReduceScatter / AllToAll / Scatter send n x count.
  EXPECT_NE(
      error_of(CollKind::kReduceScatter, DataType::kI32, kRedSum, 1, 0, {nbytes(4), nbytes(4)}),
      "");
  EXPECT_EQ(
      error_of(CollKind::kReduceScatter, DataType::kI32, kRedSum, 1, 0, {nbytes(8), nbytes(8)}),
      "");
  EXPECT_NE(error_of(CollKind::kAllToAll, DataType::kI32, 0, 1, 0, {nbytes(8), nbytes(4)}), "");
  EXPECT_NE(error_of(CollKind::kScatter, DataType::kI32, 0, 1, 1, {nbytes(0), nbytes(4)}), "");
  EXPECT_NE(error_of(CollKind::kAllGather, DataType::kI32, 0, 1, 0, {nbytes(4), nbytes(8)}), "");
  EXPECT_NE(error_of(CollKind::kGather, DataType::kI32, 0, 1, 0, {nbytes(4), nbytes(0)}), "");
  EXPECT_NE(error_of(CollKind::kReduce, DataType::kF16, kRedSum, 3, 1, {nbytes(6), nbytes(5)}), "");
  EXPECT_NE(error_of(CollKind::kBroadcast, DataType::kI32, 0, 1, 1, {nbytes(4), nbytes(0)}), "");
  EXPECT_NE(error_of(CollKind::kSend, DataType::kI32, 0, 2, 0, {nbytes(4), nbytes(0)}), "");
}

TEST(BadInputs, RanksRootsTypesAndOps) {
  EXPECT_NE(error_of(CollKind::kAllReduce, DataType::kF32, kRedSum, 1, 0, {}), "");
  // Send/Recv take exactly two buffers.
  EXPECT_NE(error_of(CollKind::kSend, DataType::kI32, 0, 1, 0, {nbytes(4)}), "");
  EXPECT_NE(error_of(CollKind::kRecv, DataType::kI32, 0, 1, 0, {nbytes(4), nbytes(0), nbytes(0)}),
            "");
  // Root out of range for rooted kinds.
  const auto msg = error_of(CollKind::kBroadcast, DataType::kI32, 0, 1, 2, {nbytes(4), nbytes(4)});
  EXPECT_NE(msg.find("root 2"), std::string::npos) << msg;
  EXPECT_NE(error_of(CollKind::kReduce, DataType::kI32, kRedSum, 1, -1, {nbytes(4)}), "");
  EXPECT_NE(error_of(CollKind::kGather, DataType::kI32, 0, 1, 1, {nbytes(4)}), "");
  EXPECT_NE(error_of(CollKind::kScatter, DataType::kI32, 0, 1, 3, {nbytes(4)}), "");
  // Root is not used (and not checked) by unrooted kinds.
  EXPECT_EQ(error_of(CollKind::kAllGather, DataType::kI32, 0, 1, 7, {nbytes(4)}), "");
  // Types that are not NCCL types; unknown kinds; negative ops.
  EXPECT_NE(error_of(CollKind::kAllReduce, DataType::kTF32, kRedSum, 1, 0, {nbytes(4)}), "");
  EXPECT_NE(error_of(CollKind::kAllGather, DataType::kUnknown, 0, 1, 0, {nbytes(4)}), "");
  EXPECT_NE(error_of(static_cast<CollKind>(0), DataType::kI32, 0, 1, 0, {nbytes(4)}), "");
  EXPECT_NE(error_of(CollKind::kAllReduce, DataType::kI32, -1, 1, 0, {nbytes(4)}), "");
  // A count whose byte size does not fit 64 bits.
  EXPECT_NE(
      error_of(CollKind::kAllReduce, DataType::kF64, kRedSum, uint64_t{1} << 62, 0, {nbytes(0)}),
      "");
  // PayloadError is an std::invalid_argument.
  std::vector<std::span<const std::byte>> none;
  EXPECT_THROW(collective_result(CollKind::kAllReduce, DataType::kI32, 0, 1, 0, none),
               std::invalid_argument);
}

}  // namespace
}  // namespace phantora::sim
