// Compute beside a collective, the way FSDP and DDP overlap them: one process drives every GPU
// of the host (ncclCommInitAll). GPU 0 times `reps` launches of a kernel with one CTA per SM on
// its compute stream with CUDA events, first alone, then right after a 1 GiB all-reduce has been
// launched on every GPU's NCCL stream (the all-reduce outlasts the kernels). With -g the kernel
// is instead a thin bf16 cuBLAS GEMM, 8192 x 8192 x 64, whose 134 MB output makes it
// memory-bound: it shares HBM bandwidth with the all-reduce's copies. Prints
//   <sms> <alone_us> <beside_us>
//
//   overlap [-r REPS] [-g]
#include <cublas_v2.h>

#include <vector>

#include "common.cuh"

__global__ void spin(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 1.0001f + 1.0f;
}

int main(int argc, char** argv) {
  int reps = 20;
  bool gemm = false;
  for (int opt; (opt = getopt(argc, argv, "r:g")) != -1;) {
    if (opt == 'r') {
      reps = std::atoi(optarg);
    } else if (opt == 'g') {
      gemm = true;
    } else {
      return 2;
    }
  }
  int gpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&gpus));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const size_t bytes = size_t{1} << 30;
  std::vector<ncclComm_t> comms(gpus);
  NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, nullptr));
  std::vector<cudaStream_t> nccl_streams(gpus);
  std::vector<void*> bufs(gpus);
  for (int g = 0; g < gpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamCreateWithFlags(&nccl_streams[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&bufs[g], bytes));
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t compute;
  CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  const int threads = 256, n = sms * threads;
  float* x = nullptr;
  CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));
  // The thin GEMM's operands: A 8192 x 64, B 64 x 8192, C 8192 x 8192, bf16, column-major.
  const int gm = 8192, gk = 64;
  cublasHandle_t blas = nullptr;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  if (gemm) {
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) return 1;
    if (cublasSetStream(blas, compute) != CUBLAS_STATUS_SUCCESS) return 1;
    CUDA_CHECK(cudaMalloc(&a, size_t{gm} * gk * 2));
    CUDA_CHECK(cudaMalloc(&b, size_t{gk} * gm * 2));
    CUDA_CHECK(cudaMalloc(&c, size_t{gm} * gm * 2));
  }
  const float one = 1.0f, zero = 0.0f;
  auto launch = [&] {
    if (!gemm) {
      spin<<<sms, threads, 0, compute>>>(x, n);
      return;
    }
    if (cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, gm, gm, gk, &one, a, CUDA_R_16BF, gm, b,
                     CUDA_R_16BF, gk, &zero, c, CUDA_R_16BF, gm, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasGemmEx failed\n");
      std::exit(1);
    }
  };
  cudaEvent_t begin, end;
  CUDA_CHECK(cudaEventCreate(&begin));
  CUDA_CHECK(cudaEventCreate(&end));
  auto timed_kernels = [&] {
    CUDA_CHECK(cudaEventRecord(begin, compute));
    for (int r = 0; r < reps; ++r) launch();
    CUDA_CHECK(cudaEventRecord(end, compute));
    CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    return ms * 1000.0;
  };
  const double alone_us = timed_kernels();
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < gpus; ++g) {
    NCCL_CHECK(ncclAllReduce(bufs[g], bufs[g], bytes / sizeof(float), ncclFloat, ncclSum, comms[g],
                             nccl_streams[g]));
  }
  NCCL_CHECK(ncclGroupEnd());
  CUDA_CHECK(cudaSetDevice(0));
  const double beside_us = timed_kernels();
  for (int g = 0; g < gpus; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaStreamSynchronize(nccl_streams[g]));
  }
  std::printf("%d %.3f %.3f\n", sms, alone_us, beside_us);
  for (int g = 0; g < gpus; ++g) NCCL_CHECK(ncclCommDestroy(comms[g]));
  if (blas != nullptr) cublasDestroy(blas);
  return 0;
}
