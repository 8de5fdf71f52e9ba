// Uses cuDNN as PyTorch does before its first cuDNN call: a handle on a stream (the shim stands
// in for these, and for cuDNN's graph API: attention), then a legacy descriptor call, the start
// of a convolution, which the shim does not implement: the process must die naming the entry
// point and what to do (intercept/src/unimplemented.cpp).
#include <cudnn.h>

#include "check.cuh"

int main() {
  cudnnHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));
  if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS ||
      cudnnSetStream(handle, stream) != CUDNN_STATUS_SUCCESS) {
    std::printf("cudnnCreate or cudnnSetStream failed\n");
    return 1;
  }
  cudaStream_t got = nullptr;
  std::printf("handle ok %d\n",
              cudnnGetStream(handle, &got) == CUDNN_STATUS_SUCCESS && got == stream);
  std::printf("before\n");
  std::fflush(stdout);
  cudnnTensorDescriptor_t tensor = nullptr;
  const cudnnStatus_t s = cudnnCreateTensorDescriptor(&tensor);
  std::printf("after %d\n", static_cast<int>(s));  // must never be reached
  return 0;
}
