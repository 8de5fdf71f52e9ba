// Device memory capacity: allocations past it fail with cudaErrorMemoryAllocation, smaller
// ones succeed, cudaMemGetInfo agrees, and each device has its own capacity.
#include "check.cuh"

constexpr size_t kGiB = size_t{1} << 30;

int main() {
  size_t free0 = 0, total = 0;
  CHECK(cudaMemGetInfo(&free0, &total));
  std::printf("total %zu\n", total);
  std::printf("free_initial %zu\n", free0);

  void* too_big = reinterpret_cast<void*>(1);
  const cudaError_t e = cudaMalloc(&too_big, total + 1);
  std::printf("over_capacity %s\n", cudaGetErrorName(e));
  std::printf("over_capacity_ptr_null %d\n", too_big == nullptr ? 1 : 0);
  std::printf("last_error %s\n", cudaGetErrorName(cudaGetLastError()));
  std::printf("last_error_cleared %s\n", cudaGetErrorName(cudaGetLastError()));

  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  CHECK(cudaMalloc(&a, 30 * kGiB));
  CHECK(cudaMalloc(&b, 30 * kGiB));
  size_t free1 = 0;
  CHECK(cudaMemGetInfo(&free1, nullptr));
  std::printf("free_after_60g %zu\n", free1);
  std::printf("third_30g %s\n", cudaGetErrorName(cudaMalloc(&c, 30 * kGiB)));
  (void)cudaGetLastError();

  // Another device is untouched.
  CHECK(cudaSetDevice(1));
  size_t free_dev1 = 0;
  CHECK(cudaMemGetInfo(&free_dev1, nullptr));
  std::printf("free_dev1 %zu\n", free_dev1);
  CHECK(cudaSetDevice(0));

  CHECK(cudaFree(a));
  size_t free2 = 0;
  CHECK(cudaMemGetInfo(&free2, nullptr));
  std::printf("free_after_free %zu\n", free2);
  std::printf("retry_30g %s\n", cudaGetErrorName(cudaMalloc(&c, 30 * kGiB)));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));

  // Exactly the capacity fits; one more byte does not.
  void* all = nullptr;
  std::printf("exact_capacity %s\n", cudaGetErrorName(cudaMalloc(&all, total)));
  void* one = nullptr;
  std::printf("one_more_byte %s\n", cudaGetErrorName(cudaMalloc(&one, 1)));
  (void)cudaGetLastError();
  size_t free3 = 1;
  CHECK(cudaMemGetInfo(&free3, nullptr));
  std::printf("free_full %zu\n", free3);
  CHECK(cudaFree(all));
  return 0;
}
