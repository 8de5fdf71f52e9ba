// libcuda.so.1 stand-in. PyTorch's libcaffe2_nvrtc.so links the driver library directly (its
// NVRTC/jiterator table binds cuDevicePrimaryCtxGetState, cuModuleLoadData, cuLaunchKernel ...
// at load time), and torch dlopens "libcuda.so.1" before the first use of a device. No driver
// exists here: this library, found first on LD_LIBRARY_PATH (`phantora run` puts its folder
// there), exports every function of the real driver. Those the shim implements forward to
// libphantora.so (preloaded) through phantora_driver_function; all others are generated stubs
// that fail loudly, naming themselves (stubs_libcuda.cpp, from the toolkit's stubs/libcuda.so).
#include <cuda.h>

#include <cstdio>
#include <cstdlib>

extern "C" void* phantora_driver_function(const char* name, int per_thread) __attribute__((weak));

namespace {

void* resolve(const char* name) {
  if (phantora_driver_function == nullptr) {
    std::fprintf(stderr,
                 "phantora: the libcuda.so.1 stand-in was called (%s) but libphantora.so is not "
                 "loaded; start the program with `phantora run`.\n",
                 name);
    std::abort();
  }
  void* f = phantora_driver_function(name, 0);
  if (f == nullptr) {
    std::fprintf(stderr, "phantora: %s is not implemented by the simulator's driver.\n", name);
    std::abort();
  }
  return f;
}

}  // namespace

// Defines NAME with the driver's signature, calling the shim's implementation of the same name.
#define PHANTORA_FORWARD(NAME, PARAMS, ARGS)                                       \
  extern "C" __attribute__((visibility("default"))) CUresult NAME PARAMS {         \
    static const auto impl = reinterpret_cast<CUresult(*) PARAMS>(resolve(#NAME)); \
    return impl ARGS;                                                              \
  }

PHANTORA_FORWARD(cuInit, (unsigned int flags), (flags))
PHANTORA_FORWARD(cuDriverGetVersion, (int* version), (version))
PHANTORA_FORWARD(cuGetExportTable, (const void** table, const CUuuid* id), (table, id))
PHANTORA_FORWARD(cuDeviceGet, (CUdevice * device, int ordinal), (device, ordinal))
PHANTORA_FORWARD(cuDeviceGetCount, (int* count), (count))
PHANTORA_FORWARD(cuDeviceGetAttribute, (int* value, CUdevice_attribute attr, CUdevice device),
                 (value, attr, device))
PHANTORA_FORWARD(cuDevicePrimaryCtxGetState, (CUdevice device, unsigned int* flags, int* active),
                 (device, flags, active))
PHANTORA_FORWARD(cuGetErrorString, (CUresult error, const char** str), (error, str))
PHANTORA_FORWARD(cuGetErrorName, (CUresult error, const char** str), (error, str))
PHANTORA_FORWARD(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice device), (ctx, device))
PHANTORA_FORWARD(cuCtxGetCurrent, (CUcontext * ctx), (ctx))
PHANTORA_FORWARD(cuCtxSetCurrent, (CUcontext ctx), (ctx))
PHANTORA_FORWARD(cuCtxPushCurrent, (CUcontext ctx), (ctx))
PHANTORA_FORWARD(cuCtxPopCurrent, (CUcontext * ctx), (ctx))
PHANTORA_FORWARD(cuModuleLoad, (CUmodule * module, const char* path), (module, path))
PHANTORA_FORWARD(cuModuleLoadData, (CUmodule * module, const void* image), (module, image))
PHANTORA_FORWARD(cuModuleLoadDataEx,
                 (CUmodule * module, const void* image, unsigned int n, CUjit_option* keys,
                  void** values),
                 (module, image, n, keys, values))
PHANTORA_FORWARD(cuModuleUnload, (CUmodule module), (module))
PHANTORA_FORWARD(cuModuleGetFunction, (CUfunction * f, CUmodule module, const char* name),
                 (f, module, name))
PHANTORA_FORWARD(cuFuncGetAttribute, (int* value, CUfunction_attribute attr, CUfunction f),
                 (value, attr, f))
PHANTORA_FORWARD(cuFuncSetAttribute, (CUfunction f, CUfunction_attribute attr, int value),
                 (f, attr, value))
PHANTORA_FORWARD(cuFuncSetCacheConfig, (CUfunction f, CUfunc_cache config), (f, config))
PHANTORA_FORWARD(cuLaunchKernel,
                 (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                  unsigned int by, unsigned int bz, unsigned int shared_mem, CUstream stream,
                  void** params, void** extra),
                 (f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra))
PHANTORA_FORWARD(cuLaunchKernelEx,
                 (const CUlaunchConfig* config, CUfunction f, void** params, void** extra),
                 (config, f, params, extra))
PHANTORA_FORWARD(cuPointerGetAttribute, (void* data, CUpointer_attribute attr, CUdeviceptr ptr),
                 (data, attr, ptr))
// The virtual-memory calls behind PyTorch's expandable segments: PyTorch 2.6 and earlier find
// them with dlsym on this library (c10's DriverAPI); later releases through
// cudaGetDriverEntryPoint, which the shim answers itself.
PHANTORA_FORWARD(cuMemGetAllocationGranularity,
                 (size_t * granularity, const CUmemAllocationProp* prop,
                  CUmemAllocationGranularity_flags option),
                 (granularity, prop, option))
PHANTORA_FORWARD(cuMemAddressReserve,
                 (CUdeviceptr * ptr, size_t size, size_t alignment, CUdeviceptr addr,
                  unsigned long long flags),
                 (ptr, size, alignment, addr, flags))
PHANTORA_FORWARD(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size))
PHANTORA_FORWARD(cuMemCreate,
                 (CUmemGenericAllocationHandle * handle, size_t size,
                  const CUmemAllocationProp* prop, unsigned long long flags),
                 (handle, size, prop, flags))
PHANTORA_FORWARD(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle))
PHANTORA_FORWARD(cuMemMap,
                 (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags),
                 (ptr, size, offset, handle, flags))
PHANTORA_FORWARD(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size))
PHANTORA_FORWARD(cuMemSetAccess,
                 (CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count),
                 (ptr, size, desc, count))
PHANTORA_FORWARD(cuTensorMapEncodeTiled,
                 (CUtensorMap * map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                  const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                  const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                  CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                  CUtensorMapFloatOOBfill oob),
                 (map, type, rank, address, dims, strides, box, element_strides, interleave,
                  swizzle, l2, oob))
