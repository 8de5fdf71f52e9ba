// The driver's module and launch API, the way code generated at run time reaches the GPU
// (Triton's launcher, PyTorch's static Triton launcher): load a cubin from memory and from a
// file, look kernels up by name, read and set their attributes, launch with cuLaunchKernel
// and cuLaunchKernelEx, unload. The kernels' durations are pinned (times.csv: dm_scale 40 us,
// dm_shift 60 us), so the events around the launches measure what the simulator charged.
// Usage: driver_modules CUBIN
#include <cuda.h>

#include <fstream>
#include <iterator>
#include <string>

#include "check.cuh"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), {});
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));  // also makes the primary context current

  // Triton's launcher checks every pointer argument this way: device memory is reachable,
  // ordinary host memory is not (CUDA_ERROR_INVALID_VALUE).
  CUdeviceptr dev = 0;
  unsigned int mem_type = 0;
  CU_CHECK(cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                 reinterpret_cast<CUdeviceptr>(d + 16)));
  CU_CHECK(cuPointerGetAttribute(&mem_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 reinterpret_cast<CUdeviceptr>(d)));
  std::printf("device_pointer_same %d\n", dev == reinterpret_cast<CUdeviceptr>(d + 16));
  std::printf("memory_type %u\n", mem_type);
  std::printf("host_pointer_attr %d\n",
              static_cast<int>(cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                                     reinterpret_cast<CUdeviceptr>(&image))));

  CUmodule from_data, from_file, missing_file;
  CU_CHECK(cuModuleLoadData(&from_data, image.data()));
  CU_CHECK(cuModuleLoad(&from_file, argv[1]));
  std::printf("load_missing_file %d\n",
              static_cast<int>(cuModuleLoad(&missing_file, "/nonexistent/kernels.cubin")));
  CUfunction scale, shift, shift_file, nope;
  CU_CHECK(cuModuleGetFunction(&scale, from_data, "dm_scale"));
  CU_CHECK(cuModuleGetFunction(&shift, from_data, "dm_shift"));
  CU_CHECK(cuModuleGetFunction(&shift_file, from_file, "dm_shift"));
  std::printf("get_missing_kernel %d\n",
              static_cast<int>(cuModuleGetFunction(&nope, from_data, "dm_absent")));
  // A prefix or a suffix of a kernel's name is not a kernel.
  std::printf("get_prefix_kernel %d\n",
              static_cast<int>(cuModuleGetFunction(&nope, from_data, "dm_sca")));
  std::printf("get_suffix_kernel %d\n",
              static_cast<int>(cuModuleGetFunction(&nope, from_data, "scale")));

  int max_threads = 0;
  CU_CHECK(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, shift));
  std::printf("max_threads %d\n", max_threads);
  // More than the default 48 KiB of dynamic shared memory must be asked for, and is granted
  // up to the device's opt-in limit (227 KiB on an H100).
  CU_CHECK(cuFuncSetAttribute(shift, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 << 10));
  int max_dynamic = 0;
  CU_CHECK(
      cuFuncGetAttribute(&max_dynamic, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shift));
  std::printf("max_dynamic_shared %d\n", max_dynamic);
  std::printf("set_too_much_shared %d\n",
              static_cast<int>(cuFuncSetAttribute(
                  shift, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 300 << 10)));

  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaEvent_t start, mid, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&mid));
  CHECK(cudaEventCreate(&stop));
  float f = 2.0f;
  void* args[] = {&d, &f};
  CHECK(cudaEventRecord(start, s));
  CU_CHECK(cuLaunchKernel(scale, 4, 1, 1, 128, 1, 1, 0, s, args, nullptr));
  CU_CHECK(cuLaunchKernel(scale, 4, 1, 1, 128, 1, 1, 0, s, args, nullptr));
  CHECK(cudaEventRecord(mid, s));
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 256, config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = 64 << 10;
  config.hStream = s;
  CU_CHECK(cuLaunchKernelEx(&config, shift, args, nullptr));
  CU_CHECK(cuLaunchKernelEx(&config, shift_file, args, nullptr));
  CHECK(cudaEventRecord(stop, s));
  CHECK(cudaEventSynchronize(stop));
  std::printf("launch_kernel_us %.3f\n", elapsed_us(start, mid));
  std::printf("launch_kernel_ex_us %.3f\n", elapsed_us(mid, stop));
  // Over the opt-in limit: refused, as the real driver refuses it.
  config.sharedMemBytes = 300 << 10;
  std::printf("launch_too_much_shared %d\n",
              static_cast<int>(cuLaunchKernelEx(&config, shift, args, nullptr)));

  // TMA descriptors (CUTLASS's Hopper GEMMs, torch._grouped_mm): a 2-D bf16 tile of the
  // buffer is accepted; a misaligned address, a row stride that is not a multiple of 16 bytes
  // and a 512-row box are refused (CUDA_ERROR_INVALID_VALUE), as the driver documents.
  alignas(64) CUtensorMap tmap;
  const cuuint64_t dims[2] = {64, 128};    // 64 bf16 per row, 128 rows
  const cuuint64_t strides[1] = {64 * 2};  // bytes between rows
  const cuuint32_t box[2] = {64, 64}, unit[2] = {1, 1}, big_box[2] = {64, 512};
  const cuuint64_t odd_strides[1] = {64 * 2 + 8};
  auto encode = [&](void* addr, const cuuint64_t* st, const cuuint32_t* bx) {
    return static_cast<int>(cuTensorMapEncodeTiled(
        &tmap, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, addr, dims, st, bx, unit,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  };
  std::printf("tensor_map_ok %d\n", encode(d, strides, box));
  std::printf("tensor_map_misaligned %d\n", encode(reinterpret_cast<char*>(d) + 8, strides, box));
  std::printf("tensor_map_bad_stride %d\n", encode(d, odd_strides, box));
  std::printf("tensor_map_big_box %d\n", encode(d, strides, big_box));

  CU_CHECK(cuModuleUnload(from_data));
  std::printf("get_after_unload %d\n",
              static_cast<int>(cuModuleGetFunction(&nope, from_data, "dm_scale")));
  CU_CHECK(cuModuleUnload(from_file));
  std::printf("done\n");
  return 0;
}
