// A stand-in for a GPU with known kernel durations: exports the CUDA runtime, cuBLAS and driver
// entry points the profiler calls (profiler/include/phantora/profiler/cuda_api.hpp) and plays a
// single device whose streams advance by durations read from a table.
//
//   PHANTORA_STANDIN_GPU_TIMES  file of lines `<operation> | <us> <us> ...`; the k-th call of an
//                               operation takes the (k mod n)-th duration. An operation missing
//                               from the table fails loudly (the call returns an error). A
//                               negative duration is a fault, as an illegal address is: the call
//                               fails and so does every later allocation and operation.
//   PHANTORA_STANDIN_GPU_LOG    every timed call, one `<operation>` line each, appended; and
//                               each untimed copy on the default stream (the profiler filling
//                               a scratch buffer) as `scratch fill kind=K bytes=N`.
//   PHANTORA_STANDIN_GPU_NAME   what cuDeviceGetName reports (default "NVIDIA H200").
//   PHANTORA_STANDIN_GPU_DEFAULT_US  a duration for operations missing from the table, instead
//                               of failing (scripts/gpu-check.sh --dry-run).
//   PHANTORA_STANDIN_GPU_SYNC_US  real time cudaStreamSynchronize takes to return (default 0):
//                               the host-observed latency a launch round trip measures.
//   PHANTORA_STANDIN_GPU_PARAMS  file of lines `<kernel name> | <size> <size> ...`: the
//                               parameter sizes cuFuncGetParamInfo reports (offsets aligned
//                               to each size, at most 8); a kernel missing from it is not found.
//
// <operation> spells the call's arguments that decide its duration, e.g.
// `cublasGemmStridedBatchedEx opa=1 opb=0 m=256 n=512 k=128 lda=128 ldb=128 ldc=256 ...` and
// `cudaMemcpyAsync kind=1 bytes=1048576 host=pinned` and `cublasLtMatmul compute=68 ... A=14:...`,
// and `cuLaunchKernel <name> grid=X,Y,Z block=X,Y,Z smem=N args=<param>;<param>...` with each
// parameter's bytes in hex, except that an 8-byte word holding an address inside a stand-in
// allocation is written `[@<allocation size>+<offset>]`.
// Events read the stream's clock, so cudaEventElapsedTime is the sum of the durations recorded
// between two events.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Function {
  std::string name;
  std::vector<size_t> sizes;
};

struct Gpu {
  std::mutex mu;
  std::map<std::string, std::vector<double>> table;
  std::map<std::string, size_t> calls;
  std::map<const void*, double> stream_us;  // each stream's clock; null is the default stream
  std::map<const void*, double> event_us;
  std::set<const void*> pinned;
  std::list<Function> functions;  // what cuModuleGetFunction handed out (stable addresses)
  std::map<uintptr_t, size_t> device_allocations;
  uintptr_t next_device = 0x7f0000000000;  // never dereferenced: the stand-in computes nothing
  std::string loaded_path;
  bool faulted = false;  // a sticky error: the device takes no more work

  // (Re)reads the table when PHANTORA_STANDIN_GPU_TIMES names another file than last time, and
  // starts its cycles afresh: one process (a gtest binary) may play several tables in turn.
  void load() {
    const char* path = std::getenv("PHANTORA_STANDIN_GPU_TIMES");
    if (path == nullptr || loaded_path == path) return;
    loaded_path = path;
    table.clear();
    calls.clear();
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

  // Appends `line` to PHANTORA_STANDIN_GPU_LOG, when set. Called with `mu` held or not taken.
  static void append_log(const std::string& line) {
    if (const char* log = std::getenv("PHANTORA_STANDIN_GPU_LOG")) {
      std::ofstream(log, std::ios::app) << line << "\n";
    }
  }
  void log(const std::string& line) {
    std::lock_guard lock(mu);
    append_log(line);
  }

  // Advances the stream by the operation's next duration; false when the table lacks it.
  bool run(const void* stream, const std::string& op) {
    std::lock_guard lock(mu);
    load();
    append_log(op);
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
    const double us = it->second[k % it->second.size()];
    if (us < 0) faulted = true;
    if (faulted) return false;
    stream_us[stream] += us;
    return true;
  }
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

// Parameter sizes by kernel name, from PHANTORA_STANDIN_GPU_PARAMS.
std::vector<size_t> param_sizes(const std::string& kernel, bool& found) {
  found = false;
  const char* path = std::getenv("PHANTORA_STANDIN_GPU_PARAMS");
  std::ifstream in(path != nullptr ? path : "");
  for (std::string line; std::getline(in, line);) {
    const size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    std::string name = line.substr(0, bar);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name != kernel) continue;
    found = true;
    std::vector<size_t> sizes;
    std::istringstream in_sizes(line.substr(bar + 1));
    for (size_t n = 0; in_sizes >> n;) sizes.push_back(n);
    return sizes;
  }
  return {};
}

struct Module {
  uint32_t magic;
};

// A parameter as the launch's operation spells it (see the top of this file).
std::string spell_param(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n;) {
    if (i % 8 == 0 && i + 8 <= n) {
      uint64_t v = 0;
      std::memcpy(&v, p + i, 8);
      std::lock_guard lock(gpu().mu);
      auto it = gpu().device_allocations.upper_bound(v);
      if (it != gpu().device_allocations.begin()) {
        --it;
        if (v < it->first + it->second) {
          out += "[@" + std::to_string(it->second) + "+" + std::to_string(v - it->first) + "]";
          i += 8;
          continue;
        }
      }
    }
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
    ++i;
  }
  return out;
}

}  // namespace

extern "C" {

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  std::lock_guard lock(gpu().mu);
  if (gpu().faulted) return cudaErrorIllegalAddress;
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
cudaError_t cudaMemsetAsync(void*, int, size_t bytes, cudaStream_t stream) {
  // On the default stream: the profiler initialising a scratch buffer, not timed. On another:
  // a memset being measured.
  if (stream == nullptr) return cudaSuccess;
  return gpu().run(stream, "cudaMemsetAsync bytes=" + std::to_string(bytes))
             ? cudaSuccess
             : cudaErrorInvalidValue;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  // On the default stream: the profiler filling a scratch buffer, untimed, logged as such. On
  // another: a copy being measured.
  if (stream == nullptr) {
    gpu().log("scratch fill kind=" + std::to_string(static_cast<int>(kind)) +
              " bytes=" + std::to_string(bytes));
    return cudaSuccess;
  }
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
  if (const char* us = std::getenv("PHANTORA_STANDIN_GPU_SYNC_US")) {
    std::this_thread::sleep_for(std::chrono::microseconds(std::atol(us)));
  }
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
// cuBLASLt: descriptors hold what was set on them; the matmul's operation spells them out.
struct LtDesc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  int32_t transa = 0, transb = 0;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool bias = false;
};
struct LtLayout {
  cudaDataType type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = reinterpret_cast<cublasLtHandle_t>(new char);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete reinterpret_cast<char*>(handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(new LtDesc{compute, scale});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete reinterpret_cast<LtDesc*>(desc);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
  LtDesc& d = *reinterpret_cast<LtDesc*>(desc);
  if (attr == CUBLASLT_MATMUL_DESC_TRANSA && size == sizeof(int32_t)) {
    std::memcpy(&d.transa, buf, size);
  } else if (attr == CUBLASLT_MATMUL_DESC_TRANSB && size == sizeof(int32_t)) {
    std::memcpy(&d.transb, buf, size);
  } else if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE && size == sizeof(uint32_t)) {
    std::memcpy(&d.epilogue, buf, size);
  } else if (attr == CUBLASLT_MATMUL_DESC_BIAS_POINTER && size == sizeof(void*)) {
    d.bias = true;
  } else {
    std::fprintf(stderr, "standin gpu: matmul attribute %d of %zu bytes not handled\n",
                 static_cast<int>(attr), size);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(new LtLayout{type, rows, cols, ld});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete reinterpret_cast<LtLayout*>(layout);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  LtLayout& l = *reinterpret_cast<LtLayout*>(layout);
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && size == sizeof(int32_t)) {
    std::memcpy(&l.batch, buf, size);
  } else if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET && size == sizeof(int64_t)) {
    std::memcpy(&l.stride, buf, size);
  } else {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void*, const void*,
                              cublasLtMatrixLayout_t a, const void*, cublasLtMatrixLayout_t b,
                              const void* beta, const void*, cublasLtMatrixLayout_t c, void*,
                              cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t*, void*,
                              size_t workspace, cudaStream_t stream) {
  const LtDesc& m = *reinterpret_cast<const LtDesc*>(desc);
  auto spell = [](cublasLtMatrixLayout_t layout) {
    const LtLayout& l = *reinterpret_cast<const LtLayout*>(layout);
    std::ostringstream o;
    o << l.type << ":" << l.rows << "x" << l.cols << ":ld" << l.ld << ":batch" << l.batch
      << ":stride" << l.stride;
    return o.str();
  };
  float beta_f = 0;  // the tests use 32F scale types
  std::memcpy(&beta_f, beta, sizeof(beta_f));
  std::ostringstream op;
  op << "cublasLtMatmul compute=" << m.compute << " scale=" << m.scale << " transa=" << m.transa
     << " transb=" << m.transb << " epilogue=" << m.epilogue << " bias=" << m.bias
     << " A=" << spell(a) << " B=" << spell(b) << " C=" << spell(c) << " D=" << spell(d)
     << " beta=" << beta_f << " workspace=" << workspace;
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
CUresult cuGetErrorString(CUresult error, const char** text) {
  *text = error == CUDA_ERROR_NOT_FOUND ? "named symbol not found (stand-in)" : "error (stand-in)";
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  // What the shim saves: a fat binary (nvcc's registrations) or an ELF cubin (the driver's).
  uint32_t magic = 0;
  if (image != nullptr) std::memcpy(&magic, image, 4);
  if (magic != 0xBA55ED50u && magic != 0x464c457fu) return CUDA_ERROR_INVALID_IMAGE;
  *module = reinterpret_cast<CUmodule>(new Module{magic});
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule module) {
  delete reinterpret_cast<Module*>(module);
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  bool found = false;
  std::vector<size_t> sizes = param_sizes(name, found);
  if (!found) return CUDA_ERROR_NOT_FOUND;
  std::lock_guard lock(gpu().mu);
  gpu().functions.push_back(Function{name, std::move(sizes)});
  *f = reinterpret_cast<CUfunction>(&gpu().functions.back());
  return CUDA_SUCCESS;
}
CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
  const Function& fn = *reinterpret_cast<const Function*>(f);
  if (index >= fn.sizes.size()) return CUDA_ERROR_INVALID_VALUE;
  size_t at = 0;
  for (size_t i = 0;; ++i) {
    const size_t align = std::min<size_t>(fn.sizes[i], 8);
    at = (at + align - 1) / align * align;
    if (i == index) break;
    at += fn.sizes[i];
  }
  *offset = at;
  *size = fn.sizes[index];
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream stream, void** params,
                        void** extra) {
  const Function& fn = *reinterpret_cast<const Function*>(f);
  if (extra != nullptr || (params == nullptr && !fn.sizes.empty())) return CUDA_ERROR_INVALID_VALUE;
  std::ostringstream op;
  op << "cuLaunchKernel " << fn.name << " grid=" << gx << "," << gy << "," << gz << " block=" << bx
     << "," << by << "," << bz << " smem=" << smem << " args=";
  for (size_t i = 0; i < fn.sizes.size(); ++i) {
    op << (i > 0 ? ";" : "")
       << spell_param(static_cast<const unsigned char*>(params[i]), fn.sizes[i]);
  }
  return gpu().run(stream, op.str()) ? CUDA_SUCCESS : CUDA_ERROR_LAUNCH_FAILED;
}
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

}  // extern "C"
