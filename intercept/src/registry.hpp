// What nvcc-generated code registers at load time: kernels (host stub -> mangled device name)
// and device variables (host shadow symbol -> device address). Registration runs in static
// constructors of every CUDA library, before main and before any simulator connection, so it
// only records and never talks to the daemon.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "llmc_kernels.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {

struct KernelInfo {
  std::string name;      // mangled device name
  uint32_t wire_id = 0;  // assigned on first launch
  // The image the kernel's code lives in (a registered fat binary, or a driver module's copy),
  // which outlives the kernel; null when unknown. Only launch recording reads it.
  const void* image = nullptr;
  size_t image_bytes = 0;
  int max_dynamic_shared = 0;
  int preferred_carveout = -1;
  int required_cluster[3] = {0, 0, 0};
  int non_portable_cluster = 0;
  // The PyTorch kernel family, classified on first launch (demangling every registered kernel
  // at load time would cost seconds for a library the size of libtorch_cuda).
  std::once_flag classified;
  TorchKernel torch;
  // One of llm.c's kernels (llmc_kernels.hpp), classified with it when no PyTorch family fits.
  std::optional<LlmcKernel> llmc;
};

// The kernel's family (torch_kernel_name.hpp), classifying it on first use.
const TorchKernel& torch_kernel(KernelInfo& k);
// The kernel as one of llm.c's (llmc_kernels.hpp), classifying it on first use; nullopt for any
// other kernel.
const std::optional<LlmcKernel>& llmc_kernel(KernelInfo& k);

// Looks up a kernel by its host stub address, or by a cudaKernel_t / cudaFunction_t handle the
// shim handed out (both are KernelInfo pointers). nullptr if unknown.
KernelInfo* find_kernel(const void* func);
// `image`: where the kernel's code is (module_image.hpp), null when unknown.
KernelInfo* register_kernel(const void* host_fun, const char* device_name,
                            const void* image = nullptr, size_t image_bytes = 0);

struct SymbolInfo {
  uint64_t address;
  uint64_t size;
};
void register_symbol(const void* host_var, uint64_t size);
std::optional<SymbolInfo> find_symbol(const void* host_var);

}  // namespace phantora::shim
