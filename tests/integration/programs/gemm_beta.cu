// Each legacy cuBLAS GEMM entry point called twice on one shape, first with beta = 0 and then
// with a non-zero beta (for the complex types, beta = i: only its imaginary part is non-zero).
// Entry point number e uses m = 64 + e, so the run's GEMM signatures tell them apart; check.py
// (case gemm_beta) expects beta=0 and beta=1 for every m.
#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include "check.cuh"

#define BLAS(x)                                           \
  do {                                                    \
    if ((x) != CUBLAS_STATUS_SUCCESS) {                   \
      std::printf("FAILED %s (line %d)\n", #x, __LINE__); \
      std::exit(1);                                       \
    }                                                     \
  } while (0)

int main() {
  cublasHandle_t h;
  BLAS(cublasCreate(&h));
  const int n = 32, k = 16, batch = 2;
  void *a, *b, *c;
  CHECK(cudaMalloc(&a, 1 << 20));
  CHECK(cudaMalloc(&b, 1 << 20));
  CHECK(cudaMalloc(&c, 1 << 20));
  // Device arrays of matrix pointers for the pointer-array batched calls (never read here).
  void** arrays;
  CHECK(cudaMalloc(&arrays, 3 * batch * sizeof(void*)));
  void* const* pa = arrays;
  void* const* pb = arrays + batch;
  void* const* pc = arrays + 2 * batch;
  const float f[2] = {1, 0}, f0[2] = {0, 0}, fi[2] = {0, 1};
  const double d[2] = {1, 0}, d0[2] = {0, 0}, di[2] = {0, 1};
  const __half h1 = __float2half(1.0f), h0 = __float2half(0.0f);
  const auto N = CUBLAS_OP_N;
  for (int nonzero = 0; nonzero < 2; ++nonzero) {
    const float* bf = nonzero ? f : f0;
    const double* bd = nonzero ? d : d0;
    const __half* bh = nonzero ? &h1 : &h0;
    const cuComplex* bc = reinterpret_cast<const cuComplex*>(nonzero ? fi : f0);
    const cuDoubleComplex* bz = reinterpret_cast<const cuDoubleComplex*>(nonzero ? di : d0);
    int m = 64;
    BLAS(cublasSgemm(h, N, N, m++, n, k, f, (float*)a, 128, (float*)b, k, bf, (float*)c, 128));
    BLAS(cublasDgemm(h, N, N, m++, n, k, d, (double*)a, 128, (double*)b, k, bd, (double*)c, 128));
    BLAS(cublasHgemm(h, N, N, m++, n, k, &h1, (__half*)a, 128, (__half*)b, k, bh, (__half*)c, 128));
    BLAS(cublasCgemm(h, N, N, m++, n, k, (const cuComplex*)f, (cuComplex*)a, 128, (cuComplex*)b, k,
                     bc, (cuComplex*)c, 128));
    BLAS(cublasZgemm(h, N, N, m++, n, k, (const cuDoubleComplex*)d, (cuDoubleComplex*)a, 128,
                     (cuDoubleComplex*)b, k, bz, (cuDoubleComplex*)c, 128));
    BLAS(cublasSgemmEx(h, N, N, m++, n, k, f, a, CUDA_R_16BF, 128, b, CUDA_R_16BF, k, bf, c,
                       CUDA_R_16BF, 128));
    BLAS(cublasGemmEx(h, N, N, m++, n, k, f, a, CUDA_R_16BF, 128, b, CUDA_R_16BF, k, bf, c,
                      CUDA_R_16BF, 128, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    BLAS(cublasGemmBatchedEx(h, N, N, m++, n, k, f, (const void* const*)pa, CUDA_R_16BF, 128,
                             (const void* const*)pb, CUDA_R_16BF, k, bf, (void* const*)pc,
                             CUDA_R_16BF, 128, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    BLAS(cublasGemmStridedBatchedEx(h, N, N, m++, n, k, f, a, CUDA_R_16BF, 128, 0, b, CUDA_R_16BF,
                                    k, 0, bf, c, CUDA_R_16BF, 128, 0, batch, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
    BLAS(cublasSgemmStridedBatched(h, N, N, m++, n, k, f, (float*)a, 128, 0, (float*)b, k, 0, bf,
                                   (float*)c, 128, 0, batch));
    BLAS(cublasDgemmStridedBatched(h, N, N, m++, n, k, d, (double*)a, 128, 0, (double*)b, k, 0, bd,
                                   (double*)c, 128, 0, batch));
    BLAS(cublasHgemmStridedBatched(h, N, N, m++, n, k, &h1, (__half*)a, 128, 0, (__half*)b, k, 0,
                                   bh, (__half*)c, 128, 0, batch));
    BLAS(cublasCgemmStridedBatched(h, N, N, m++, n, k, (const cuComplex*)f, (cuComplex*)a, 128, 0,
                                   (cuComplex*)b, k, 0, bc, (cuComplex*)c, 128, 0, batch));
    BLAS(cublasZgemmStridedBatched(h, N, N, m++, n, k, (const cuDoubleComplex*)d,
                                   (cuDoubleComplex*)a, 128, 0, (cuDoubleComplex*)b, k, 0, bz,
                                   (cuDoubleComplex*)c, 128, 0, batch));
    BLAS(cublasSgemmBatched(h, N, N, m++, n, k, f, (const float* const*)pa, 128,
                            (const float* const*)pb, k, bf, (float* const*)pc, 128, batch));
    BLAS(cublasDgemmBatched(h, N, N, m++, n, k, d, (const double* const*)pa, 128,
                            (const double* const*)pb, k, bd, (double* const*)pc, 128, batch));
    BLAS(cublasHgemmBatched(h, N, N, m++, n, k, &h1, (const __half* const*)pa, 128,
                            (const __half* const*)pb, k, bh, (__half* const*)pc, 128, batch));
    if (nonzero == 0) std::printf("entry_points %d\n", m - 64);
  }
  CHECK(cudaDeviceSynchronize());
  BLAS(cublasDestroy(h));
  return 0;
}
