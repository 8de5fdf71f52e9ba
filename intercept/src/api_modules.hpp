// Driver modules and launches (api_modules.cpp), handed out by the driver entry-point table
// (api_driver.cpp) to the libcuda.so.1 stand-in and to cudaGetDriverEntryPoint callers.
#pragma once

#include <cuda.h>

namespace phantora::shim {

CUresult drv_module_load(CUmodule* module, const char* path);
CUresult drv_module_load_data(CUmodule* module, const void* image);
CUresult drv_module_load_data_ex(CUmodule* module, const void* image, unsigned int options,
                                 CUjit_option* keys, void** values);
CUresult drv_module_unload(CUmodule module);
CUresult drv_module_get_function(CUfunction* out, CUmodule module, const char* name);
CUresult drv_func_get_attribute(int* value, CUfunction_attribute attr, CUfunction f);
CUresult drv_func_set_attribute(CUfunction f, CUfunction_attribute attr, int value);
CUresult drv_func_set_cache_config(CUfunction f, CUfunc_cache config);
CUresult drv_pointer_get_attribute(void* data, CUpointer_attribute attr, CUdeviceptr ptr);
template <bool PerThread>
CUresult drv_launch_kernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                           unsigned int bx, unsigned int by, unsigned int bz,
                           unsigned int shared_mem, CUstream stream, void** params, void** extra);
template <bool PerThread>
CUresult drv_launch_kernel_ex(const CUlaunchConfig* config, CUfunction f, void** params,
                              void** extra);

}  // namespace phantora::shim
