// The profiled job of tests/profiler/launch_replay.py: kernels of its own, which no model knows,
// launched the two ways jobs launch kernels. Through nvcc's registration (<<<>>>): axpy twice
// with the same arguments (one recorded launch), and scale with a struct holding a device pointer
// passed by value. Through the driver, as Triton does: the extern "C" kernel of the cubin named
// by argv[1], loaded with cuModuleLoadData, and its big_param with a 25 KB struct. The stand-in
// GPU checks the arguments each replay passes against the values below.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "check.cuh"

struct Span {
  float* data;
  long n;
};

__global__ void axpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

__global__ void scale(Span s, float a) {
  const long i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) s.data[i] *= a;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("usage: custom_kernels CUBIN\n");
    return 2;
  }
  const size_t bytes = 1 << 18;  // 65536 floats each
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  axpy<<<256, 256>>>(65536, 2.0f, x, y);
  axpy<<<256, 256>>>(65536, 2.0f, x, y);
  scale<<<8, 128>>>(Span{y + 1024, 1024}, 3.0f);
  CHECK(cudaGetLastError());

  std::ifstream in(argv[1], std::ios::binary);
  const std::string image{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (image.empty()) {
    std::printf("cannot read %s\n", argv[1]);
    return 1;
  }
  CUmodule module = nullptr;
  CUfunction f = nullptr;
  CHECK(cuModuleLoadData(&module, image.data()));
  CHECK(cuModuleGetFunction(&f, module, "triton_like"));
  float* p = x + 16;
  int n = 1000;
  void* params[] = {&p, &n};
  CHECK(cuLaunchKernel(f, 4, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  // A 25,608-byte struct parameter (CUDA 12.1's larger parameter limit), its pointer 128 bytes
  // into y.
  struct Big {
    float* p;
    char bytes[25600];
  };
  static Big big{};
  big.p = y + 32;
  int ten = 10;
  void* big_params[] = {&big, &ten};
  CUfunction g = nullptr;
  CHECK(cuModuleGetFunction(&g, module, "big_param"));
  CHECK(cuLaunchKernel(g, 1, 1, 1, 32, 1, 1, 0, nullptr, big_params, nullptr));
  CHECK(cudaDeviceSynchronize());
  std::printf("custom kernels done\n");
  return 0;
}
