// One operation made to run for real: scratch buffers of its shape, and a launch the measurer
// can repeat on a stream. One file per family (replay_gemm.cpp, replay_gemm_lt.cpp,
// replay_copy.cpp, replay_memset.cpp, replay_launch.cpp); replay.cpp
// picks the family from the signature and says why a signature cannot be replayed.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "phantora/kernels/op_desc.hpp"
#include "phantora/profiler/cuda_api.hpp"

namespace phantora::profiler {

class Replay {
 public:
  virtual ~Replay() = default;
  // Enqueues the operation once on `stream`; throws std::runtime_error when the library fails.
  virtual void launch(cudaStream_t stream) = 0;
};

// Device memory that is freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer(const CudaApi& api, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  const CudaApi& api_;
  void* ptr_ = nullptr;
};

// Fills `buffer`'s first `count` elements of `type` with standard normal draws
// (random_elements.hpp): a block of them copied over and over, from the default stream, waited
// for. `seed` tells one operand's block from another's.
void fill_normal(const CudaApi& api, const DeviceBuffer& buffer, kernels::DType type, size_t count,
                 uint64_t seed);

// A GEMM's operands, filled so: A and B, and C when the signature accumulates into it.
void fill_gemm_operands(const CudaApi& api, const kernels::GemmDesc& d, const DeviceBuffer& a,
                        const DeviceBuffer& b, const DeviceBuffer& c);

struct ReplayChoice {
  std::unique_ptr<Replay> replay;  // null when the signature cannot be replayed
  std::string not_measurable;      // why not, when replay is null
};

class RecordedLaunches;
struct LaunchRecord;

// `launches`: what the run recorded (null: nothing); an attention, memory-bound or kernel
// signature is replayed as the launch recorded for it, when there is one.
ReplayChoice make_replay(const CudaApi& api, std::string_view signature,
                         RecordedLaunches* launches);

// Per family; each returns a null replay with the reason when the shape is outside what it does.
ReplayChoice make_gemm_replay(const CudaApi& api, std::string_view signature);
ReplayChoice make_copy_replay(const CudaApi& api, std::string_view signature);
// Memsets only (replay_memset.cpp); other memory-bound signatures name no launch.
ReplayChoice make_memory_replay(const CudaApi& api, std::string_view signature);
// A recorded launch (replay_launch.cpp).
ReplayChoice make_launch_replay(const CudaApi& api, RecordedLaunches& launches,
                                const LaunchRecord& r);
// A GEMM with a cuBLASLt epilogue (make_gemm_replay hands those over).
ReplayChoice make_gemm_lt_replay(const CudaApi& api, const kernels::GemmDesc& gemm);

}  // namespace phantora::profiler
