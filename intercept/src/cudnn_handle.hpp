// The cuDNN handle as the shim keeps it (cudnnHandle_t points at one): the stream the program
// set and the device current when it was created. Shared by the entry points that run work on
// a handle's stream (api_cudnn.cpp's graph execution, api_cudnn_batch_norm.cpp).
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

// The opaque handle type the header forward-declares; the shim owns its layout.
struct cudnnContext {
  cudaStream_t stream = nullptr;  // as set by the program; resolved at each execution
  int ordinal = 0;                // device current at cudnnCreate
};
