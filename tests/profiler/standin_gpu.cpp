// A stand-in for a GPU with known kernel durations: exports the CUDA runtime, cuBLAS and driver
// entry points the profiler calls (profiler/include/phantora/profiler/cuda_api.hpp) and plays a
// single device whose streams advance by durations read from a table.
//
//   PHANTORA_STANDIN_GPU_TIMES  file of lines `<operation> | <us> <us> ...`; the k-th call of an
//                               operation takes the (k mod n)-th duration. An operation missing
//                               from the table fails loudly (the call returns an error).
//   PHANTORA_STANDIN_GPU_LOG    every timed call, one `<operation>` line each, appended.
//   PHANTORA_STANDIN_GPU_NAME   what cuDeviceGetName reports (default "NVIDIA H200").
//   PHANTORA_STANDIN_GPU_DEFAULT_US  a duration for operations missing from the table, instead
//                               of failing (scripts/gpu-check.sh --dry-run).
//
// <operation> spells the call's arguments that decide its duration, e.g.
// `cublasGemmStridedBatchedEx opa=1 opb=0 m=256 n=512 k=128 lda=128 ldb=128 ldc=256 ...` and
// `cudaMemcpyAsync kind=1 bytes=1048576 host=pinned`. Events read the stream's clock, so
// cudaEventElapsedTime is the sum of the durations recorded between two events.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Gpu {
  std::mutex mu;
  std::map<std::string, std::vector<double>> table;
  std::map<std::string, size_t> calls;
  std::map<const void*, double> stream_us;  // each stream's clock; null is the default stream
  std::map<const void*, double> event_us;
  std::set<const void*> pinned;
  std::map<uintptr_t, size_t> device_allocations;
  uintptr_t next_device = 0x7f0000000000;  // never dereferenced: the stand-in computes nothing
  bool loaded = false;

  void load() {
    if (loaded) return;
    loaded = true;
    const char* path = std::getenv("PHANTORA_STANDIN_GPU_TIMES");
    if (path == nullptr) return;
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "standin gpu: cannot read %s\n", path);
      std::abort();
    }
    std::string line;
    while (std::getline(in, line)) {
      const size_t bar = line.find('|');
      if (line.empty() || line[0] == '#' || bar == std::string::npos) continue;
      std::string op = line.substr(0, bar);
      while (!op.empty() && op.back() == ' ') op.pop_back();
      std::istringstream durations(line.substr(bar + 1));
      double us = 0;
      while (durations >> us) table[op].push_back(us);
    }
  }

  // Advances the stream by the operation's next duration; false when the table lacks it.
  bool run(const void* stream, const std::string& op) {
    std::lock_guard lock(mu);
    load();
    if (const char* log = std::getenv("PHANTORA_STANDIN_GPU_LOG")) {
      std::ofstream(log, std::ios::app) << op << "\n";
    }
    const auto it = table.find(op);
    if (it == table.end() || it->second.empty()) {
      if (const char* fallback = std::getenv("PHANTORA_STANDIN_GPU_DEFAULT_US")) {
        stream_us[stream] += std::atof(fallback);
        return true;
      }
      std::fprintf(stderr, "standin gpu: no duration for '%s'\n", op.c_str());
      return false;
    }
    const size_t k = calls[op]++;
    stream_us[stream] += it->second[k % it->second.size()];
    return true;
  }
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

}  // namespace

extern "C" {

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  std::lock_guard lock(gpu().mu);
  const uintptr_t p = gpu().next_device;
  gpu().next_device += (bytes + 255) / 256 * 256 + 256;
  gpu().device_allocations[p] = bytes;
  *ptr = reinterpret_cast<void*>(p);
  return cudaSuccess;
}
cudaError_t cudaFree(void* ptr) {
  std::lock_guard lock(gpu().mu);
  return gpu().device_allocations.erase(reinterpret_cast<uintptr_t>(ptr)) == 1
             ? cudaSuccess
             : cudaErrorInvalidValue;
}
cudaError_t cudaMallocHost(void** ptr, size_t bytes) {
  *ptr = std::malloc(bytes);
  std::lock_guard lock(gpu().mu);
  gpu().pinned.insert(*ptr);
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void* ptr) {
  std::lock_guard lock(gpu().mu);
  if (gpu().pinned.erase(ptr) != 1) return cudaErrorInvalidValue;
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void*, int, size_t, cudaStream_t) {
  return cudaSuccess;  // scratch initialisation: not timed
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  bool pinned = false;
  {
    std::lock_guard lock(gpu().mu);
    pinned = gpu().pinned.count(dst) + gpu().pinned.count(src) > 0;
  }
  const bool host = kind != cudaMemcpyDeviceToDevice;
  const std::string op = "cudaMemcpyAsync kind=" + std::to_string(static_cast<int>(kind)) +
                         " bytes=" + std::to_string(bytes) +
                         " host=" + (host ? (pinned ? "pinned" : "pageable") : "none");
  return gpu().run(stream, op) ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  *stream = reinterpret_cast<cudaStream_t>(new char);
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete reinterpret_cast<char*>(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = reinterpret_cast<cudaEvent_t>(new char);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<char*>(event);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  std::lock_guard lock(gpu().mu);
  gpu().event_us[event] = gpu().stream_us[stream];
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) {
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  std::lock_guard lock(gpu().mu);
  auto& ev = gpu().event_us;
  if (ev.count(start) == 0 || ev.count(end) == 0) return cudaErrorInvalidResourceHandle;
  *ms = static_cast<float>((ev[end] - ev[start]) / 1000.0);
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
const char* cudaGetErrorString(cudaError_t error) {
  return error == cudaErrorInvalidValue ? "invalid argument (stand-in)" : "error (stand-in)";
}

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = reinterpret_cast<cublasHandle_t>(new cudaStream_t(nullptr));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete reinterpret_cast<cudaStream_t*>(handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  *reinterpret_cast<cudaStream_t*>(handle) = stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void*, const void*, cudaDataType atype, int lda, long long stride_a, const void*,
    cudaDataType btype, int ldb, long long stride_b, const void* beta, void*, cudaDataType ctype,
    int ldc, long long stride_c, int batch, cublasComputeType_t compute, cublasGemmAlgo_t) {
  float beta_f = 0;  // the tests use 32F compute types
  std::memcpy(&beta_f, beta, sizeof(beta_f));
  std::ostringstream op;
  op << "cublasGemmStridedBatchedEx opa=" << transa << " opb=" << transb << " m=" << m << " n=" << n
     << " k=" << k << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc << " stride_a=" << stride_a
     << " stride_b=" << stride_b << " stride_c=" << stride_c << " batch=" << batch
     << " atype=" << atype << " btype=" << btype << " ctype=" << ctype << " compute=" << compute
     << " beta=" << beta_f;
  const cudaStream_t stream = *reinterpret_cast<cudaStream_t*>(handle);
  return gpu().run(stream, op.str()) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}
cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  *value = type == MAJOR_VERSION ? 13 : type == MINOR_VERSION ? 1 : 7;
  return CUBLAS_STATUS_SUCCESS;
}

CUresult cuInit(unsigned int) {
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  const char* env = std::getenv("PHANTORA_STANDIN_GPU_NAME");
  std::snprintf(name, static_cast<size_t>(len), "%s", env != nullptr ? env : "NVIDIA H200");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
  // H200's maximum SM and memory clocks in kHz.
  *value = attribute == CU_DEVICE_ATTRIBUTE_CLOCK_RATE          ? 1980000
           : attribute == CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE ? 3201000
                                                                : 0;
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

}  // extern "C"
