// Random matrix contents for replayed GEMMs. A GEMM's time depends on its data: under a power
// limit, inputs whose bits switch often (a training step's weights and activations) draw more
// power and leave a lower clock than zeros do (an A100's 8192³ GEMM: 257 TFLOP/s on
// torch.randn inputs, 295 on zeros; docs/kernels-db.md, "Measuring"). So GEMM operands are
// filled with draws from a standard normal distribution, as torch.randn makes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "phantora/kernels/op_desc.hpp"

namespace phantora::profiler {

// `count` elements of `type`, stored as the GPU stores them: floating types standard normal
// (rounded to the nearest value of the type), integer types uniform over their range. Fixed for
// a given seed. FP8 types are not filled (no replay takes them) and throw std::invalid_argument.
std::vector<std::byte> normal_elements(kernels::DType type, size_t count, uint64_t seed);

}  // namespace phantora::profiler
