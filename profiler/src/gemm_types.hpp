// How a GEMM signature's types map to cuBLAS's: data types, compute types and the alpha/beta
// scalars, shared by the cuBLAS and cuBLASLt replays.
#pragma once

#include <array>
#include <optional>
#include <utility>

#include "phantora/kernels/op_desc.hpp"
#include "phantora/profiler/cuda_api.hpp"

namespace phantora::profiler {

// The storage type; nullopt for FP8, which the replays do not take (cuBLASLt's FP8 matmuls
// need scale descriptors and layouts the signature does not record).
std::optional<cudaDataType_t> data_type(kernels::DType t);
// The compute type and the size of alpha/beta, which cuBLAS reads in the compute type's scalar.
std::optional<std::pair<cublasComputeType_t, size_t>> compute_type(kernels::DType t);
// The scalar type of alpha/beta for a compute type (cuBLASLt's scale type).
cudaDataType_t scale_type(cublasComputeType_t c);
// alpha = 1 in the compute type's scalar (beta is 1 or all zero bytes).
std::array<unsigned char, 8> scalar_one(cublasComputeType_t c);

}  // namespace phantora::profiler
