// Managed memory beside device and pinned memory: cudaMallocManaged's range is real host memory
// (the host reads what it wrote), not counted against the GPU, and released by cudaFree, which
// is what programs call on it (llm.c frees its managed all-reduce scalar so at exit). Each
// allocator's free refuses the other's memory, as CUDA's do.
#include "check.cuh"

int main() {
  void* device = nullptr;
  CHECK(cudaMalloc(&device, 64u << 20));

  float* managed = nullptr;
  CHECK(cudaMallocManaged(&managed, 256u << 20));
  for (int i = 0; i < 1024; ++i) managed[i] = static_cast<float>(i);
  double sum = 0;
  for (int i = 0; i < 1024; ++i) sum += managed[i];
  std::printf("managed sum %.0f\n", sum);
  CHECK(cudaMemcpy(device, managed, 4096, cudaMemcpyDefault));

  std::printf("cudaFreeHost(managed) %s\n", cudaGetErrorName(cudaFreeHost(managed)));
  cudaGetLastError();
  std::printf("cudaFree(managed) %s\n", cudaGetErrorName(cudaFree(managed)));
  std::printf("cudaFree(managed) again %s\n", cudaGetErrorName(cudaFree(managed)));
  cudaGetLastError();

  void* pinned = nullptr;
  CHECK(cudaHostAlloc(&pinned, 1u << 20, cudaHostAllocDefault));
  std::printf("cudaFree(pinned) %s\n", cudaGetErrorName(cudaFree(pinned)));
  cudaGetLastError();
  std::printf("cudaFreeHost(pinned) %s\n", cudaGetErrorName(cudaFreeHost(pinned)));
  CHECK(cudaFree(device));
  std::printf("done\n");
  return 0;
}
