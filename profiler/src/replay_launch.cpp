// A recorded launch made to run again: the kernel from its saved image, its parameters as the
// job passed them, every device address among them moved to a zeroed scratch buffer of the
// allocation it pointed into (at the same offset). docs/kernels-db.md, "Measuring".
#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "recorded_launches.hpp"
#include "replay.hpp"

namespace phantora::profiler {
namespace {

// Allocations up to this size are replayed whole; a larger one (an expandable segment's
// reservation spans much of the GPU) from its lowest referenced offset to this far past its
// highest.
constexpr uint64_t kWholeAllocation = uint64_t{1} << 30;
constexpr uint64_t kAlignment = 512;
// Kernels with more dynamic shared memory than this must opt in (cuFuncSetAttribute).
constexpr uint64_t kDefaultSharedLimit = 48 * 1024;

class LaunchReplay : public Replay {
 public:
  LaunchReplay(const CudaApi& api, CUfunction f, const LaunchRecord& r) : api_(api), f_(f), r_(r) {}

  // Scratch buffers and parameter bytes; the reason when the record cannot be replayed.
  std::string prepare(const std::vector<std::pair<size_t, size_t>>& layout) {
    if (layout.size() != r_.params.size()) {
      return fmt::format("the kernel has {} parameters and the record {}", layout.size(),
                         r_.params.size());
    }
    for (size_t i = 0; i < layout.size(); ++i) {
      const size_t size = layout[i].second;
      if (r_.params[i].bytes.size() < size) {
        return fmt::format("parameter {} has {} bytes and {} were recorded", i, size,
                           r_.params[i].bytes.size());
      }
      bytes_.push_back(r_.params[i].bytes.substr(0, size));
    }
    std::vector<uint64_t> low(r_.allocations.size(), UINT64_MAX), high(r_.allocations.size(), 0);
    for (const RecordedPointer& p : r_.pointers) {
      low[p.allocation] = std::min(low[p.allocation], p.at);
      high[p.allocation] = std::max(high[p.allocation], p.at);
    }
    std::vector<uint64_t> from(r_.allocations.size(), 0);
    for (size_t a = 0; a < r_.allocations.size(); ++a) {
      const uint64_t size = r_.allocations[a];
      uint64_t bytes = size;
      if (size > kWholeAllocation && low[a] != UINT64_MAX) {
        from[a] = low[a] / kAlignment * kAlignment;
        bytes = std::min(size - from[a], high[a] - from[a] + kWholeAllocation);
      }
      buffers_.push_back(std::make_unique<DeviceBuffer>(api_, bytes));
    }
    for (const RecordedPointer& p : r_.pointers) {
      if (p.offset + 8 > bytes_[p.param].size())
        continue;  // past the parameter: not one of its words
      const uint64_t address =
          reinterpret_cast<uint64_t>(buffers_[p.allocation]->get()) + (p.at - from[p.allocation]);
      std::memcpy(bytes_[p.param].data() + p.offset, &address, 8);
    }
    for (std::string& b : bytes_) params_.push_back(b.data());
    if (r_.shared_mem > kDefaultSharedLimit) {
      check(api_,
            api_.cu_func_set_attribute(f_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(r_.shared_mem)),
            "cuFuncSetAttribute (dynamic shared memory)");
    }
    return {};
  }

  void launch(cudaStream_t stream) override {
    check(api_,
          api_.cu_launch_kernel(f_, r_.grid[0], r_.grid[1], r_.grid[2], r_.block[0], r_.block[1],
                                r_.block[2], static_cast<unsigned>(r_.shared_mem),
                                reinterpret_cast<CUstream>(stream),
                                params_.empty() ? nullptr : params_.data(), nullptr),
          "cuLaunchKernel");
  }

 private:
  const CudaApi& api_;
  CUfunction f_;
  const LaunchRecord& r_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
  std::vector<std::string> bytes_;
  std::vector<void*> params_;
};

}  // namespace

ReplayChoice make_launch_replay(const CudaApi& api, RecordedLaunches& launches,
                                const LaunchRecord& r) {
  if (r.image.empty()) return {nullptr, "the run did not know the image of the kernel's code"};
  if (api.cu_func_get_param_info == nullptr) {
    return {nullptr, "the driver has no cuFuncGetParamInfo (CUDA 12.4 or later is needed)"};
  }
  const CUfunction f = launches.function(r);
  // Offsets and sizes of the kernel's parameters, as its image states them.
  std::vector<std::pair<size_t, size_t>> layout;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (api.cu_func_get_param_info(f, i, &offset, &size) != CUDA_SUCCESS) break;
    layout.emplace_back(offset, size);
  }
  auto replay = std::make_unique<LaunchReplay>(api, f, r);
  if (std::string why = replay->prepare(layout); !why.empty()) return {nullptr, std::move(why)};
  return {std::move(replay), {}};
}

}  // namespace phantora::profiler
