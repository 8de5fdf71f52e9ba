// A memset signature (`mem:op=memset,read=0,write=N`, what a run records for cudaMemset*)
// replayed with cudaMemsetAsync on a scratch buffer of N bytes.
#include "phantora/kernels/op_desc.hpp"
#include "replay.hpp"

namespace phantora::profiler {
namespace {

class MemsetReplay : public Replay {
 public:
  MemsetReplay(const CudaApi& api, uint64_t bytes)
      : api_(api), bytes_(bytes), buffer_(api, bytes) {}

  void launch(cudaStream_t stream) override {
    check(api_, api_.memset_async(buffer_.get(), 0, bytes_, stream), "cudaMemsetAsync");
  }

 private:
  const CudaApi& api_;
  size_t bytes_;
  DeviceBuffer buffer_;
};

}  // namespace

ReplayChoice make_memory_replay(const CudaApi& api, std::string_view signature) {
  const auto d = kernels::parse_memory_signature(signature);
  if (!d) return {nullptr, "not a canonical memory-operation signature"};
  if (!kernels::is_memset(*d)) {
    return {nullptr,
            "a memory-bound signature other than a memset names bytes moved, not the kernel that "
            "moved them, and no launch was recorded for it"};
  }
  return {std::make_unique<MemsetReplay>(api, d->bytes_written), {}};
}

}  // namespace phantora::profiler
