// The stream-ordered allocator and memory pools: allocations count against the device's
// capacity and the pool's usage, attributes read back what was set.
#include <cstdint>

#include "check.cuh"

int main() {
  size_t free0 = 0, total = 0;
  CHECK(cudaMemGetInfo(&free0, &total));
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  cudaMemPool_t current;
  CHECK(cudaDeviceGetMemPool(&current, 0));
  std::printf("default_is_current %d\n", pool == current ? 1 : 0);
  uint64_t threshold = 1ull << 30;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  uint64_t read_back = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &read_back));
  std::printf("threshold %llu\n", static_cast<unsigned long long>(read_back));

  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void* a = nullptr;
  void* b = nullptr;
  CHECK(cudaMallocAsync(&a, 64ull << 20, s));
  CHECK(cudaMallocFromPoolAsync(&b, 32ull << 20, pool, s));
  uint64_t used = 0, high = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  std::printf("used_two %llu\n", static_cast<unsigned long long>(used));
  size_t free1 = 0;
  CHECK(cudaMemGetInfo(&free1, &total));
  std::printf("device_used %llu\n", static_cast<unsigned long long>(free0 - free1));
  CHECK(cudaFreeAsync(a, s));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  std::printf("used_after_free %llu\nhigh %llu\n", static_cast<unsigned long long>(used),
              static_cast<unsigned long long>(high));
  // Past the capacity, the stream-ordered allocator fails like cudaMalloc.
  void* huge = nullptr;
  const cudaError_t e = cudaMallocAsync(&huge, total, s);
  std::printf("over_capacity %s\n", cudaGetErrorName(e));
  (void)cudaGetLastError();
  // A pool of one's own on the device.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t mine;
  CHECK(cudaMemPoolCreate(&mine, &props));
  CHECK(cudaDeviceSetMemPool(0, mine));
  void* c = nullptr;
  CHECK(cudaMallocAsync(&c, 16ull << 20, s));
  CHECK(cudaMemPoolGetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &used));
  std::printf("own_pool_used %llu\n", static_cast<unsigned long long>(used));
  CHECK(cudaFreeAsync(c, s));
  CHECK(cudaFreeAsync(b, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaDeviceSetMemPool(0, pool));
  CHECK(cudaMemPoolDestroy(mine));
  std::printf("destroy_default %s\n", cudaGetErrorName(cudaMemPoolDestroy(pool)));
  return 0;
}
