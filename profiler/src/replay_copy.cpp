// A copy signature replayed with cudaMemcpyAsync between scratch buffers: device memory from
// cudaMalloc, pinned host memory from cudaMallocHost, pageable host memory from the C heap.
#include <cstdlib>
#include <memory>

#include "phantora/kernels/op_desc.hpp"
#include "replay.hpp"

namespace phantora::profiler {
namespace {

// Host memory of either kind, freed by the allocator that made it.
class HostBuffer {
 public:
  HostBuffer(const CudaApi& api, size_t bytes, bool pinned) : api_(api), pinned_(pinned) {
    if (pinned) {
      check(api, api.malloc_host(&ptr_, bytes == 0 ? 1 : bytes), "cudaMallocHost");
    } else {
      ptr_ = std::calloc(bytes == 0 ? 1 : bytes, 1);  // calloc: the pages are touched once
      if (ptr_ == nullptr) throw std::runtime_error("out of host memory for a pageable buffer");
    }
  }
  ~HostBuffer() {
    if (pinned_) {
      api_.free_host(ptr_);
    } else {
      std::free(ptr_);
    }
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  const CudaApi& api_;
  bool pinned_;
  void* ptr_ = nullptr;
};

class CopyReplay : public Replay {
 public:
  CopyReplay(const CudaApi& api, const kernels::CopyDesc& d) : api_(api), bytes_(d.bytes) {
    using wire::CopyKind;
    const bool src_host = d.kind == CopyKind::kHostToDevice || d.kind == CopyKind::kHostToHost;
    const bool dst_host = d.kind == CopyKind::kDeviceToHost || d.kind == CopyKind::kHostToHost;
    if (src_host) {
      host_src_ = std::make_unique<HostBuffer>(api, d.bytes, d.pinned_host);
    } else {
      dev_src_ = std::make_unique<DeviceBuffer>(api, d.bytes);
    }
    if (dst_host) {
      host_dst_ = std::make_unique<HostBuffer>(api, d.bytes, d.pinned_host);
    } else {
      dev_dst_ = std::make_unique<DeviceBuffer>(api, d.bytes);
    }
    kind_ = src_host ? (dst_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                     : (dst_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
  }

  void launch(cudaStream_t stream) override {
    void* dst = host_dst_ ? host_dst_->get() : dev_dst_->get();
    const void* src = host_src_ ? host_src_->get() : dev_src_->get();
    check(api_, api_.memcpy_async(dst, src, bytes_, kind_, stream), "cudaMemcpyAsync");
  }

 private:
  const CudaApi& api_;
  size_t bytes_;
  cudaMemcpyKind kind_ = cudaMemcpyDeviceToDevice;
  std::unique_ptr<HostBuffer> host_src_, host_dst_;
  std::unique_ptr<DeviceBuffer> dev_src_, dev_dst_;
};

}  // namespace

ReplayChoice make_copy_replay(const CudaApi& api, std::string_view signature) {
  const auto d = kernels::parse_copy_signature(signature);
  if (!d) return {nullptr, "not a canonical copy signature"};
  if (d->kind == wire::CopyKind::kPeer) {
    return {nullptr, "a peer copy needs two GPUs; the measurer uses one"};
  }
  return {std::make_unique<CopyReplay>(api, *d), {}};
}

}  // namespace phantora::profiler
