// The CUDA entry points the measurer calls, loaded at run time with dlopen: the real runtime,
// cuBLAS and driver on a machine with a GPU, or tests/profiler's stand-in, which plays a GPU
// with known durations. Nothing here is linked against NVIDIA libraries; the CUDA headers give
// the exact types, so a stand-in that declares an entry point differently fails to compile.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace phantora::profiler {

// Which shared libraries to load. Each list is tried in order; the first that loads is used.
struct CudaLibraries {
  // The loader's search path first, then the toolkit's default location (often not on it).
  std::vector<std::string> runtime{"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                   "/usr/local/cuda/lib64/libcudart.so"};
  std::vector<std::string> cublas{"libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                  "/usr/local/cuda/lib64/libcublas.so"};
  std::vector<std::string> cublaslt{"libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12",
                                    "/usr/local/cuda/lib64/libcublasLt.so"};
  std::vector<std::string> driver{"libcuda.so.1"};

  // All from one file (the stand-in exports every entry point).
  static CudaLibraries single(const std::string& path);
};

// The exported C function; the header adds a C++ overload taking the legacy cudaDataType compute
// type, so `decltype(&cublasGemmStridedBatchedEx)` would be ambiguous.
using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                cublasOperation_t, int, int, int, const void*,
                                                const void*, cudaDataType, int, long long,
                                                const void*, cudaDataType, int, long long,
                                                const void*, void*, cudaDataType, int, long long,
                                                int, cublasComputeType_t, cublasGemmAlgo_t);

struct CudaApi {
  // runtime
  decltype(&::cudaSetDevice) set_device;
  decltype(&::cudaMalloc) malloc;
  decltype(&::cudaFree) free;
  decltype(&::cudaMallocHost) malloc_host;
  decltype(&::cudaFreeHost) free_host;
  decltype(&::cudaMemsetAsync) memset_async;
  decltype(&::cudaMemcpyAsync) memcpy_async;
  decltype(&::cudaStreamCreate) stream_create;
  decltype(&::cudaStreamDestroy) stream_destroy;
  decltype(&::cudaStreamSynchronize) stream_synchronize;
  decltype(&::cudaEventCreate) event_create;
  decltype(&::cudaEventDestroy) event_destroy;
  decltype(&::cudaEventRecord) event_record;
  decltype(&::cudaEventSynchronize) event_synchronize;
  decltype(&::cudaEventElapsedTime) event_elapsed_time;
  decltype(&::cudaRuntimeGetVersion) runtime_get_version;
  decltype(&::cudaGetErrorString) get_error_string;
  // cuBLAS
  decltype(&::cublasCreate) blas_create;
  decltype(&::cublasDestroy) blas_destroy;
  decltype(&::cublasSetStream) blas_set_stream;
  GemmStridedBatchedEx gemm_strided_batched_ex;
  decltype(&::cublasGetProperty) blas_get_property;
  // cuBLASLt (GEMMs with an epilogue)
  decltype(&::cublasLtCreate) lt_create;
  decltype(&::cublasLtDestroy) lt_destroy;
  decltype(&::cublasLtMatmulDescCreate) lt_desc_create;
  decltype(&::cublasLtMatmulDescDestroy) lt_desc_destroy;
  decltype(&::cublasLtMatmulDescSetAttribute) lt_desc_set;
  decltype(&::cublasLtMatrixLayoutCreate) lt_layout_create;
  decltype(&::cublasLtMatrixLayoutDestroy) lt_layout_destroy;
  decltype(&::cublasLtMatrixLayoutSetAttribute) lt_layout_set;
  decltype(&::cublasLtMatmul) lt_matmul;
  // driver (device name, clocks, driver version)
  decltype(&::cuInit) cu_init;
  decltype(&::cuDeviceGet) cu_device_get;
  decltype(&::cuDeviceGetName) cu_device_get_name;
  decltype(&::cuDeviceGetAttribute) cu_device_get_attribute;
  decltype(&::cuDriverGetVersion) cu_driver_get_version;
  decltype(&::cuGetErrorString) cu_get_error_string;
  // driver modules (recorded launches replayed: replay_launch.cpp)
  decltype(&::cuModuleLoadData) cu_module_load_data;
  decltype(&::cuModuleUnload) cu_module_unload;
  decltype(&::cuModuleGetFunction) cu_module_get_function;
  decltype(&::cuFuncSetAttribute) cu_func_set_attribute;
  decltype(&::cuLaunchKernel) cu_launch_kernel;
  // Since CUDA 12.4; null with an older driver, which then replays no recorded launch.
  decltype(&::cuFuncGetParamInfo) cu_func_get_param_info;

  std::string runtime_path, cublas_path, cublaslt_path, driver_path;  // the files that were loaded
};

// Loads every entry point; throws std::runtime_error naming the library or symbol missing.
CudaApi load_cuda_api(const CudaLibraries& libraries);

// Throws std::runtime_error "<what>: <CUDA error text>" when `rc` is not cudaSuccess.
void check(const CudaApi& api, cudaError_t rc, const char* what);
void check(cublasStatus_t rc, const char* what);
void check(const CudaApi& api, CUresult rc, const char* what);

}  // namespace phantora::profiler
