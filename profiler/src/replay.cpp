#include "replay.hpp"

#include "phantora/kernels/op_desc.hpp"
#include "recorded_launches.hpp"

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

bool replayed_by_library_call(std::string_view signature) {
  const std::string_view family = kernels::signature_family(signature);
  if (family == "gemm" || family == "copy") return true;
  const auto memory = kernels::parse_memory_signature(signature);
  return memory && kernels::is_memset(*memory);
}

ReplayChoice make_replay(const CudaApi& api, std::string_view signature,
                         RecordedLaunches* launches) {
  const std::string_view family = kernels::signature_family(signature);
  if (family == "gemm") return make_gemm_replay(api, signature);
  if (family == "copy") return make_copy_replay(api, signature);
  if (replayed_by_library_call(signature)) return make_memory_replay(api, signature);
  if (family.empty()) return {nullptr, "not a canonical signature (docs/kernels-db.md)"};
  // The other families' signatures name a shape or a kernel, not a launch: the run's recorded
  // launch of that signature is what runs.
  if (const LaunchRecord* r =
          launches != nullptr ? launches->find(std::string(signature)) : nullptr) {
    return make_launch_replay(api, *launches, *r);
  }
  if (family == "mem") return make_memory_replay(api, signature);
  return {nullptr,
          "no launch was recorded for it (a job profiled with `db profile -- COMMAND` records "
          "its launches)"};
}

}  // namespace phantora::profiler
