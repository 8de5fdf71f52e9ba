// Translation of cuBLAS / cuBLASLt descriptors into the wire protocol's GEMM record
// (wire::Gemm, wire::DataType), and the record's submission on a stream.
//
// What the fields mean on the wire (the daemon's cost model reads them this way):
//  - a_type, b_type, c_type: storage types of A, B and C/D (cudaDataType_t).
//  - compute_type: the accumulation type, as kernels-db's GemmDesc::compute defines it:
//    kF32 for CUBLAS_COMPUTE_32F(_PEDANTIC), kTF32 for CUBLAS_COMPUTE_32F_FAST_TF32 and for fp32
//    GEMMs in CUBLAS_TF32_TENSOR_OP_MATH, kF16 for CUBLAS_COMPUTE_16F, kBF16 for
//    CUBLAS_COMPUTE_32F_FAST_16BF, kF64, kI32. The tensor-core rate follows from the input types
//    (a bf16 GEMM accumulating in fp32 runs at the bf16 rate).
//  - epilogue: the cuBLASLt epilogue bits (RELU 2, BIAS 4, DRELU 8, BGRAD 16, GELU 32, DGELU 64,
//    AUX 128) with DEFAULT (1) read as 0 and BGRADA / BGRADB (256 / 512) folded into BGRAD, so
//    that they fit the record's byte.
//  - Complex types have no wire type: they are sent as kUnknown (see docs/pytorch.md).
#pragma once

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "phantora/protocol.hpp"

namespace phantora::shim {

// Which entry point issued a GEMM (wire::Gemm::api), for the trace.
enum class BlasApi : uint32_t {
  kSgemm = 1,
  kDgemm,
  kHgemm,
  kCgemm,
  kZgemm,
  kSgemmEx,
  kGemmEx,
  kGemmStridedBatchedEx,
  kSgemmStridedBatched,
  kDgemmStridedBatched,
  kHgemmStridedBatched,
  kCgemmStridedBatched,
  kZgemmStridedBatched,
  kGemmBatchedEx,
  kSgemmBatched,
  kDgemmBatched,
  kHgemmBatched,
  kCgemmBatched,
  kZgemmBatched,
  kGemv,  // level 2: y = op(A) x, sent as an m x 1 x k GEMM
  kDot,   // level 1: x . y, sent as a 1 x 1 x n GEMM
  kLtMatmul = 100,
  // torch._grouped_mm's CUTLASS grouped GEMM kernel, read from its set-up launch
  // (torch_grouped_mm.hpp): not a library call, sent the same way, its group sizes assumed.
  kTorchGroupedMm = wire::kGemmApiGroupedEvenSplit,
};

wire::DataType wire_type(cudaDataType_t t);
// The accumulation type of a cublasComputeType_t.
wire::DataType wire_compute(cublasComputeType_t t);
// The accumulation type of a legacy typed GEMM (cublasSgemm ...) under the handle's math mode.
wire::DataType legacy_compute(wire::DataType storage, cublasMath_t math_mode);
uint8_t wire_epilogue(uint32_t cublaslt_epilogue);
// Whether the host scalar at `p` (beta), of the type GEMMs scale by under `scale` (f64, f16,
// else f32), is non-zero; false for a null pointer. `parts`: 2 for a complex scalar (real,
// imaginary), non-zero when either is.
bool nonzero_scalar(const void* p, wire::DataType scale, int parts = 1);

// Sends the GEMM on `stream` (or records it as a graph node while the stream captures).
// m, n, k are the dimensions after the transposes: C is m x n, the inner dimension is k.
// Nothing is sent for an empty product (m, n or batch zero), as cuBLAS returns at once.
void submit_gemm(CUstream_st* stream, BlasApi api, int64_t m, int64_t n, int64_t k, int64_t batch,
                 wire::DataType a, wire::DataType b, wire::DataType c, wire::DataType compute,
                 bool trans_a, bool trans_b, uint8_t epilogue, bool accumulate);

}  // namespace phantora::shim
