// Driver modules and launches: what code generated at run time uses to reach the GPU. Triton
// (torch.compile's kernels, FlexAttention) and PyTorch's static Triton launcher load a cubin
// with cuModuleLoad / cuModuleLoadData, look its kernels up by name with cuModuleGetFunction,
// ask and set their attributes (cuFuncGetAttribute / cuFuncSetAttribute) and launch them with
// cuLaunchKernel or cuLaunchKernelEx.
//
// Nothing is executed or even parsed beyond what is needed to know the image's extent: a
// module keeps its image's bytes, and a kernel name is found when it occurs in them as an entry
// of an ELF string table (NUL on both sides; a cubin's symbol) or as PTX's `.entry NAME(`, so
// asking for a name the image does not hold is CUDA_ERROR_NOT_FOUND as on the real driver.
// Each kernel becomes a KernelInfo, the same record nvcc-registered kernels have, and its
// launches go through the runtime's cudaLaunchKernel / cudaLaunchKernelExC: they are costed
// by name and grid like any other kernel. Attributes the image would state (registers, static
// shared memory) are the runtime's assumptions (api_launch.cpp).
#include "api_modules.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "context.hpp"
#include "module_image.hpp"
#include "registry.hpp"
#include "runtime.hpp"

// The shim's per-thread-default-stream launch entry points (api_launch.cpp); the runtime header
// declares them only when a program is built for per-thread default streams.
extern "C" cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args,
                                             size_t shared_mem, cudaStream_t stream);
extern "C" cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func,
                                                void** args);

using namespace phantora;
using namespace phantora::shim;

// The driver header only forward-declares the module type; the shim owns its layout.
struct CUmod_st {
  std::string image;
  bool loaded = true;
  // Kernel name -> its record. The map's nodes never move, so a name's address is a stable,
  // unique key for register_kernel (modules are never freed for the same reason: a reused
  // address would find an unloaded module's kernel).
  std::map<std::string, KernelInfo*> functions;
};

namespace {

std::mutex g_mu;

CUresult new_module(CUmodule* out, std::string image) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (image.empty()) return CUDA_ERROR_INVALID_IMAGE;
  auto* m = new CUmod_st();
  m->image = std::move(image);
  *out = m;
  return CUDA_SUCCESS;
}

CUresult to_cu(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return CUDA_SUCCESS;
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorInvalidResourceHandle:
      return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorMemoryAllocation:
      return CUDA_ERROR_OUT_OF_MEMORY;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

KernelInfo* kernel_of(CUfunction f) {
  return find_kernel(reinterpret_cast<const void*>(f));
}

}  // namespace

namespace phantora::shim {

CUresult drv_module_load_data(CUmodule* module, const void* image) {
  ApiCall call;
  if (image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto* p = static_cast<const char*>(image);
  return new_module(module, std::string(p, image_size(image)));
}

CUresult drv_module_load_data_ex(CUmodule* module, const void* image, unsigned int /*options*/,
                                 CUjit_option* /*keys*/, void** /*values*/) {
  // JIT options (log buffers, optimisation level) only matter to a compilation that never runs.
  return drv_module_load_data(module, image);
}

CUresult drv_module_load(CUmodule* module, const char* path) {
  ApiCall call;
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
  return new_module(module, std::string(std::istreambuf_iterator<char>(in), {}));
}

CUresult drv_module_unload(CUmodule module) {
  ApiCall call;
  std::lock_guard lock(g_mu);
  if (module == nullptr || !module->loaded) return CUDA_ERROR_INVALID_HANDLE;
  module->loaded = false;
  return CUDA_SUCCESS;
}

CUresult drv_module_get_function(CUfunction* out, CUmodule module, const char* name) {
  ApiCall call;
  if (out == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(g_mu);
  if (module == nullptr || !module->loaded) return CUDA_ERROR_INVALID_HANDLE;
  auto it = module->functions.find(name);
  if (it == module->functions.end()) {
    const std::string_view image(module->image);
    // An ELF string table entry: NUL before and after (not the tail of ".text.NAME").
    const std::string wanted = std::string(1, '\0') + name + std::string(1, '\0');
    const std::string ptx_entry = std::string(".entry ") + name + "(";
    if (image.find(wanted) == std::string_view::npos &&
        image.find(ptx_entry) == std::string_view::npos) {
      return CUDA_ERROR_NOT_FOUND;
    }
    it = module->functions.emplace(name, nullptr).first;
    it->second = register_kernel(&it->first, name, module->image.data(), module->image.size());
  }
  *out = reinterpret_cast<CUfunction>(it->second);
  return CUDA_SUCCESS;
}

CUresult drv_func_get_attribute(int* value, CUfunction_attribute attr, CUfunction f) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (kernel_of(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  cudaFuncAttributes a{};
  if (cudaError_t e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(f)); e != cudaSuccess)
    return to_cu(e);
  switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = a.maxThreadsPerBlock;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *value = static_cast<int>(a.sharedSizeBytes);
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
      *value = static_cast<int>(a.constSizeBytes);
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:  // Triton reads spills from this: none
      *value = static_cast<int>(a.localSizeBytes);
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *value = a.numRegs;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      *value = a.ptxVersion;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      *value = a.binaryVersion;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
      *value = a.cacheModeCA;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *value = a.maxDynamicSharedSizeBytes;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      *value = a.preferredShmemCarveout;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
      *value = a.clusterDimMustBeSet;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
      *value = a.requiredClusterWidth;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
      *value = a.requiredClusterHeight;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      *value = a.requiredClusterDepth;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      *value = a.nonPortableClusterSizeAllowed;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      *value = a.clusterSchedulingPolicyPreference;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult drv_func_set_attribute(CUfunction f, CUfunction_attribute attr, int value) {
  if (kernel_of(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  cudaFuncAttribute a{};
  switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      a = cudaFuncAttributeMaxDynamicSharedMemorySize;
      break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      a = cudaFuncAttributePreferredSharedMemoryCarveout;
      break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
      a = cudaFuncAttributeRequiredClusterWidth;
      break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
      a = cudaFuncAttributeRequiredClusterHeight;
      break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      a = cudaFuncAttributeRequiredClusterDepth;
      break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      a = cudaFuncAttributeNonPortableClusterSizeAllowed;
      break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      a = cudaFuncAttributeClusterSchedulingPolicyPreference;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // the other attributes are read-only
  }
  return to_cu(cudaFuncSetAttribute(reinterpret_cast<const void*>(f), a, value));
}

CUresult drv_func_set_cache_config(CUfunction f, CUfunc_cache /*config*/) {
  return kernel_of(f) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

template <bool PerThread>
CUresult drv_launch_kernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                           unsigned int bx, unsigned int by, unsigned int bz,
                           unsigned int shared_mem, CUstream stream, void** params,
                           void** /*extra*/) {
  // Arguments packed in `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER) are not decoded: run-time
  // kernels are not PyTorch's precompiled families, so their arguments are never read.
  if (kernel_of(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const auto launch = PerThread ? &cudaLaunchKernel_ptsz : &cudaLaunchKernel;
  return to_cu(launch(reinterpret_cast<const void*>(f), dim3(gx, gy, gz), dim3(bx, by, bz), params,
                      shared_mem, stream));
}
template CUresult drv_launch_kernel<false>(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, unsigned, unsigned, CUstream, void**, void**);
template CUresult drv_launch_kernel<true>(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                          unsigned, unsigned, unsigned, CUstream, void**, void**);

// The driver's and the runtime's launch attributes are one layout (cudaLaunchAttribute is
// declared from CUlaunchAttribute's fields, with the same ids), so the list passes as it is.
static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute));

template <bool PerThread>
CUresult drv_launch_kernel_ex(const CUlaunchConfig* config, CUfunction f, void** params,
                              void** /*extra*/) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (kernel_of(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  cudaLaunchConfig_t c{};
  c.gridDim = dim3(config->gridDimX, config->gridDimY, config->gridDimZ);
  c.blockDim = dim3(config->blockDimX, config->blockDimY, config->blockDimZ);
  c.dynamicSmemBytes = config->sharedMemBytes;
  c.stream = config->hStream;
  c.attrs = reinterpret_cast<cudaLaunchAttribute*>(config->attrs);
  c.numAttrs = config->numAttrs;
  const auto launch = PerThread ? &cudaLaunchKernelExC_ptsz : &cudaLaunchKernelExC;
  return to_cu(launch(&c, reinterpret_cast<const void*>(f), params));
}
template CUresult drv_launch_kernel_ex<false>(const CUlaunchConfig*, CUfunction, void**, void**);
template CUresult drv_launch_kernel_ex<true>(const CUlaunchConfig*, CUfunction, void**, void**);

// Triton's launcher asks CU_POINTER_ATTRIBUTE_DEVICE_POINTER of every pointer argument and
// refuses memory the device cannot reach (CUDA_ERROR_INVALID_VALUE). Answered from the
// runtime's view of the address (cudaPointerGetAttributes): device memory, pinned host memory,
// or neither.
CUresult drv_pointer_get_attribute(void* data, CUpointer_attribute attr, CUdeviceptr ptr) {
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, reinterpret_cast<const void*>(ptr)) != cudaSuccess)
    return CUDA_ERROR_INVALID_VALUE;
  if (a.type == cudaMemoryTypeUnregistered) return CUDA_ERROR_INVALID_VALUE;
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) =
          a.type == cudaMemoryTypeDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      *static_cast<CUdeviceptr*>(data) = reinterpret_cast<CUdeviceptr>(a.devicePointer);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (a.hostPointer == nullptr) return CUDA_ERROR_INVALID_VALUE;
      *static_cast<void**>(data) = a.hostPointer;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = a.device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<unsigned int*>(data) = 0;  // cudaMallocManaged is not simulated
      return CUDA_SUCCESS;
    default:
      fatal("cuPointerGetAttribute: attribute " + std::to_string(static_cast<int>(attr)) +
            " is not implemented by the simulator");
  }
}

}  // namespace phantora::shim
