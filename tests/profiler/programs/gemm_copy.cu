// The profiled job of tests/profiler/check.py: one pinned 1 MiB host-to-device copy and one
// bf16 GEMM (256 x 512 x 128, A transposed) through cuBLAS, then a synchronisation. Under
// `phantora db profile` these are the two signatures the run records and the stand-in measures.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "check.cuh"

int main() {
  const size_t bytes = 1 << 20;
  void *host = nullptr, *dev = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&dev, bytes));
  CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
  const int m = 256, n = 512, k = 128;
  CHECK(cudaMalloc(&a, size_t{m} * k * 2));
  CHECK(cudaMalloc(&b, size_t{k} * n * 2));
  CHECK(cudaMalloc(&c, size_t{m} * n * 2));
  cublasHandle_t handle = nullptr;
  CHECK(cublasCreate(&handle));
  const float alpha = 1, beta = 0;
  CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_16BF, k, b,
                     CUDA_R_16BF, k, &beta, c, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT));
  CHECK(cudaDeviceSynchronize());
  CHECK(cublasDestroy(handle));
  std::printf("gemm_copy done\n");
  return 0;
}
