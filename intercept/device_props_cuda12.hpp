// The CUDA 12 layout of `struct cudaDeviceProp`, declared here because a shim built against
// CUDA 13 headers must still answer a CUDA-12-built program's cudaGetDeviceProperties_v2,
// whose struct has fields CUDA 13 removed (clockRate, memoryClockRate, computeMode, ...).
// The layout is an ABI fact of CUDA 12.x (checked against driver_types.h of the
// nvidia-cuda-runtime-cu12 12.9 wheel: same size and every field offset; the asserts below
// pin the size and the offsets that differ from CUDA 13).
#pragma once

#include <cstddef>

namespace phantora::intercept {

struct Cuda12Uuid {
  char bytes[16];
};

struct Cuda12DeviceProp {
  char name[256];
  Cuda12Uuid uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  // kHz; gone in 13
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;  // gone in 13
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;  // gone in 13
  int integrated;
  int canMapHostMemory;
  int computeMode;  // gone in 13
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;  // gone in 13
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;  // kHz; gone in 13
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;  // gone in 13
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;  // gone in 13
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int reserved[63];
};

// Verified against the real CUDA 12.9 header on x86-64 Linux (LP64): a throw-away program
// asserted offsetof and sizeof of all 94 fields equal to those of its cudaDeviceProp.
static_assert(sizeof(Cuda12DeviceProp) == 1032);
static_assert(offsetof(Cuda12DeviceProp, clockRate) == 348);
static_assert(offsetof(Cuda12DeviceProp, multiProcessorCount) == 388);
static_assert(offsetof(Cuda12DeviceProp, computeMode) == 404);
static_assert(offsetof(Cuda12DeviceProp, pciBusID) == 584);
static_assert(offsetof(Cuda12DeviceProp, memoryClockRate) == 608);
static_assert(offsetof(Cuda12DeviceProp, sharedMemPerMultiprocessor) == 640);
static_assert(offsetof(Cuda12DeviceProp, sharedMemPerBlockOptin) == 696);
static_assert(offsetof(Cuda12DeviceProp, reservedSharedMemPerBlock) == 720);
static_assert(offsetof(Cuda12DeviceProp, clusterLaunch) == 772);
static_assert(offsetof(Cuda12DeviceProp, reserved) == 780);

}  // namespace phantora::intercept
