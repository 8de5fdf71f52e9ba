// The driver's virtual-memory calls behind PyTorch's expandable segments, found the way
// PyTorch 2.6 and earlier find them: dlopen("libcuda.so.1") and dlsym by name (c10's
// DriverAPI), not cudaGetDriverEntryPoint. Reserve an address range, back it with two physical
// chunks of the allocation granularity, map them, make them accessible, use the memory, then
// unmap and release one chunk and free the range. Prints each step's figures for check.py.
#include <cuda.h>
#include <dlfcn.h>

#include "check.cuh"

template <typename F>
F find(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (f == nullptr) {
    std::printf("FAILED dlsym %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(f);
}

size_t used_bytes() {
  size_t free_b = 0, total = 0;
  CHECK(cudaMemGetInfo(&free_b, &total));
  return total - free_b;
}

int main() {
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));  // the primary context
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::printf("FAILED dlopen libcuda.so.1: %s\n", dlerror());
    return 1;
  }
  auto granularity =
      find<decltype(&cuMemGetAllocationGranularity)>(lib, "cuMemGetAllocationGranularity");
  auto reserve = find<decltype(&cuMemAddressReserve)>(lib, "cuMemAddressReserve");
  auto address_free = find<decltype(&cuMemAddressFree)>(lib, "cuMemAddressFree");
  auto create = find<decltype(&cuMemCreate)>(lib, "cuMemCreate");
  auto release = find<decltype(&cuMemRelease)>(lib, "cuMemRelease");
  auto map = find<decltype(&cuMemMap)>(lib, "cuMemMap");
  auto unmap = find<decltype(&cuMemUnmap)>(lib, "cuMemUnmap");
  auto set_access = find<decltype(&cuMemSetAccess)>(lib, "cuMemSetAccess");

  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t chunk = 0;
  CU_CHECK(granularity(&chunk, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  std::printf("granularity %zu\n", chunk);

  const size_t before = used_bytes();
  CUdeviceptr base = 0;
  CU_CHECK(reserve(&base, 8 * chunk, 0, 0, 0));
  std::printf("reserved_used %zu\n", used_bytes() - before);  // addresses only

  CUmemGenericAllocationHandle h[2];
  for (int i = 0; i < 2; ++i) {
    CU_CHECK(create(&h[i], chunk, &prop, 0));
    CU_CHECK(map(base + i * chunk, chunk, 0, h[i], 0));
  }
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(set_access(base, 2 * chunk, &access, 1));
  std::printf("mapped_used %zu\n", used_bytes() - before);
  CHECK(cudaMemset(reinterpret_cast<void*>(base), 0, 2 * chunk));
  CHECK(cudaDeviceSynchronize());

  // One chunk unmapped and released: its memory goes back to the device.
  CU_CHECK(unmap(base + chunk, chunk));
  CU_CHECK(release(h[1]));
  std::printf("after_release_used %zu\n", used_bytes() - before);
  CU_CHECK(unmap(base, chunk));
  CU_CHECK(release(h[0]));
  CU_CHECK(address_free(base, 8 * chunk));
  std::printf("after_free_used %zu\n", used_bytes() - before);
  std::printf("done\n");
  return 0;
}
