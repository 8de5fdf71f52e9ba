// Kernel registration and launch through every path nvcc-generated code and libraries use:
// the <<<>>> stubs (__cudaPushCallConfiguration / __cudaPopCallConfiguration, then
// __cudaGetKernel + __cudaLaunchKernel in CUDA 13 or cudaLaunchKernel in CUDA 12),
// cudaLaunchKernelExC and cooperative launches; plus the function attribute and occupancy
// queries that launch heuristics ask.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "blas_types.hpp"
#include "capture.hpp"
#include "context.hpp"
#include "described_launches.hpp"
#include "launch_recorder.hpp"
#include "module_image.hpp"
#include "payload_inbox.hpp"
#include "pt_variants.hpp"
#include "registry.hpp"
#include "small_kernels.hpp"
#include "torch_kernel_args.hpp"

using namespace phantora;
using namespace phantora::shim;

namespace {

struct CallConfig {
  dim3 grid;
  dim3 block;
  size_t shared_mem;
  cudaStream_t stream;
};
thread_local std::vector<CallConfig> t_configs;

// Register use assumed for occupancy answers: kernels are not compiled for a real device, so
// their register count is unknown; 32 per thread is a common figure for simple kernels and
// lets a 1024-thread block fit, as it does on the real part.
constexpr int kAssumedRegsPerThread = 32;

// The grouped GEMM a torch._grouped_mm set-up launch described, for the CUTLASS kernel this
// thread launches next on that stream (GroupMM.cu launches the two back to back).
struct PendingGroupedMm {
  uint64_t stream = 0;
  std::optional<GroupedMm> mm;
};
thread_local PendingGroupedMm t_grouped_mm;

// Sends a CUTLASS grouped GEMM as the GEMM its set-up launch described, priced by the GEMM
// model (`groups` GEMMs of the per-group shape); false when no description is pending for
// this stream, and the launch goes as a kernel of its own.
bool submit_grouped_gemm(const KernelInfo& k, CUstream_st* s) {
  if (!t_grouped_mm.mm || t_grouped_mm.stream != s->id || !is_grouped_gemm_kernel(k.name)) {
    return false;
  }
  const GroupedMm g = *t_grouped_mm.mm;
  t_grouped_mm = {};
  submit_gemm(s, BlasApi::kTorchGroupedMm, g.m, g.n, g.k, g.groups, g.types.a, g.types.b,
              g.types.out, wire::DataType::kF32, !g.a_row_major, !g.b_row_major, 0, false);
  return true;
}

bool awaits_payload(const SmallKernelPlan& plan) {
  if (!plan.run) return false;
  for (const ByteRange& r : plan.inputs) {
    if (PayloadInbox::get().overlaps(r.addr, r.bytes)) return true;
  }
  return false;
}

cudaError_t launch(const void* func, dim3 grid, dim3 block, size_t shared_mem, cudaStream_t stream,
                   bool pt, void** args) {
  KernelInfo* k = find_kernel(func);
  if (k == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
  const wire::Welcome& w = Runtime::get().welcome();
  const uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  if (threads == 0 || threads > static_cast<uint64_t>(w.device.max_threads_per_block) ||
      grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535) {
    return set_error(cudaErrorInvalidConfiguration);
  }
  if (shared_mem > w.device.shared_mem_per_block_optin) return set_error(cudaErrorInvalidValue);
  if (k->wire_id == 0) k->wire_id = Runtime::get().kernel_id(k->name);
  CUstream_st* s = resolve_stream(stream, pt);
  // A PyTorch kernel of a known family: its memory traffic prices it, and on tiny tensors its
  // result is computed on the shadow store (small_kernels.hpp).
  const TorchKernel& torch = torch_kernel(*k);
  if (torch.grouped_mm_setup && args != nullptr) {
    t_grouped_mm = {s->id, read_grouped_mm(*torch.grouped_mm_setup, args, block.x)};
  } else if (submit_grouped_gemm(*k, s)) {
    return cudaSuccess;
  }
  const std::array<uint32_t, 3> g{grid.x, grid.y, grid.z};
  std::optional<LaunchWork> work;
  std::optional<SmallKernelPlan> plan;
  if (torch.family != TorchFamily::kUnknown && args != nullptr) {
    const DecodedArgs decoded = decode_args(torch, args, g);
    work = launch_work(torch, decoded, args, g);
    plan = plan_small_kernel(torch, decoded);
  }
  if (!work && args != nullptr) {
    if (const std::optional<LlmcKernel>& llmc = llmc_kernel(*k)) {
      work = llmc_work(*llmc, args, g, {block.x, block.y, block.z});
    }
  }
  if (!work) work = take_described_work(k->name);
  if (recording_launches()) {
    record_launch(*k, g, {block.x, block.y, block.z}, shared_mem, work ? &*work : nullptr, args);
  }
  wire::Launch l{};
  l.stream = s->id;
  l.device = s->device;
  l.kernel = k->wire_id;
  l.grid[0] = grid.x, l.grid[1] = grid.y, l.grid[2] = grid.z;
  l.block[0] = block.x, l.block[1] = block.y, l.block[2] = block.z;
  l.shared_mem = shared_mem;
  if (work) l.work = *work;
  if (s->capture != nullptr) {
    // A captured kernel runs at replay, not now: what it writes is unknown from here on.
    if (plan) {
      plan->run = nullptr;
      run_small_kernel(*plan);
    }
    capture_launch(s, l);
    return cudaSuccess;
  }
  if (plan && awaits_payload(*plan)) {
    // Inputs that a small collective is still to fill: the launch goes to the daemon and waits
    // (real time only, the host clock does not move), then the result is computed.
    Runtime::get().request(wire::RecordType::kLaunch, &l, sizeof(l), /*advance=*/false);
    for (const ByteRange& r : plan->inputs) PayloadInbox::get().wait_for(r.addr, r.bytes);
  } else {
    Runtime::get().submit(wire::RecordType::kLaunch, &l, sizeof(l));
  }
  if (plan) {
    if (plan->run) Runtime::note_expensive();
    run_small_kernel(*plan);
  }
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel_impl(bool pt, const void* func, dim3 grid, dim3 block, void** args,
                                  size_t shared_mem, cudaStream_t stream) {
  ApiCall call;
  return launch(func, grid, block, shared_mem, stream, pt, args);
}

cudaError_t __cudaLaunchKernel_impl(bool pt, cudaKernel_t kernel, dim3 grid, dim3 block,
                                    void** args, size_t shared_mem, cudaStream_t stream) {
  return cudaLaunchKernel_impl(pt, reinterpret_cast<const void*>(kernel), grid, block, args,
                               shared_mem, stream);
}

cudaError_t cudaLaunchCooperativeKernel_impl(bool pt, const void* func, dim3 grid, dim3 block,
                                             void** args, size_t shared_mem, cudaStream_t stream) {
  return cudaLaunchKernel_impl(pt, func, grid, block, args, shared_mem, stream);
}

cudaError_t cudaLaunchKernelExC_impl(bool pt, const cudaLaunchConfig_t* config, const void* func,
                                     void** args) {
  if (config == nullptr) return set_error(cudaErrorInvalidValue);
  return cudaLaunchKernel_impl(pt, func, config->gridDim, config->blockDim, args,
                               config->dynamicSmemBytes, config->stream);
}

int occupancy_blocks(const wire::DeviceSpec& d, int block_size, size_t dynamic_smem) {
  if (block_size <= 0) return 0;
  const int warps = (block_size + 31) / 32;
  int blocks = d.max_blocks_per_multiprocessor;
  blocks = std::min(blocks, d.max_threads_per_multiprocessor / (warps * 32));
  blocks = std::min(blocks, d.regs_per_multiprocessor / (warps * 32 * kAssumedRegsPerThread));
  const uint64_t smem = dynamic_smem + d.reserved_shared_mem_per_block;
  if (smem > 0)
    blocks = std::min<int>(blocks, static_cast<int>(d.shared_mem_per_multiprocessor / smem));
  return std::max(blocks, 0);
}

}  // namespace

extern "C" {

void** __cudaRegisterFatBinary(void* fat_cubin) {
  // The handle only has to be unique; the device code itself is never loaded, but where it is
  // stays known (a recorded launch saves its kernel's image, launch_recorder.hpp).
  return new void*(const_cast<void*>(fatbin_of_wrapper(fat_cubin)));
}

void __cudaRegisterFatBinaryEnd(void** /*handle*/) {}

void __cudaUnregisterFatBinary(void** handle) {
  delete handle;
}

void __cudaRegisterFunction(void** handle, const char* host_fun, char* /*device_fun*/,
                            const char* device_name, int /*thread_limit*/, uint3*, uint3*, dim3*,
                            dim3*, int*) {
  const void* fatbin = handle != nullptr ? *handle : nullptr;
  register_kernel(host_fun, device_name, fatbin, fatbin != nullptr ? image_size(fatbin) : 0);
}

void __cudaRegisterVar(void** /*handle*/, char* host_var, char* /*device_address*/,
                       const char* /*device_name*/, int /*ext*/, size_t size, int /*constant*/,
                       int /*global*/) {
  register_symbol(host_var, size);
}

void __cudaRegisterManagedVar(void** /*handle*/, void** host_var_ptr, char* /*device_address*/,
                              const char* /*device_name*/, int /*ext*/, size_t size,
                              int /*constant*/, int /*global*/) {
  register_symbol(host_var_ptr, size);
}

char __cudaInitModule(void** /*handle*/) {
  return 1;
}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared_mem,
                                     struct CUstream_st* stream) {
  t_configs.push_back(CallConfig{grid, block, shared_mem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared_mem, void* stream) {
  if (t_configs.empty()) return cudaErrorMissingConfiguration;
  const CallConfig c = t_configs.back();
  t_configs.pop_back();
  *grid = c.grid;
  *block = c.block;
  *shared_mem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_fun) {
  KernelInfo* k = find_kernel(host_fun);
  if (k == nullptr || kernel == nullptr) return cudaErrorInvalidDeviceFunction;
  *kernel = reinterpret_cast<cudaKernel_t>(k);
  return cudaSuccess;
}

cudaError_t cudaGetKernel(cudaKernel_t* kernel, const void* entry) {
  return __cudaGetKernel(kernel, entry);
}

cudaError_t cudaGetFuncBySymbol(cudaFunction_t* func, const void* symbol) {
  KernelInfo* k = find_kernel(symbol);
  if (k == nullptr || func == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
  *func = reinterpret_cast<cudaFunction_t>(k);
  return cudaSuccess;
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  KernelInfo* k = find_kernel(func);
  if (name == nullptr) return set_error(cudaErrorInvalidValue);
  if (k == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
  *name = k->name.c_str();
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  KernelInfo* k = find_kernel(func);
  if (attr == nullptr) return set_error(cudaErrorInvalidValue);
  if (k == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
  const wire::DeviceSpec& d = Runtime::get().welcome().device;
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = d.max_threads_per_block;
  attr->numRegs = kAssumedRegsPerThread;
  attr->ptxVersion = d.cc_major * 10 + d.cc_minor;
  attr->binaryVersion = attr->ptxVersion;
  attr->cacheModeCA = 0;
  attr->maxDynamicSharedSizeBytes =
      k->max_dynamic_shared > 0 ? k->max_dynamic_shared : static_cast<int>(d.shared_mem_per_block);
  attr->preferredShmemCarveout = k->preferred_carveout;
  attr->requiredClusterWidth = k->required_cluster[0];
  attr->requiredClusterHeight = k->required_cluster[1];
  attr->requiredClusterDepth = k->required_cluster[2];
  attr->nonPortableClusterSizeAllowed = k->non_portable_cluster;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  KernelInfo* k = find_kernel(func);
  if (k == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
  const wire::DeviceSpec& d = Runtime::get().welcome().device;
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      if (value < 0 || static_cast<uint64_t>(value) > d.shared_mem_per_block_optin) {
        return set_error(cudaErrorInvalidValue);
      }
      k->max_dynamic_shared = value;
      return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      k->preferred_carveout = value;
      return cudaSuccess;
    case cudaFuncAttributeRequiredClusterWidth:
      k->required_cluster[0] = value;
      return cudaSuccess;
    case cudaFuncAttributeRequiredClusterHeight:
      k->required_cluster[1] = value;
      return cudaSuccess;
    case cudaFuncAttributeRequiredClusterDepth:
      k->required_cluster[2] = value;
      return cudaSuccess;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
      k->non_portable_cluster = value;
      return cudaSuccess;
    default:
      return cudaSuccess;  // scheduling hints with no effect on simulated time
  }
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache) {
  return find_kernel(func) != nullptr ? cudaSuccess : set_error(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* func,
                                                                   int block_size,
                                                                   size_t dynamic_smem,
                                                                   unsigned int /*flags*/) {
  if (blocks == nullptr) return set_error(cudaErrorInvalidValue);
  if (find_kernel(func) == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
  *blocks = occupancy_blocks(Runtime::get().welcome().device, block_size, dynamic_smem);
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                          int block_size, size_t dynamic_smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, func, block_size,
                                                                dynamic_smem, 0);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* smem, const void* func,
                                                      int blocks_per_sm, int /*block_size*/) {
  if (smem == nullptr || blocks_per_sm <= 0) return set_error(cudaErrorInvalidValue);
  if (find_kernel(func) == nullptr) return set_error(cudaErrorInvalidDeviceFunction);
  const wire::DeviceSpec& d = Runtime::get().welcome().device;
  const uint64_t per_block = d.shared_mem_per_multiprocessor / static_cast<uint64_t>(blocks_per_sm);
  *smem = std::min<uint64_t>(per_block - std::min(per_block, d.reserved_shared_mem_per_block),
                             d.shared_mem_per_block_optin);
  return cudaSuccess;
}

}  // extern "C"

PHANTORA_DEFINE_PT(cudaLaunchKernel, _ptsz,
                   (const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                    cudaStream_t stream),
                   (func, grid, block, args, shared_mem, stream))
PHANTORA_DEFINE_PT(__cudaLaunchKernel, _ptsz,
                   (cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared_mem,
                    cudaStream_t stream),
                   (kernel, grid, block, args, shared_mem, stream))
PHANTORA_DEFINE_PT(cudaLaunchCooperativeKernel, _ptsz,
                   (const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                    cudaStream_t stream),
                   (func, grid, block, args, shared_mem, stream))
PHANTORA_DEFINE_PT(cudaLaunchKernelExC, _ptsz,
                   (const cudaLaunchConfig_t* config, const void* func, void** args),
                   (config, func, args))
