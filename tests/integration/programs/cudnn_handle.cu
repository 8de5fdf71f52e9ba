// Creates a cuDNN handle, as PyTorch does before its first cuDNN convolution or attention call.
// The real libcudnn reaches the driver by itself, which the simulator does not stand in for: the
// process must die naming the library that called and what to do (intercept/src/unimplemented.cpp).
#include <cudnn.h>

#include "check.cuh"

int main() {
  std::printf("before\n");
  std::fflush(stdout);
  cudnnHandle_t handle = nullptr;
  const cudnnStatus_t s = cudnnCreate(&handle);
  std::printf("after %s\n", cudnnGetErrorString(s));  // must never be reached
  return 0;
}
