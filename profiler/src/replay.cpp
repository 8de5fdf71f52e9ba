#include "replay.hpp"

#include <algorithm>

#include "phantora/kernels/op_desc.hpp"
#include "phantora/profiler/random_elements.hpp"
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

void fill_normal(const CudaApi& api, const DeviceBuffer& buffer, kernels::DType type, size_t count,
                 uint64_t seed) {
  // A million elements repeat: every tile a GEMM works on still sees random values, and the
  // host draws them once, not once per element of a matrix of hundreds of megabytes.
  constexpr size_t kBlockElements = size_t{1} << 20;
  const std::vector<std::byte> block = normal_elements(type, std::min(count, kBlockElements), seed);
  const size_t bytes = count * kernels::dtype_bytes(type);
  auto* device = static_cast<std::byte*>(buffer.get());
  for (size_t done = 0; done < bytes; done += block.size()) {
    check(api,
          api.memcpy_async(device + done, block.data(), std::min(block.size(), bytes - done),
                           cudaMemcpyHostToDevice, nullptr),
          "cudaMemcpyAsync (scratch fill)");
  }
  check(api, api.stream_synchronize(nullptr), "cudaStreamSynchronize (scratch fill)");
}

void fill_gemm_operands(const CudaApi& api, const kernels::GemmDesc& d, const DeviceBuffer& a,
                        const DeviceBuffer& b, const DeviceBuffer& c) {
  fill_normal(api, a, d.a, d.m * d.k * d.batch, 1);
  fill_normal(api, b, d.b, d.k * d.n * d.batch, 2);
  if (d.accumulate) fill_normal(api, c, d.c, d.m * d.n * d.batch, 3);
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
