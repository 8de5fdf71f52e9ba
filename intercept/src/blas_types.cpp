#include "blas_types.hpp"

#include <algorithm>
#include <string>

#include "capture.hpp"
#include "context.hpp"

namespace phantora::shim {
namespace {

// While a stream captures, a GEMM becomes a kernel node: wire::GraphNode has no GEMM kind, so
// the node carries a synthetic kernel whose name states the shape and whose grid is the number
// of 128 x 128 output tiles. The daemon costs it like any kernel it knows only by its launch
// (docs/pytorch.md, "GEMMs in CUDA graphs").
void capture_gemm(CUstream_st* stream, const wire::Gemm& g) {
  const std::string name =
      "phantora_captured_gemm(m=" + std::to_string(g.m) + ",n=" + std::to_string(g.n) +
      ",k=" + std::to_string(g.k) + ",batch=" + std::to_string(g.batch) +
      ",a=" + wire::dtype_name(g.a_type) + ",compute=" + wire::dtype_name(g.compute_type) + ")";
  const auto tiles = [](int64_t v) {
    return static_cast<uint32_t>(std::clamp<int64_t>((v + 127) / 128, 1, 1 << 30));
  };
  wire::GraphNode n{};
  n.kind = wire::GraphNodeKind::kKernel;
  n.kernel = Runtime::get().kernel_id(name);
  n.grid[0] = tiles(g.m), n.grid[1] = tiles(g.n);
  n.grid[2] = static_cast<uint32_t>(std::clamp<int64_t>(g.batch, 1, 65535));
  n.block[0] = 256, n.block[1] = 1, n.block[2] = 1;
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

void submit_gemm(CUstream_st* stream, BlasApi api, int64_t m, int64_t n, int64_t k, int64_t batch,
                 wire::DataType a, wire::DataType b, wire::DataType c, wire::DataType compute,
                 bool trans_a, bool trans_b, uint8_t epilogue) {
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
  if (stream->capture != nullptr) {
    capture_gemm(stream, g);
    return;
  }
  Runtime::get().submit(wire::RecordType::kGemm, &g, sizeof(g));
}

}  // namespace phantora::shim
