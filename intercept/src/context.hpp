// Per-process CUDA runtime state of the virtual GPU: visible devices, the current device of
// each thread, stream and event objects, the sticky last error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "phantora/protocol.hpp"
#include "runtime.hpp"

// The runtime header only forward-declares these; the shim owns their layout.
struct CaptureState;

struct CUstream_st {
  uint64_t id = 0;
  int ordinal = 0;  // device ordinal as the process sees it
  int device = 0;   // physical device index on the host (what the daemon is told)
  unsigned flags = 0;
  int priority = 0;
  bool legacy = false;
  CaptureState* capture = nullptr;  // non-null while the stream records into a graph
  cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;
};

struct CUevent_st {
  uint64_t id = 0;
  unsigned flags = 0;
  int device = 0;
  bool recorded = false;
  // Captured record: the graph nodes the event stands for.
  CaptureState* capture = nullptr;
  std::vector<uint32_t> capture_nodes;
};

namespace phantora::shim {

int visible_device_count();
// Physical index of a visible ordinal, or -1.
int physical_device(int ordinal);
int current_device();  // ordinal
void set_current_device(int ordinal);

// Resolves the special handles (0, cudaStreamLegacy, cudaStreamPerThread). `per_thread_default`
// is true for the _ptsz/_ptds entry points, where 0 means the per-thread stream.
CUstream_st* resolve_stream(cudaStream_t stream, bool per_thread_default);
// The same, on device `ordinal` rather than the current one: the stream a library handle
// (cuBLAS, cuDNN, an NCCL communicator) was given, whose legacy default stream is its device's.
CUstream_st* resolve_stream_on(int ordinal, cudaStream_t stream);

// Records the error as the thread's last error (unless success) and returns it.
cudaError_t set_error(cudaError_t e);
cudaError_t take_last_error();
cudaError_t peek_last_error();

// Host time at which the current call is made.
inline SimTime now() {
  return Runtime::get().clock();
}

}  // namespace phantora::shim
