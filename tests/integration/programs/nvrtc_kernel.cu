// A kernel compiled at run time with NVRTC, as PyTorch's jitted element-wise kernels are
// (erfinv in torch.nn.init.trunc_normal_), loaded with cuModuleLoadData and launched with
// cuLaunchKernel. NVRTC itself asks the driver for one of its private tables
// (cuGetExportTable) while compiling, and compiles on without it. Prints each step for check.py.
#include <nvrtc.h>

#include "check.cuh"

int main() {
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));  // the primary context
  const char* source =
      "extern \"C\" __global__ void rt_scale(float* x, float a) { x[threadIdx.x] *= a; }";
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source, "rt_scale.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    std::printf("FAILED nvrtcCreateProgram\n");
    return 1;
  }
  const char* options[] = {"--gpu-architecture=sm_90"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 1, options);
  std::printf("compile %d\n", static_cast<int>(compiled));
  size_t bytes = 0;
  if (compiled != NVRTC_SUCCESS || nvrtcGetCUBINSize(program, &bytes) != NVRTC_SUCCESS) return 1;
  std::printf("cubin_bytes %zu\n", bytes);
  char* cubin = new char[bytes];
  nvrtcGetCUBIN(program, cubin);

  CUmodule module;
  CUfunction function;
  CU_CHECK(cuModuleLoadData(&module, cubin));
  CU_CHECK(cuModuleGetFunction(&function, module, "rt_scale"));
  float* x = nullptr;
  CHECK(cudaMalloc(&x, 32 * sizeof(float)));
  float a = 2.0f;
  void* params[] = {&x, &a};
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, 0));
  CU_CHECK(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  std::printf("launch_us %.3f\n", elapsed_us(start, stop));
  CU_CHECK(cuModuleUnload(module));
  nvrtcDestroyProgram(&program);
  delete[] cubin;
  std::printf("done\n");
  return 0;
}
