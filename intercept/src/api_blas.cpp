// cuBLAS (the v2 API): handles, streams, workspaces, math and pointer modes, and the GEMM entry
// points PyTorch calls, each sent to the daemon as one wire::Gemm with its full descriptor.
// Level-1/2 routines that PyTorch reaches (dot, gemv) are sent as degenerate GEMMs (gemv: an
// m x 1 x k product; dot: 1 x 1 x n), which the cost model treats as the memory-bound
// operations they are. Every other cuBLAS export is a generated loud stub (stubs_cublas.cpp).
//
// Nothing is computed: as for kernels, results read back as whatever the shadow store holds
// (zeros). A dot product into a host pointer writes 0 after waiting for the stream.
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <algorithm>

#include "blas_types.hpp"
#include "context.hpp"

using namespace phantora;
using namespace phantora::shim;

// The opaque handle type the header forward-declares; the shim owns its layout.
struct cublasContext {
  cudaStream_t stream = nullptr;  // as set by the program; resolved at each call
  int ordinal = 0;                // device current at cublasCreate
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasAtomicsMode_t atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;
  int sm_count_target = 0;
};

namespace {

// The cuBLAS release the shim answers as (the headers it was built against).
constexpr int kCublasVersion = CUBLAS_VERSION;

bool valid_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

// The stream a handle's work goes to. The legacy default stream is per device: the handle's.
CUstream_st* handle_stream(cublasHandle_t h) {
  return resolve_stream_on(h->ordinal, h->stream);
}

struct GemmShape {
  cublasOperation_t ta, tb;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
  int64_t batch = 1;
  const void* beta = nullptr;  // where the caller passes it (C is read when it is non-zero)
  int beta_parts = 1;          // 2 for the complex types: real and imaginary
};

// cuBLAS's argument checks (cublas<t>gemm: "Error Values"): negative sizes, bad transposes and
// leading dimensions smaller than the stored rows are CUBLAS_STATUS_INVALID_VALUE.
cublasStatus_t check_gemm(cublasHandle_t h, const GemmShape& s) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_op(s.ta) || !valid_op(s.tb) || s.m < 0 || s.n < 0 || s.k < 0 || s.batch < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int64_t a_rows = s.ta == CUBLAS_OP_N ? s.m : s.k;
  const int64_t b_rows = s.tb == CUBLAS_OP_N ? s.k : s.n;
  if (s.lda < std::max<int64_t>(1, a_rows) || s.ldb < std::max<int64_t>(1, b_rows) ||
      s.ldc < std::max<int64_t>(1, s.m))
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t gemm(cublasHandle_t h, BlasApi api, const GemmShape& s, wire::DataType a,
                    wire::DataType b, wire::DataType c, wire::DataType compute) {
  ApiCall call;
  if (cublasStatus_t st = check_gemm(h, s)) return st;
  // A device-side beta (CUBLAS_POINTER_MODE_DEVICE) is not read here: taken as zero.
  const bool accumulate =
      h->pointer_mode == CUBLAS_POINTER_MODE_HOST && nonzero_scalar(s.beta, compute, s.beta_parts);
  submit_gemm(handle_stream(h), api, s.m, s.n, s.k, s.batch, a, b, c, compute, s.ta != CUBLAS_OP_N,
              s.tb != CUBLAS_OP_N, 0, accumulate);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t typed_gemm(cublasHandle_t h, BlasApi api, const GemmShape& s, wire::DataType t) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return gemm(h, api, s, t, t, t, legacy_compute(t, h->math_mode));
}

// y = op(A) x with A m x n (column-major): an (m or n) x 1 x (n or m) product.
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, int lda, int incx,
                    int incy, wire::DataType t) {
  ApiCall call;
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_op(trans) || m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool t_op = trans != CUBLAS_OP_N;
  submit_gemm(handle_stream(h), BlasApi::kGemv, t_op ? n : m, 1, t_op ? m : n, 1, t, t, t,
              legacy_compute(t, h->math_mode), t_op, false, 0, false);
  return CUBLAS_STATUS_SUCCESS;
}

// x . y: a 1 x 1 x n product. With the host pointer mode the result is returned to the host,
// so the call waits for the stream (as cuBLAS does) and writes 0: values are not computed.
cublasStatus_t dot(cublasHandle_t h, int n, int incx, int incy, void* result, size_t result_bytes,
                   wire::DataType t) {
  ApiCall call;
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  (void)incx, (void)incy;  // any increment is legal, zero included
  CUstream_st* s = handle_stream(h);
  if (n > 0) submit_gemm(s, BlasApi::kDot, 1, 1, n, 1, t, t, t, t, false, false, 0, false);
  if (h->pointer_mode == CUBLAS_POINTER_MODE_HOST) {
    if (s->capture != nullptr) return CUBLAS_STATUS_NOT_SUPPORTED;
    const wire::StreamRef r{s->id, s->device, 0};
    Runtime::get().request(wire::RecordType::kStreamSync, &r, sizeof(r));
    std::fill_n(static_cast<char*>(result), result_bytes, 0);
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  ApiCall call;
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* h = new cublasContext();
  h->ordinal = current_device();
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  // cuBLAS drops a user workspace when the stream changes and falls back to its own pool.
  handle->workspace = nullptr;
  handle->workspace_bytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  // cuBLAS requires 256-byte alignment of a user workspace.
  if (workspace != nullptr && reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->workspace = workspace;
  handle->workspace_bytes = workspace == nullptr ? 0 : bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->atomics_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t* mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->atomics_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int target) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (target < 0) return CUBLAS_STATUS_INVALID_VALUE;
  handle->sm_count_target = target;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetSmCountTarget(cublasHandle_t handle, int* target) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (target == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *target = handle->sm_count_target;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *version = kCublasVersion;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION:
      *value = CUBLAS_VER_MAJOR;
      return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION:
      *value = CUBLAS_VER_MINOR;
      return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL:
      *value = CUBLAS_VER_PATCH;
      return CUBLAS_STATUS_SUCCESS;
    default:
      return CUBLAS_STATUS_INVALID_VALUE;
  }
}

size_t cublasGetCudartVersion(void) {
  return CUDART_VERSION;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    default:
      return cublasGetStatusName(status);
  }
}

// --- GEMM ---------------------------------------------------------------------------------

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float*,
                              const float*, int lda, const float*, int ldb, const float* beta,
                              float*, int ldc) {
  return typed_gemm(handle, BlasApi::kSgemm, {transa, transb, m, n, k, lda, ldb, ldc, 1, beta},
                    wire::DataType::kF32);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const double*,
                              const double*, int lda, const double*, int ldb, const double* beta,
                              double*, int ldc) {
  return typed_gemm(handle, BlasApi::kDgemm, {transa, transb, m, n, k, lda, ldb, ldc, 1, beta},
                    wire::DataType::kF64);
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const __half*,
                           const __half*, int lda, const __half*, int ldb, const __half* beta,
                           __half*, int ldc) {
  return typed_gemm(handle, BlasApi::kHgemm, {transa, transb, m, n, k, lda, ldb, ldc, 1, beta},
                    wire::DataType::kF16);
}

cublasStatus_t cublasCgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const cuComplex*,
                              const cuComplex*, int lda, const cuComplex*, int ldb,
                              const cuComplex* beta, cuComplex*, int ldc) {
  return gemm(handle, BlasApi::kCgemm, {transa, transb, m, n, k, lda, ldb, ldc, 1, beta, 2},
              wire::DataType::kUnknown, wire::DataType::kUnknown, wire::DataType::kUnknown,
              wire::DataType::kF32);
}

cublasStatus_t cublasZgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const cuDoubleComplex*,
                              const cuDoubleComplex*, int lda, const cuDoubleComplex*, int ldb,
                              const cuDoubleComplex* beta, cuDoubleComplex*, int ldc) {
  return gemm(handle, BlasApi::kZgemm, {transa, transb, m, n, k, lda, ldb, ldc, 1, beta, 2},
              wire::DataType::kUnknown, wire::DataType::kUnknown, wire::DataType::kUnknown,
              wire::DataType::kF64);
}

cublasStatus_t cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa,
                             cublasOperation_t transb, int m, int n, int k, const float*,
                             const void*, cudaDataType Atype, int lda, const void*,
                             cudaDataType Btype, int ldb, const float* beta, void*,
                             cudaDataType Ctype, int ldc) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  // Computes in fp32 whatever the storage types (TF32 under CUBLAS_TF32_TENSOR_OP_MATH).
  return gemm(handle, BlasApi::kSgemmEx, {transa, transb, m, n, k, lda, ldb, ldc, 1, beta},
              wire_type(Atype), wire_type(Btype), wire_type(Ctype),
              legacy_compute(wire::DataType::kF32, handle->math_mode));
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void*, const void*,
                            cudaDataType Atype, int lda, const void*, cudaDataType Btype, int ldb,
                            const void* beta, void*, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm(handle, BlasApi::kGemmEx, {transa, transb, m, n, k, lda, ldb, ldc, 1, beta},
              wire_type(Atype), wire_type(Btype), wire_type(Ctype), wire_compute(computeType));
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void*, const void*, cudaDataType Atype, int lda, long long int, const void*,
    cudaDataType Btype, int ldb, long long int, const void* beta, void*, cudaDataType Ctype,
    int ldc, long long int, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm(handle, BlasApi::kGemmStridedBatchedEx,
              {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta}, wire_type(Atype),
              wire_type(Btype), wire_type(Ctype), wire_compute(computeType));
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void*,
                                   const void* const[], cudaDataType Atype, int lda,
                                   const void* const[], cudaDataType Btype, int ldb,
                                   const void* beta, void* const[], cudaDataType Ctype, int ldc,
                                   int batchCount, cublasComputeType_t computeType,
                                   cublasGemmAlgo_t) {
  return gemm(handle, BlasApi::kGemmBatchedEx,
              {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta}, wire_type(Atype),
              wire_type(Btype), wire_type(Ctype), wire_compute(computeType));
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float*, const float*, int lda, long long int,
                                         const float*, int ldb, long long int, const float* beta,
                                         float*, int ldc, long long int, int batchCount) {
  return typed_gemm(handle, BlasApi::kSgemmStridedBatched,
                    {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta},
                    wire::DataType::kF32);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const double*, const double*, int lda, long long int,
                                         const double*, int ldb, long long int, const double* beta,
                                         double*, int ldc, long long int, int batchCount) {
  return typed_gemm(handle, BlasApi::kDgemmStridedBatched,
                    {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta},
                    wire::DataType::kF64);
}

cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const __half*, const __half*, int lda, long long int,
                                         const __half*, int ldb, long long int, const __half* beta,
                                         __half*, int ldc, long long int, int batchCount) {
  return typed_gemm(handle, BlasApi::kHgemmStridedBatched,
                    {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta},
                    wire::DataType::kF16);
}

cublasStatus_t cublasCgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const cuComplex*, const cuComplex*, int lda, long long int,
                                         const cuComplex*, int ldb, long long int,
                                         const cuComplex* beta, cuComplex*, int ldc, long long int,
                                         int batchCount) {
  return gemm(handle, BlasApi::kCgemmStridedBatched,
              {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta, 2},
              wire::DataType::kUnknown, wire::DataType::kUnknown, wire::DataType::kUnknown,
              wire::DataType::kF32);
}

cublasStatus_t cublasZgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const cuDoubleComplex*, const cuDoubleComplex*, int lda,
                                         long long int, const cuDoubleComplex*, int ldb,
                                         long long int, const cuDoubleComplex* beta,
                                         cuDoubleComplex*, int ldc, long long int, int batchCount) {
  return gemm(handle, BlasApi::kZgemmStridedBatched,
              {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta, 2},
              wire::DataType::kUnknown, wire::DataType::kUnknown, wire::DataType::kUnknown,
              wire::DataType::kF64);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const float*,
                                  const float* const[], int lda, const float* const[], int ldb,
                                  const float* beta, float* const[], int ldc, int batchCount) {
  return typed_gemm(handle, BlasApi::kSgemmBatched,
                    {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta},
                    wire::DataType::kF32);
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const double*,
                                  const double* const[], int lda, const double* const[], int ldb,
                                  const double* beta, double* const[], int ldc, int batchCount) {
  return typed_gemm(handle, BlasApi::kDgemmBatched,
                    {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta},
                    wire::DataType::kF64);
}

cublasStatus_t cublasHgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const __half*,
                                  const __half* const[], int lda, const __half* const[], int ldb,
                                  const __half* beta, __half* const[], int ldc, int batchCount) {
  return typed_gemm(handle, BlasApi::kHgemmBatched,
                    {transa, transb, m, n, k, lda, ldb, ldc, batchCount, beta},
                    wire::DataType::kF16);
}

// --- Level 1 and 2 ------------------------------------------------------------------------

cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                              const float*, const float*, int lda, const float*, int incx,
                              const float*, float*, int incy) {
  return gemv(handle, trans, m, n, lda, incx, incy, wire::DataType::kF32);
}

cublasStatus_t cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                              const double*, const double*, int lda, const double*, int incx,
                              const double*, double*, int incy) {
  return gemv(handle, trans, m, n, lda, incx, incy, wire::DataType::kF64);
}

cublasStatus_t cublasSdot_v2(cublasHandle_t handle, int n, const float*, int incx, const float*,
                             int incy, float* result) {
  return dot(handle, n, incx, incy, result, sizeof(float), wire::DataType::kF32);
}

cublasStatus_t cublasDdot_v2(cublasHandle_t handle, int n, const double*, int incx, const double*,
                             int incy, double* result) {
  return dot(handle, n, incx, incy, result, sizeof(double), wire::DataType::kF64);
}

cublasStatus_t cublasDotEx(cublasHandle_t handle, int n, const void*, cudaDataType xType, int incx,
                           const void*, cudaDataType, int incy, void* result,
                           cudaDataType resultType, cudaDataType) {
  size_t bytes = 0;
  switch (resultType) {
    case CUDA_R_16F:
    case CUDA_R_16BF:
      bytes = 2;
      break;
    case CUDA_R_32F:
      bytes = 4;
      break;
    case CUDA_R_64F:
    case CUDA_C_32F:
      bytes = 8;
      break;
    case CUDA_C_64F:
      bytes = 16;
      break;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return dot(handle, n, incx, incy, result, bytes, wire_type(xType));
}

}  // extern "C"
