// cudaDeviceGetAttribute: every attribute read from the same filled cudaDeviceProp that
// cudaGetDeviceProperties returns, so the two can never disagree.
#include "device_props.hpp"
#include "device_props_common.hpp"

namespace phantora::intercept {
namespace {

// CUDA 12's cudaDevAttrCooperativeMultiDeviceLaunch; the number is reserved in CUDA 13.
constexpr int kCuda12CooperativeMultiDeviceLaunch = 96;
// Memory synchronisation domains: 4 on Hopper and later, 1 before (CUDA programming guide,
// "Memory Synchronization Domains").
constexpr int kMemSyncDomainsSm90 = 4;
constexpr int kSm90Major = 9;

int clamp_to_int(size_t v) {
  return v > INT_MAX ? INT_MAX : static_cast<int>(v);
}

}  // namespace

cudaError_t device_attribute(int* value, cudaDeviceAttr attr, const wire::DeviceSpec& spec,
                             int ordinal, int host, int gpus_per_host) {
  if (value == nullptr) return cudaErrorInvalidValue;
  cudaDeviceProp p;
  fill_device_prop_v13(&p, spec, ordinal, host, gpus_per_host);
  using L = detail::CommonLimits;

  int v = 0;
  switch (static_cast<int>(attr)) {
    // clang-format off
    case cudaDevAttrMaxThreadsPerBlock: v = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: v = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: v = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: v = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: v = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: v = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: v = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: v = clamp_to_int(p.sharedMemPerBlock); break;
    case cudaDevAttrTotalConstantMemory: v = clamp_to_int(p.totalConstMem); break;
    case cudaDevAttrWarpSize: v = p.warpSize; break;
    case cudaDevAttrMaxPitch: v = clamp_to_int(p.memPitch); break;
    case cudaDevAttrMaxRegistersPerBlock: v = p.regsPerBlock; break;
    case cudaDevAttrClockRate: v = spec.clock_khz; break;
    case cudaDevAttrTextureAlignment: v = clamp_to_int(p.textureAlignment); break;
    case cudaDevAttrGpuOverlap: v = p.asyncEngineCount > 0 ? 1 : 0; break;
    case cudaDevAttrMultiProcessorCount: v = p.multiProcessorCount; break;
    case cudaDevAttrKernelExecTimeout: v = 0; break;
    case cudaDevAttrIntegrated: v = p.integrated; break;
    case cudaDevAttrCanMapHostMemory: v = p.canMapHostMemory; break;
    case cudaDevAttrComputeMode: v = cudaComputeModeDefault; break;
    case cudaDevAttrMaxTexture1DWidth: v = p.maxTexture1D; break;
    case cudaDevAttrMaxTexture2DWidth: v = p.maxTexture2D[0]; break;
    case cudaDevAttrMaxTexture2DHeight: v = p.maxTexture2D[1]; break;
    case cudaDevAttrMaxTexture3DWidth: v = p.maxTexture3D[0]; break;
    case cudaDevAttrMaxTexture3DHeight: v = p.maxTexture3D[1]; break;
    case cudaDevAttrMaxTexture3DDepth: v = p.maxTexture3D[2]; break;
    case cudaDevAttrMaxTexture2DLayeredWidth: v = p.maxTexture2DLayered[0]; break;
    case cudaDevAttrMaxTexture2DLayeredHeight: v = p.maxTexture2DLayered[1]; break;
    case cudaDevAttrMaxTexture2DLayeredLayers: v = p.maxTexture2DLayered[2]; break;
    case cudaDevAttrSurfaceAlignment: v = clamp_to_int(p.surfaceAlignment); break;
    case cudaDevAttrConcurrentKernels: v = p.concurrentKernels; break;
    case cudaDevAttrEccEnabled: v = p.ECCEnabled; break;
    case cudaDevAttrPciBusId: v = p.pciBusID; break;
    case cudaDevAttrPciDeviceId: v = p.pciDeviceID; break;
    case cudaDevAttrTccDriver: v = p.tccDriver; break;
    case cudaDevAttrMemoryClockRate: v = spec.memory_clock_khz; break;
    case cudaDevAttrGlobalMemoryBusWidth: v = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: v = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrAsyncEngineCount: v = p.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: v = p.unifiedAddressing; break;
    case cudaDevAttrMaxTexture1DLayeredWidth: v = p.maxTexture1DLayered[0]; break;
    case cudaDevAttrMaxTexture1DLayeredLayers: v = p.maxTexture1DLayered[1]; break;
    case cudaDevAttrMaxTexture2DGatherWidth: v = p.maxTexture2DGather[0]; break;
    case cudaDevAttrMaxTexture2DGatherHeight: v = p.maxTexture2DGather[1]; break;
    case cudaDevAttrMaxTexture3DWidthAlt: v = p.maxTexture3DAlt[0]; break;
    case cudaDevAttrMaxTexture3DHeightAlt: v = p.maxTexture3DAlt[1]; break;
    case cudaDevAttrMaxTexture3DDepthAlt: v = p.maxTexture3DAlt[2]; break;
    case cudaDevAttrPciDomainId: v = p.pciDomainID; break;
    case cudaDevAttrTexturePitchAlignment: v = clamp_to_int(p.texturePitchAlignment); break;
    case cudaDevAttrMaxTextureCubemapWidth: v = p.maxTextureCubemap; break;
    case cudaDevAttrMaxTextureCubemapLayeredWidth: v = p.maxTextureCubemapLayered[0]; break;
    case cudaDevAttrMaxTextureCubemapLayeredLayers: v = p.maxTextureCubemapLayered[1]; break;
    case cudaDevAttrMaxSurface1DWidth: v = p.maxSurface1D; break;
    case cudaDevAttrMaxSurface2DWidth: v = p.maxSurface2D[0]; break;
    case cudaDevAttrMaxSurface2DHeight: v = p.maxSurface2D[1]; break;
    case cudaDevAttrMaxSurface3DWidth: v = p.maxSurface3D[0]; break;
    case cudaDevAttrMaxSurface3DHeight: v = p.maxSurface3D[1]; break;
    case cudaDevAttrMaxSurface3DDepth: v = p.maxSurface3D[2]; break;
    case cudaDevAttrMaxSurface1DLayeredWidth: v = p.maxSurface1DLayered[0]; break;
    case cudaDevAttrMaxSurface1DLayeredLayers: v = p.maxSurface1DLayered[1]; break;
    case cudaDevAttrMaxSurface2DLayeredWidth: v = p.maxSurface2DLayered[0]; break;
    case cudaDevAttrMaxSurface2DLayeredHeight: v = p.maxSurface2DLayered[1]; break;
    case cudaDevAttrMaxSurface2DLayeredLayers: v = p.maxSurface2DLayered[2]; break;
    case cudaDevAttrMaxSurfaceCubemapWidth: v = p.maxSurfaceCubemap; break;
    case cudaDevAttrMaxSurfaceCubemapLayeredWidth: v = p.maxSurfaceCubemapLayered[0]; break;
    case cudaDevAttrMaxSurfaceCubemapLayeredLayers: v = p.maxSurfaceCubemapLayered[1]; break;
    case cudaDevAttrMaxTexture1DLinearWidth: v = L::kTex1DLinear; break;
    case cudaDevAttrMaxTexture2DLinearWidth: v = p.maxTexture2DLinear[0]; break;
    case cudaDevAttrMaxTexture2DLinearHeight: v = p.maxTexture2DLinear[1]; break;
    case cudaDevAttrMaxTexture2DLinearPitch: v = p.maxTexture2DLinear[2]; break;
    case cudaDevAttrMaxTexture2DMipmappedWidth: v = p.maxTexture2DMipmap[0]; break;
    case cudaDevAttrMaxTexture2DMipmappedHeight: v = p.maxTexture2DMipmap[1]; break;
    case cudaDevAttrComputeCapabilityMajor: v = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: v = p.minor; break;
    case cudaDevAttrMaxTexture1DMipmappedWidth: v = p.maxTexture1DMipmap; break;
    case cudaDevAttrStreamPrioritiesSupported: v = p.streamPrioritiesSupported; break;
    case cudaDevAttrGlobalL1CacheSupported: v = p.globalL1CacheSupported; break;
    case cudaDevAttrLocalL1CacheSupported: v = p.localL1CacheSupported; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = clamp_to_int(p.sharedMemPerMultiprocessor); break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: v = p.regsPerMultiprocessor; break;
    case cudaDevAttrManagedMemory: v = p.managedMemory; break;
    case cudaDevAttrIsMultiGpuBoard: v = p.isMultiGpuBoard; break;
    case cudaDevAttrMultiGpuBoardGroupID: v = p.multiGpuBoardGroupID; break;
    case cudaDevAttrHostNativeAtomicSupported: v = p.hostNativeAtomicSupported; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: v = L::kSingleToDoubleRatio; break;
    case cudaDevAttrPageableMemoryAccess: v = p.pageableMemoryAccess; break;
    case cudaDevAttrConcurrentManagedAccess: v = p.concurrentManagedAccess; break;
    case cudaDevAttrComputePreemptionSupported: v = p.computePreemptionSupported; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: v = p.canUseHostPointerForRegisteredMem; break;
    case cudaDevAttrCooperativeLaunch: v = p.cooperativeLaunch; break;
    case kCuda12CooperativeMultiDeviceLaunch: v = p.cooperativeLaunch; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = clamp_to_int(p.sharedMemPerBlockOptin); break;
    case cudaDevAttrCanFlushRemoteWrites: v = 0; break;
    case cudaDevAttrHostRegisterSupported: v = p.hostRegisterSupported; break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: v = p.pageableMemoryAccessUsesHostPageTables; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: v = p.directManagedMemAccessFromHost; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: v = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMaxPersistingL2CacheSize: v = p.persistingL2CacheMaxSize; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: v = p.accessPolicyMaxWindowSize; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: v = clamp_to_int(p.reservedSharedMemPerBlock); break;
    case cudaDevAttrSparseCudaArraySupported: v = p.sparseCudaArraySupported; break;
    case cudaDevAttrHostRegisterReadOnlySupported: v = p.hostRegisterReadOnlySupported; break;
    case cudaDevAttrTimelineSemaphoreInteropSupported: v = p.timelineSemaphoreInteropSupported; break;
    case cudaDevAttrMemoryPoolsSupported: v = p.memoryPoolsSupported; break;
    case cudaDevAttrGPUDirectRDMASupported: v = p.gpuDirectRDMASupported; break;
    case cudaDevAttrGPUDirectRDMAFlushWritesOptions: v = static_cast<int>(p.gpuDirectRDMAFlushWritesOptions); break;
    case cudaDevAttrGPUDirectRDMAWritesOrdering: v = p.gpuDirectRDMAWritesOrdering; break;
    case cudaDevAttrMemoryPoolSupportedHandleTypes: v = static_cast<int>(p.memoryPoolSupportedHandleTypes); break;
    case cudaDevAttrClusterLaunch: v = p.clusterLaunch; break;
    case cudaDevAttrDeferredMappingCudaArraySupported: v = p.deferredMappingCudaArraySupported; break;
    case cudaDevAttrIpcEventSupport: v = p.ipcEventSupported; break;
    case cudaDevAttrMemSyncDomainCount: v = p.major >= kSm90Major ? kMemSyncDomainsSm90 : 1; break;
    case cudaDevAttrNumaConfig: v = p.deviceNumaConfig; break;
    case cudaDevAttrNumaId: v = p.deviceNumaId; break;
    case cudaDevAttrMpsEnabled: v = p.mpsEnabled; break;
    case cudaDevAttrHostNumaId: v = p.hostNumaId; break;
    case cudaDevAttrD3D12CigSupported: v = 0; break;
    case cudaDevAttrVulkanCigSupported: v = 0; break;
    case cudaDevAttrGpuPciDeviceId: v = static_cast<int>(p.gpuPciDeviceID); break;
    case cudaDevAttrGpuPciSubsystemId: v = static_cast<int>(p.gpuPciSubsystemID); break;
    case cudaDevAttrHostNumaMemoryPoolsSupported: v = 0; break;
    case cudaDevAttrHostNumaMultinodeIpcSupported: v = p.hostNumaMultinodeIpcSupported; break;
    case cudaDevAttrHostMemoryPoolsSupported: v = 1; break;
    case cudaDevAttrOnlyPartialHostNativeAtomicSupported: v = 0; break;
    // clang-format on
    default:
      // cudaDevAttrReserved* and numbers no header defines.
      return cudaErrorInvalidValue;
  }
  *value = v;
  return cudaSuccess;
}

}  // namespace phantora::intercept
