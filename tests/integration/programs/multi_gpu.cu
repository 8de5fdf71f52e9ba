// One process drives every GPU of its host with cudaSetDevice: even devices run busy_a
// (100 us), odd ones busy_b (250 us), all submitted at once; then each device is synchronised.
// Device d of host h allocates (h * devices + d + 1) MiB.
#include <cstdlib>

#include "check.cuh"

__global__ void busy_a(float* p) { p[threadIdx.x] += 1; }
__global__ void busy_b(float* p) { p[threadIdx.x] *= 2; }

int main() {
  const char* host_env = std::getenv("PHANTORA_HOST");
  const int host = host_env ? std::atoi(host_env) : -1;
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  for (int dev = 0; dev < count; ++dev) {
    CHECK(cudaSetDevice(dev));
    float* p = nullptr;
    CHECK(cudaMalloc(&p, static_cast<size_t>(host * count + dev + 1) << 20));
    if (dev % 2 == 0) {
      busy_a<<<1, 32>>>(p);
    } else {
      busy_b<<<1, 32>>>(p);
    }
    CHECK(cudaGetLastError());
  }
  for (int dev = 0; dev < count; ++dev) {
    CHECK(cudaSetDevice(dev));
    CHECK(cudaDeviceSynchronize());
  }
  int current = -1;
  CHECK(cudaGetDevice(&current));
  std::printf("host %d devices %d current %d\n", host, count, current);
  return 0;
}
