// Uses cuDNN as PyTorch does before its first cuDNN call: a handle on a stream and a legacy
// tensor descriptor (the shim stands in for these, for cuDNN's graph API: attention, and for its
// batch normalization), then a legacy call the shim does not implement (and PyTorch does not
// make), the start of a local response normalization: the process must die naming the entry
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
  // 2 x 3 x 4 x 5 halves, channels innermost: 240 bytes.
  cudnnTensorDescriptor_t tensor = nullptr;
  size_t bytes = 0;
  const bool tensor_ok = cudnnCreateTensorDescriptor(&tensor) == CUDNN_STATUS_SUCCESS &&
                         cudnnSetTensor4dDescriptor(tensor, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 2,
                                                    3, 4, 5) == CUDNN_STATUS_SUCCESS &&
                         cudnnGetTensorSizeInBytes(tensor, &bytes) == CUDNN_STATUS_SUCCESS &&
                         cudnnDestroyTensorDescriptor(tensor) == CUDNN_STATUS_SUCCESS;
  std::printf("tensor ok %d bytes %zu\n", tensor_ok, bytes);
  std::printf("before\n");
  std::fflush(stdout);
  cudnnLRNDescriptor_t lrn = nullptr;
  const cudnnStatus_t s = cudnnCreateLRNDescriptor(&lrn);
  std::printf("after %d\n", static_cast<int>(s));  // must never be reached
  return 0;
}
