#include "phantora/profiler/cuda_api.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace phantora::profiler {
namespace {

void* open_first(const std::vector<std::string>& candidates, const char* what, std::string& path) {
  std::string errors;
  for (const std::string& name : candidates) {
    // RTLD_LOCAL: the measurer's CUDA never becomes visible to anything else in the process.
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = name;
      return handle;
    }
    const char* err = dlerror();
    errors += fmt::format("\n  {}: {}", name, err != nullptr ? err : "not found");
  }
  const bool driver = std::string_view(what) == "driver";
  throw std::runtime_error(fmt::format(
      "cannot load the CUDA {} library; tried:{}\n{}", what, errors,
      driver ? "libcuda.so.1 comes with the NVIDIA driver: this machine has none, or it is not "
               "on the loader's path."
             : "Install the CUDA toolkit's libraries or put their directory on LD_LIBRARY_PATH."));
}

template <typename Fn>
void bind(void* handle, const char* symbol, const std::string& library, Fn& out) {
  void* p = dlsym(handle, symbol);
  if (p == nullptr) {
    throw std::runtime_error(fmt::format("{} does not export {}", library, symbol));
  }
  out = reinterpret_cast<Fn>(p);
}

}  // namespace

CudaLibraries CudaLibraries::single(const std::string& path) {
  return CudaLibraries{{path}, {path}, {path}, {path}};
}

// The exported name after the headers' renames (cublasCreate is cublasCreate_v2).
#define PHANTORA_STR2(x) #x
#define PHANTORA_STR(x) PHANTORA_STR2(x)
#define PHANTORA_BIND(handle, path, symbol, field) \
  bind(handle, PHANTORA_STR(symbol), path, api.field)

CudaApi load_cuda_api(const CudaLibraries& libraries) {
  CudaApi api{};
  void* rt = open_first(libraries.runtime, "runtime", api.runtime_path);
  void* blas = open_first(libraries.cublas, "cuBLAS", api.cublas_path);
  void* lt = open_first(libraries.cublaslt, "cuBLASLt", api.cublaslt_path);
  void* drv = open_first(libraries.driver, "driver", api.driver_path);
  const std::string& r = api.runtime_path;
  PHANTORA_BIND(rt, r, cudaSetDevice, set_device);
  PHANTORA_BIND(rt, r, cudaMalloc, malloc);
  PHANTORA_BIND(rt, r, cudaFree, free);
  PHANTORA_BIND(rt, r, cudaMallocHost, malloc_host);
  PHANTORA_BIND(rt, r, cudaFreeHost, free_host);
  PHANTORA_BIND(rt, r, cudaMemsetAsync, memset_async);
  PHANTORA_BIND(rt, r, cudaMemcpyAsync, memcpy_async);
  PHANTORA_BIND(rt, r, cudaStreamCreate, stream_create);
  PHANTORA_BIND(rt, r, cudaStreamDestroy, stream_destroy);
  PHANTORA_BIND(rt, r, cudaStreamSynchronize, stream_synchronize);
  PHANTORA_BIND(rt, r, cudaEventCreate, event_create);
  PHANTORA_BIND(rt, r, cudaEventDestroy, event_destroy);
  PHANTORA_BIND(rt, r, cudaEventRecord, event_record);
  PHANTORA_BIND(rt, r, cudaEventSynchronize, event_synchronize);
  PHANTORA_BIND(rt, r, cudaEventElapsedTime, event_elapsed_time);
  PHANTORA_BIND(rt, r, cudaRuntimeGetVersion, runtime_get_version);
  PHANTORA_BIND(rt, r, cudaGetErrorString, get_error_string);
  const std::string& b = api.cublas_path;
  PHANTORA_BIND(blas, b, cublasCreate, blas_create);
  PHANTORA_BIND(blas, b, cublasDestroy, blas_destroy);
  PHANTORA_BIND(blas, b, cublasSetStream, blas_set_stream);
  PHANTORA_BIND(blas, b, cublasGemmStridedBatchedEx, gemm_strided_batched_ex);
  PHANTORA_BIND(blas, b, cublasGetProperty, blas_get_property);
  const std::string& l = api.cublaslt_path;
  PHANTORA_BIND(lt, l, cublasLtCreate, lt_create);
  PHANTORA_BIND(lt, l, cublasLtDestroy, lt_destroy);
  PHANTORA_BIND(lt, l, cublasLtMatmulDescCreate, lt_desc_create);
  PHANTORA_BIND(lt, l, cublasLtMatmulDescDestroy, lt_desc_destroy);
  PHANTORA_BIND(lt, l, cublasLtMatmulDescSetAttribute, lt_desc_set);
  PHANTORA_BIND(lt, l, cublasLtMatrixLayoutCreate, lt_layout_create);
  PHANTORA_BIND(lt, l, cublasLtMatrixLayoutDestroy, lt_layout_destroy);
  PHANTORA_BIND(lt, l, cublasLtMatrixLayoutSetAttribute, lt_layout_set);
  PHANTORA_BIND(lt, l, cublasLtMatmul, lt_matmul);
  const std::string& d = api.driver_path;
  PHANTORA_BIND(drv, d, cuInit, cu_init);
  PHANTORA_BIND(drv, d, cuDeviceGet, cu_device_get);
  PHANTORA_BIND(drv, d, cuDeviceGetName, cu_device_get_name);
  PHANTORA_BIND(drv, d, cuDeviceGetAttribute, cu_device_get_attribute);
  PHANTORA_BIND(drv, d, cuDriverGetVersion, cu_driver_get_version);
  PHANTORA_BIND(drv, d, cuGetErrorString, cu_get_error_string);
  PHANTORA_BIND(drv, d, cuModuleLoadData, cu_module_load_data);
  PHANTORA_BIND(drv, d, cuModuleUnload, cu_module_unload);
  PHANTORA_BIND(drv, d, cuModuleGetFunction, cu_module_get_function);
  PHANTORA_BIND(drv, d, cuFuncSetAttribute, cu_func_set_attribute);
  PHANTORA_BIND(drv, d, cuLaunchKernel, cu_launch_kernel);
  api.cu_func_get_param_info =
      reinterpret_cast<decltype(api.cu_func_get_param_info)>(dlsym(drv, "cuFuncGetParamInfo"));
  // The libraries stay loaded for the life of the process: the returned pointers point into them.
  return api;
}

void check(const CudaApi& api, cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    throw std::runtime_error(
        fmt::format("{} failed: {} ({})", what, api.get_error_string(rc), static_cast<int>(rc)));
  }
}

void check(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(
        fmt::format("{} failed: cublasStatus_t {}", what, static_cast<int>(rc)));
  }
}

void check(const CudaApi& api, CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) {
    const char* text = nullptr;
    if (api.cu_get_error_string(rc, &text) != CUDA_SUCCESS || text == nullptr) text = "unknown";
    throw std::runtime_error(
        fmt::format("{} failed: {} (CUresult {})", what, text, static_cast<int>(rc)));
  }
}

}  // namespace phantora::profiler
