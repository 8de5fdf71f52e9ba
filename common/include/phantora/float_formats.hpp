// Conversions between float and the narrow floating types, written from the format definitions
// (IEEE 754 binary16; bfloat16; OCP 8-bit floating point E4M3 and E5M2). Narrowing rounds to
// nearest, ties to even, and handles subnormals; widening is exact.
//   f16:  overflow gives +-Inf, NaN gives 0x7FFF (CUDA's canonical NaN).
//   bf16: likewise, NaN gives 0x7FFF.
//   e4m3: no infinities; 0x7F / 0xFF are NaN, max finite 448. NaN input gives 0x7F.
//   e5m2: max finite 57344, 0x7C is +Inf, NaN input gives 0x7F.
// With satfinite (CUDA's __NV_SATFINITE, what NCCL and the __nv_fp8_* constructors use),
// magnitudes that round beyond max finite, and infinities, give +-max finite; without it
// (__NV_NOSAT) they give +-Inf for e5m2 and NaN (0x7F | sign) for e4m3.
//
// Used by the daemon (reductions of small collectives' payloads) and by the shim (small
// kernels computed on the shadow store), which compiles common/src/float_formats.cpp itself.
#pragma once

#include <cstdint>

namespace phantora {

float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);
float fp8_e4m3_to_float(uint8_t bits);
uint8_t float_to_fp8_e4m3(float value, bool satfinite = true);
float fp8_e5m2_to_float(uint8_t bits);
uint8_t float_to_fp8_e5m2(float value, bool satfinite = true);

}  // namespace phantora
