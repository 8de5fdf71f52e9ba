#include "replay.hpp"

#include "phantora/kernels/op_desc.hpp"

namespace phantora::profiler {

DeviceBuffer::DeviceBuffer(const CudaApi& api, size_t bytes) : api_(api) {
  check(api, api.malloc(&ptr_, bytes == 0 ? 1 : bytes), "cudaMalloc (scratch buffer)");
  // Defined contents: a GEMM over uninitialised memory may meet NaNs and denormals, which some
  // GPUs run at a different speed.
  check(api, api.memset_async(ptr_, 0, bytes, nullptr), "cudaMemsetAsync (scratch buffer)");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) api_.free(ptr_);
}

ReplayChoice make_replay(const CudaApi& api, std::string_view signature) {
  const std::string_view family = kernels::signature_family(signature);
  if (family == "gemm") return make_gemm_replay(api, signature);
  if (family == "copy") return make_copy_replay(api, signature);
  // The other families' signatures name a shape, not a launch: the kernel, its arguments and
  // the library that chose it are not in the database's missing table.
  if (family == "attn") {
    return {nullptr, "attention replay (flash-attention kernels) is not implemented"};
  }
  if (family == "mem") return make_memory_replay(api, signature);
  if (family == "kernel") {
    return {nullptr,
            "replaying a kernel launch needs its recorded argument bytes, which a run does not "
            "record yet"};
  }
  return {nullptr, "not a canonical signature (docs/kernels-db.md)"};
}

}  // namespace phantora::profiler
