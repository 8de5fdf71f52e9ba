// Shared helpers of the memory entry points: page-locked host ranges and stream-ordered copies.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "context.hpp"

namespace phantora::shim {

bool is_pinned(const void* ptr, uint64_t bytes);
void add_pinned(void* ptr, uint64_t bytes, unsigned flags);
bool remove_pinned(void* ptr);
// cudaMallocManaged's ranges: real host memory, reachable from the host and the device alike,
// which cudaFree releases (and cudaFreeHost refuses).
void add_managed(void* ptr, uint64_t bytes);
bool remove_managed(void* ptr);
unsigned pinned_flags(const void* ptr);

// A copy of `bytes` on `stream`. `sync_api`: called as cudaMemcpy (not ...Async), which blocks
// the host for copies to or from it (CUDA's synchronisation rules; see the definition).
cudaError_t stream_copy(void* dst, const void* src, uint64_t bytes, cudaMemcpyKind kind,
                        CUstream_st* stream, bool sync_api);
// Allocates on the current device against its capacity and tells the daemon; returns
// cudaErrorMemoryAllocation past the capacity.
cudaError_t device_malloc(void** ptr, size_t size);
// Releases an address device_malloc returned; cudaErrorInvalidValue for anything else.
cudaError_t device_free(void* ptr);

cudaError_t stream_memset(void* dst, int value, uint64_t bytes, CUstream_st* stream);

}  // namespace phantora::shim
