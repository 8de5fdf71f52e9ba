#include "blas_types.hpp"

#include <cstring>

#include "capture.hpp"
#include "context.hpp"

namespace phantora::shim {
namespace {

// While a stream captures, a GEMM becomes a graph node carrying the same description a direct
// call sends, priced by the GEMM model at each replay.
void capture_gemm(CUstream_st* stream, const wire::Gemm& g) {
  wire::GraphNode n{};
  n.kind = wire::GraphNodeKind::kGemm;
  n.gemm = g;
  capture_node(stream, n);
}

}  // namespace

wire::DataType wire_type(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F:
      return wire::DataType::kF64;
    case CUDA_R_32F:
      return wire::DataType::kF32;
    case CUDA_R_16F:
      return wire::DataType::kF16;
    case CUDA_R_16BF:
      return wire::DataType::kBF16;
    case CUDA_R_8F_E4M3:
      return wire::DataType::kFP8E4M3;
    case CUDA_R_8F_E5M2:
      return wire::DataType::kFP8E5M2;
    case CUDA_R_8I:
      return wire::DataType::kI8;
    case CUDA_R_8U:
      return wire::DataType::kU8;
    case CUDA_R_32I:
      return wire::DataType::kI32;
    case CUDA_R_32U:
      return wire::DataType::kU32;
    case CUDA_R_64I:
      return wire::DataType::kI64;
    case CUDA_R_64U:
      return wire::DataType::kU64;
    default:
      return wire::DataType::kUnknown;  // complex, 4/6-bit floats, 16-bit integers
  }
}

wire::DataType wire_compute(cublasComputeType_t t) {
  switch (t) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return wire::DataType::kF16;
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return wire::DataType::kBF16;
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return wire::DataType::kTF32;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      return wire::DataType::kF32;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
      return wire::DataType::kF64;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return wire::DataType::kI32;
    default:
      return wire::DataType::kUnknown;
  }
}

wire::DataType legacy_compute(wire::DataType storage, cublasMath_t math_mode) {
  const unsigned mode = static_cast<unsigned>(math_mode) &
                        ~static_cast<unsigned>(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  switch (storage) {
    case wire::DataType::kF32:
      return mode == CUBLAS_TF32_TENSOR_OP_MATH ? wire::DataType::kTF32 : wire::DataType::kF32;
    case wire::DataType::kF16:
      return wire::DataType::kF16;  // cublasHgemm accumulates in half
    default:
      return storage;
  }
}

uint8_t wire_epilogue(uint32_t e) {
  if (e == CUBLASLT_EPILOGUE_DEFAULT) return 0;
  uint32_t bits = e & 0xfe;
  if (e & (CUBLASLT_EPILOGUE_BGRADA | CUBLASLT_EPILOGUE_BGRADB)) bits |= 16;
  return static_cast<uint8_t>(bits);
}

bool nonzero_scalar(const void* p, wire::DataType scale, int parts) {
  if (p == nullptr) return false;
  const auto* bytes = static_cast<const unsigned char*>(p);
  for (int i = 0; i < parts; ++i) {
    if (scale == wire::DataType::kF64) {
      double v;
      std::memcpy(&v, bytes + i * sizeof(v), sizeof(v));
      if (v != 0) return true;
    } else if (scale == wire::DataType::kF16) {
      uint16_t b;
      std::memcpy(&b, bytes + i * sizeof(b), sizeof(b));
      if ((b & 0x7fff) != 0) return true;  // either zero's sign
    } else {
      float v;
      std::memcpy(&v, bytes + i * sizeof(v), sizeof(v));
      if (v != 0) return true;
    }
  }
  return false;
}

void submit_gemm(CUstream_st* stream, BlasApi api, int64_t m, int64_t n, int64_t k, int64_t batch,
                 wire::DataType a, wire::DataType b, wire::DataType c, wire::DataType compute,
                 bool trans_a, bool trans_b, uint8_t epilogue, bool accumulate) {
  if (m <= 0 || n <= 0 || batch <= 0) return;
  wire::Gemm g{};
  g.stream = stream->id;
  g.device = stream->device;
  g.api = static_cast<uint32_t>(api);
  g.m = m, g.n = n, g.k = std::max<int64_t>(k, 0);
  g.batch = batch;
  g.a_type = a, g.b_type = b, g.c_type = c, g.compute_type = compute;
  g.trans_a = trans_a ? 1 : 0;
  g.trans_b = trans_b ? 1 : 0;
  g.epilogue = epilogue;
  g.accumulate = accumulate ? 1 : 0;
  if (stream->capture != nullptr) {
    capture_gemm(stream, g);
    return;
  }
  Runtime::get().submit(wire::RecordType::kGemm, &g, sizeof(g));
}

}  // namespace phantora::shim
