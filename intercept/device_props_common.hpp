// The fields CUDA 12 and CUDA 13 cudaDeviceProp share (same names, different offsets), filled
// by one template so that both layouts report the same device. Private to device_props*.cpp.
#pragma once

#include <algorithm>
#include <climits>
#include <cstring>

#include "device_props.hpp"

namespace phantora::intercept::detail {

// Limits that are the same on every part we simulate (CC 8.0, 9.0, 10.0): the CUDA C++
// Programming Guide's "Technical Specifications per Compute Capability" table, and deviceQuery
// output of A100 and H100 (texture sizes, pitch, alignment).
struct CommonLimits {
  static constexpr int kWarpSize = 32;
  static constexpr int kMaxBlockDim[3] = {1024, 1024, 64};
  static constexpr int kMaxGridDim[3] = {INT_MAX, 65535, 65535};
  static constexpr size_t kMemPitch = INT_MAX;
  static constexpr size_t kTotalConstMem = 64 * 1024;
  static constexpr size_t kTextureAlignment = 512;
  static constexpr size_t kTexturePitchAlignment = 32;
  static constexpr size_t kSurfaceAlignment = 512;
  static constexpr int kTex1D = 131072;
  static constexpr int kTex1DMipmap = 32768;
  static constexpr int kTex1DLinear = 1 << 28;  // CUDA 12 field only
  static constexpr int kTex2D[2] = {131072, 65536};
  static constexpr int kTex2DMipmap[2] = {32768, 32768};
  static constexpr int kTex2DLinear[3] = {131072, 65000, 2097120};  // width, height, pitch
  static constexpr int kTex2DGather[2] = {32768, 32768};
  static constexpr int kTex3D[3] = {16384, 16384, 16384};
  static constexpr int kTex3DAlt[3] = {8192, 8192, 32768};
  static constexpr int kTexCubemap = 32768;
  static constexpr int kTex1DLayered[2] = {32768, 2048};
  static constexpr int kTex2DLayered[3] = {32768, 32768, 2048};
  static constexpr int kTexCubemapLayered[2] = {32768, 2046};
  static constexpr int kSurf1D = 32768;
  static constexpr int kSurf2D[2] = {131072, 65536};
  static constexpr int kSurf3D[3] = {16384, 16384, 16384};
  static constexpr int kSurf1DLayered[2] = {32768, 2048};
  static constexpr int kSurf2DLayered[3] = {32768, 32768, 2048};
  static constexpr int kSurfCubemap = 32768;
  static constexpr int kSurfCubemapLayered[2] = {32768, 2046};
  // cudaAccessPolicyWindow::num_bytes limit reported by A100 and H100 (128 MiB - 4 KiB).
  static constexpr int kAccessPolicyMaxWindow = 134213632;
  // FP32 : FP64 throughput of the datacenter parts (A100/H100: 19.5 : 9.7, 67 : 34 TFLOPS).
  static constexpr int kSingleToDoubleRatio = 2;
};

template <size_t N>
void copy_array(int (&dst)[N], const int (&src)[N]) {
  std::copy(src, src + N, dst);
}

template <class Prop>
void fill_common(Prop& p, const wire::DeviceSpec& spec, const GpuIdentity& id) {
  using L = CommonLimits;
  std::memset(&p, 0, sizeof(p));
  std::memcpy(p.name, spec.name, std::min(sizeof(p.name) - 1, sizeof(spec.name)));
  static_assert(sizeof(p.uuid) == sizeof(id.uuid));
  std::memcpy(&p.uuid, &id.uuid, sizeof(p.uuid));
  // luid / luidDeviceNodeMask are Windows-only: zero on Linux.
  p.totalGlobalMem = spec.total_global_mem;
  p.sharedMemPerBlock = spec.shared_mem_per_block;
  p.regsPerBlock = spec.regs_per_block;
  p.warpSize = L::kWarpSize;
  p.memPitch = L::kMemPitch;
  p.maxThreadsPerBlock = spec.max_threads_per_block;
  copy_array(p.maxThreadsDim, L::kMaxBlockDim);
  copy_array(p.maxGridSize, L::kMaxGridDim);
  p.totalConstMem = L::kTotalConstMem;
  p.major = spec.cc_major;
  p.minor = spec.cc_minor;
  p.textureAlignment = L::kTextureAlignment;
  p.texturePitchAlignment = L::kTexturePitchAlignment;
  p.multiProcessorCount = spec.multiprocessor_count;
  p.integrated = 0;
  p.canMapHostMemory = 1;
  p.maxTexture1D = L::kTex1D;
  p.maxTexture1DMipmap = L::kTex1DMipmap;
  copy_array(p.maxTexture2D, L::kTex2D);
  copy_array(p.maxTexture2DMipmap, L::kTex2DMipmap);
  copy_array(p.maxTexture2DLinear, L::kTex2DLinear);
  copy_array(p.maxTexture2DGather, L::kTex2DGather);
  copy_array(p.maxTexture3D, L::kTex3D);
  copy_array(p.maxTexture3DAlt, L::kTex3DAlt);
  p.maxTextureCubemap = L::kTexCubemap;
  copy_array(p.maxTexture1DLayered, L::kTex1DLayered);
  copy_array(p.maxTexture2DLayered, L::kTex2DLayered);
  copy_array(p.maxTextureCubemapLayered, L::kTexCubemapLayered);
  p.maxSurface1D = L::kSurf1D;
  copy_array(p.maxSurface2D, L::kSurf2D);
  copy_array(p.maxSurface3D, L::kSurf3D);
  copy_array(p.maxSurface1DLayered, L::kSurf1DLayered);
  copy_array(p.maxSurface2DLayered, L::kSurf2DLayered);
  p.maxSurfaceCubemap = L::kSurfCubemap;
  copy_array(p.maxSurfaceCubemapLayered, L::kSurfCubemapLayered);
  p.surfaceAlignment = L::kSurfaceAlignment;
  p.concurrentKernels = 1;
  p.ECCEnabled = 1;  // datacenter parts ship with ECC on
  p.pciBusID = id.pci_bus;
  p.pciDeviceID = id.pci_device;  // the device number on the bus, not the part's PCI id
  p.pciDomainID = id.pci_domain;
  p.tccDriver = 0;
  p.asyncEngineCount = spec.async_engine_count;
  p.unifiedAddressing = 1;
  p.memoryBusWidth = spec.memory_bus_width_bits;
  p.l2CacheSize = spec.l2_cache_bytes;
  p.persistingL2CacheMaxSize = spec.persisting_l2_cache_max_bytes;
  p.maxThreadsPerMultiProcessor = spec.max_threads_per_multiprocessor;
  p.streamPrioritiesSupported = 1;
  p.globalL1CacheSupported = 1;
  p.localL1CacheSupported = 1;
  p.sharedMemPerMultiprocessor = spec.shared_mem_per_multiprocessor;
  p.regsPerMultiprocessor = spec.regs_per_multiprocessor;
  p.managedMemory = 1;
  p.isMultiGpuBoard = 0;
  p.multiGpuBoardGroupID = id.pci_bus;  // one GPU per board: any per-GPU unique value
  p.hostNativeAtomicSupported = 0;      // PCIe-attached (x86 host, not Grace)
  p.pageableMemoryAccess = 0;
  p.concurrentManagedAccess = 1;
  p.computePreemptionSupported = 1;
  p.canUseHostPointerForRegisteredMem = 1;
  p.cooperativeLaunch = spec.cooperative_launch;
  p.sharedMemPerBlockOptin = spec.shared_mem_per_block_optin;
  p.pageableMemoryAccessUsesHostPageTables = 0;
  p.directManagedMemAccessFromHost = 0;
  p.maxBlocksPerMultiProcessor = spec.max_blocks_per_multiprocessor;
  p.accessPolicyMaxWindowSize = L::kAccessPolicyMaxWindow;
  p.reservedSharedMemPerBlock = spec.reserved_shared_mem_per_block;
  p.hostRegisterSupported = 1;
  p.sparseCudaArraySupported = 1;
  p.hostRegisterReadOnlySupported = 1;
  p.timelineSemaphoreInteropSupported = 1;
  p.memoryPoolsSupported = 1;
  p.gpuDirectRDMASupported = 1;
  p.gpuDirectRDMAFlushWritesOptions = cudaFlushGPUDirectRDMAWritesOptionHost;
  p.gpuDirectRDMAWritesOrdering = cudaGPUDirectRDMAWritesOrderingOwner;
  p.memoryPoolSupportedHandleTypes = cudaMemHandleTypePosixFileDescriptor;
  p.deferredMappingCudaArraySupported = 1;
  p.ipcEventSupported = 1;
  p.clusterLaunch = spec.cluster_launch;
  p.unifiedFunctionPointers = 1;
}

}  // namespace phantora::intercept::detail
