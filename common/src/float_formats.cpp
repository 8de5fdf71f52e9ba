#include "phantora/float_formats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace phantora {
namespace {

// Narrow floating formats.

enum class Overflow { kInf, kSatFinite, kNaN };

struct Format {
  int exp_bits;
  int man_bits;
  int bias;
  bool ieee_specials;  // exponent all ones: Inf (mantissa 0) or NaN; else only S.1111.111 is NaN
  double max_finite;
  uint32_t nan_bits;  // what a NaN input becomes
};

// IEEE 754 binary16.
constexpr Format kHalf{5, 10, 15, true, 65504.0, 0x7FFF};
// bfloat16: float's exponent, 7 mantissa bits. max = (2 - 2^-7) * 2^127.
constexpr Format kBf16{8, 7, 127, true, 0x1.FEp127, 0x7FFF};
// OCP FP8 E4M3 ("fn"): no infinities, only S.1111.111 is NaN, max 1.75 * 2^8 = 448.
constexpr Format kE4M3{4, 3, 7, false, 448.0, 0x7F};
// OCP FP8 E5M2: IEEE-style specials, max 1.75 * 2^15 = 57344.
constexpr Format kE5M2{5, 2, 15, true, 57344.0, 0x7F};

uint32_t exp_mask(const Format& f) {
  return (1u << f.exp_bits) - 1;
}
uint32_t man_mask(const Format& f) {
  return (1u << f.man_bits) - 1;
}
uint32_t sign_bit(const Format& f) {
  return 1u << (f.exp_bits + f.man_bits);
}

double decode(uint32_t bits, const Format& f) {
  const bool negative = (bits & sign_bit(f)) != 0;
  const uint32_t exp = (bits >> f.man_bits) & exp_mask(f);
  const uint32_t man = bits & man_mask(f);
  double magnitude;
  if (f.ieee_specials && exp == exp_mask(f)) {
    magnitude = man == 0 ? std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.ieee_specials && exp == exp_mask(f) && man == man_mask(f)) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<double>(man), 1 - f.bias - f.man_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(man | (1u << f.man_bits)),
                           static_cast<int>(exp) - f.bias - f.man_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Rounds `value` to the format, to nearest with ties to even. Every input reaching here is a
// float widened to double (exact), so this rounds once from the exact value.
uint32_t encode(double value, const Format& f, Overflow overflow) {
  if (std::isnan(value)) return f.nan_bits;
  const uint32_t sign = std::signbit(value) ? sign_bit(f) : 0;
  const uint32_t max_bits = f.ieee_specials ? ((exp_mask(f) - 1) << f.man_bits) | man_mask(f)
                                            : (exp_mask(f) << f.man_bits) | (man_mask(f) - 1);
  const auto overflowed = [&]() -> uint32_t {
    switch (overflow) {
      case Overflow::kInf:
        return sign | (exp_mask(f) << f.man_bits);
      case Overflow::kSatFinite:
        return sign | max_bits;
      case Overflow::kNaN:
        return sign | f.nan_bits;
    }
    return sign | f.nan_bits;
  };
  const double a = std::fabs(value);
  if (std::isinf(a)) return overflowed();
  if (a == 0) return sign;

  const int min_exp = 1 - f.bias;  // exponent of the smallest normal
  int k = 0;
  (void)std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1)
  const int e = std::max(k - 1, min_exp);
  // Units of the last place at exponent e (subnormals share the smallest normal's ulp).
  const double q = std::ldexp(a, f.man_bits - e);  // exact: a power-of-two scaling
  double whole = std::floor(q);
  const double frac = q - whole;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(whole, 2.0) != 0.0)) whole += 1.0;
  const double rounded = std::ldexp(whole, e - f.man_bits);
  if (rounded > f.max_finite) return overflowed();
  if (rounded == 0) return sign;  // underflow keeps the sign

  int k2 = 0;
  (void)std::frexp(rounded, &k2);
  const int e2 = k2 - 1;
  if (e2 < min_exp) {
    return sign | static_cast<uint32_t>(std::ldexp(rounded, f.man_bits - min_exp));
  }
  const uint32_t man = static_cast<uint32_t>(std::ldexp(rounded, f.man_bits - e2)) & man_mask(f);
  return sign | (static_cast<uint32_t>(e2 + f.bias) << f.man_bits) | man;
}

Overflow fp8_overflow(bool satfinite, const Format& f) {
  if (satfinite) return Overflow::kSatFinite;
  return f.ieee_specials ? Overflow::kInf : Overflow::kNaN;
}

}  // namespace

float half_to_float(uint16_t bits) {
  return static_cast<float>(decode(bits, kHalf));
}
uint16_t float_to_half(float value) {
  return static_cast<uint16_t>(encode(value, kHalf, Overflow::kInf));
}
float bf16_to_float(uint16_t bits) {
  return static_cast<float>(decode(bits, kBf16));
}
uint16_t float_to_bf16(float value) {
  return static_cast<uint16_t>(encode(value, kBf16, Overflow::kInf));
}
float fp8_e4m3_to_float(uint8_t bits) {
  return static_cast<float>(decode(bits, kE4M3));
}
uint8_t float_to_fp8_e4m3(float value, bool satfinite) {
  return static_cast<uint8_t>(encode(value, kE4M3, fp8_overflow(satfinite, kE4M3)));
}
float fp8_e5m2_to_float(uint8_t bits) {
  return static_cast<float>(decode(bits, kE5M2));
}
uint8_t float_to_fp8_e5m2(float value, bool satfinite) {
  return static_cast<uint8_t>(encode(value, kE5M2, fp8_overflow(satfinite, kE5M2)));
}

}  // namespace phantora
