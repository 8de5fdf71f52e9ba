// Built with nvcc's default, the CUDA runtime linked statically (libcudart_static): its first
// call asks the driver for entry points, which the simulator cannot answer. The process must
// die naming the cause and the build flag that fixes it.
#include "check.cuh"

int main() {
  std::printf("before\n");
  std::fflush(stdout);
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  std::printf("after %s %d\n", cudaGetErrorName(e), devices);  // must never be reached
  return 0;
}
