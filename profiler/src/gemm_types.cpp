#include "gemm_types.hpp"

#include <cstring>

namespace phantora::profiler {

using kernels::DType;

std::optional<cudaDataType_t> data_type(DType t) {
  switch (t) {
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kBF16:
      return CUDA_R_16BF;
    case DType::kF32:
    case DType::kTF32:  // stored as f32; TF32 is a compute type
      return CUDA_R_32F;
    case DType::kF64:
      return CUDA_R_64F;
    case DType::kI8:
      return CUDA_R_8I;
    case DType::kI32:
      return CUDA_R_32I;
    case DType::kF8E4M3:
    case DType::kF8E5M2:  // cublasGemmEx takes no FP8: that needs cuBLASLt's scale descriptors
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::pair<cublasComputeType_t, size_t>> compute_type(DType t) {
  switch (t) {
    case DType::kF32:
      return std::pair{CUBLAS_COMPUTE_32F, sizeof(float)};
    case DType::kTF32:
      return std::pair{CUBLAS_COMPUTE_32F_FAST_TF32, sizeof(float)};
    case DType::kF16:
      return std::pair{CUBLAS_COMPUTE_16F, size_t{2}};
    case DType::kF64:
      return std::pair{CUBLAS_COMPUTE_64F, sizeof(double)};
    case DType::kI32:
      return std::pair{CUBLAS_COMPUTE_32I, sizeof(int32_t)};
    default:
      return std::nullopt;
  }
}

std::array<unsigned char, 8> scalar_one(cublasComputeType_t c) {
  std::array<unsigned char, 8> out{};
  if (c == CUBLAS_COMPUTE_16F) {
    const uint16_t one = 0x3c00;  // IEEE half 1.0
    std::memcpy(out.data(), &one, sizeof(one));
  } else if (c == CUBLAS_COMPUTE_64F) {
    const double one = 1.0;
    std::memcpy(out.data(), &one, sizeof(one));
  } else if (c == CUBLAS_COMPUTE_32I) {
    const int32_t one = 1;
    std::memcpy(out.data(), &one, sizeof(one));
  } else {
    const float one = 1.0f;
    std::memcpy(out.data(), &one, sizeof(one));
  }
  return out;
}

cudaDataType_t scale_type(cublasComputeType_t c) {
  switch (c) {
    case CUBLAS_COMPUTE_16F:
      return CUDA_R_16F;
    case CUBLAS_COMPUTE_64F:
      return CUDA_R_64F;
    case CUBLAS_COMPUTE_32I:
      return CUDA_R_32I;
    default:
      return CUDA_R_32F;
  }
}

}  // namespace phantora::profiler
