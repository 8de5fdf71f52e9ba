#include "device_props.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "device_attr_list.hpp"  // generated from the toolkit's driver_types.h
#include "device_props_cuda12.hpp"
#include "phantora/kernels/gpu_catalog.hpp"

namespace phantora::intercept {
namespace {

const wire::DeviceSpec& h100() {
  static const wire::DeviceSpec spec =
      kernels::to_device_spec(kernels::GpuCatalog::builtin().find("h100"));
  return spec;
}

int attr(cudaDeviceAttr a, int ordinal = 0, int host = 0) {
  int v = -12345;
  EXPECT_EQ(device_attribute(&v, a, h100(), ordinal, host, 8), cudaSuccess) << a;
  return v;
}

TEST(DeviceProps, H100InTheCuda13Layout) {
  cudaDeviceProp p;
  std::memset(&p, 0xab, sizeof(p));  // everything must be overwritten
  fill_device_prop_v13(&p, h100(), 0, 0, 8);
  EXPECT_STREQ(p.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.multiProcessorCount, 132);
  EXPECT_EQ(p.totalGlobalMem, 85017755648u);
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.minor, 0);
  EXPECT_EQ(p.sharedMemPerBlockOptin, 227u * 1024);
  EXPECT_EQ(p.sharedMemPerBlock, 48u * 1024);
  EXPECT_EQ(p.warpSize, 32);
  EXPECT_EQ(p.l2CacheSize, 50 * 1024 * 1024);
  EXPECT_EQ(p.maxTexture1D, 131072);  // as deviceQuery on H100 prints
  EXPECT_EQ(p.concurrentKernels, 1);
  EXPECT_EQ(p.unifiedAddressing, 1);
  EXPECT_EQ(p.managedMemory, 1);
  EXPECT_EQ(p.memoryPoolsSupported, 1);
  EXPECT_EQ(p.clusterLaunch, 1);
  EXPECT_EQ(p.gpuPciDeviceID, 0x233010deu);
  EXPECT_EQ(p.reserved[0], 0);
  EXPECT_EQ(p.reserved[55], 0);
}

TEST(DeviceProps, H100InTheCuda12Layout) {
  Cuda12DeviceProp p;
  std::memset(&p, 0xab, sizeof(p));
  fill_device_prop_v12(&p, h100(), 0, 0, 8);
  EXPECT_STREQ(p.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.multiProcessorCount, 132);
  EXPECT_EQ(p.totalGlobalMem, 85017755648u);
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.minor, 0);
  EXPECT_EQ(p.sharedMemPerBlockOptin, 227u * 1024);
  EXPECT_EQ(p.clockRate, 1980000);        // kHz
  EXPECT_EQ(p.memoryClockRate, 2619000);  // kHz
  EXPECT_EQ(p.computeMode, 0);
  EXPECT_EQ(p.kernelExecTimeoutEnabled, 0);
  EXPECT_EQ(p.deviceOverlap, 1);
  EXPECT_EQ(p.cooperativeMultiDeviceLaunch, 1);
  EXPECT_EQ(p.clusterLaunch, 1);
  EXPECT_EQ(p.unifiedFunctionPointers, 1);
  EXPECT_EQ(p.reserved[62], 0);
}

TEST(DeviceProps, BothLayoutsDescribeTheSameGpu) {
  cudaDeviceProp a;
  Cuda12DeviceProp b;
  fill_device_prop_v13(&a, h100(), 3, 1, 8);
  fill_device_prop_v12(&b, h100(), 3, 1, 8);
  EXPECT_EQ(0, std::memcmp(&a.uuid, &b.uuid, sizeof(a.uuid)));
  EXPECT_EQ(a.pciBusID, b.pciBusID);
  EXPECT_EQ(a.l2CacheSize, b.l2CacheSize);
  EXPECT_EQ(a.maxSurfaceCubemapLayered[1], b.maxSurfaceCubemapLayered[1]);
  EXPECT_EQ(a.reservedSharedMemPerBlock, b.reservedSharedMemPerBlock);
  EXPECT_EQ(a.unifiedFunctionPointers, b.unifiedFunctionPointers);
}

TEST(DeviceProps, UuidsAndPciAddressesAreDistinctAndStable) {
  std::set<std::string> uuids;
  for (int host = 0; host < 16; ++host) {
    std::set<std::string> buses;
    for (int gpu = 0; gpu < 16; ++gpu) {
      const GpuIdentity id = gpu_identity(gpu, host, 16);
      EXPECT_TRUE(uuids.insert(format_uuid(id.uuid)).second);
      EXPECT_TRUE(buses.insert(format_pci_bus_id(id)).second);
    }
  }
  const GpuIdentity a = gpu_identity(2, 5, 8);
  const GpuIdentity b = gpu_identity(2, 5, 8);
  EXPECT_EQ(format_uuid(a.uuid), format_uuid(b.uuid));
  // "GPU-" + 8-4-4-4-12 hex digits, as nvidia-smi prints.
  const std::string u = format_uuid(a.uuid);
  ASSERT_EQ(u.size(), 40u);
  EXPECT_EQ(u.substr(0, 4), "GPU-");
  EXPECT_EQ(u[12], '-');
  EXPECT_EQ(u[17], '-');
  EXPECT_EQ(u[22], '-');
  EXPECT_EQ(u[27], '-');
  // DGX H100 bus numbering: GPU 0 on bus 0x18, GPU 4 on 0x9a; GPUs 0-3 on socket 0.
  EXPECT_EQ(format_pci_bus_id(gpu_identity(0, 0, 8)), "00000000:18:00.0");
  EXPECT_EQ(format_pci_bus_id(gpu_identity(4, 0, 8)), "00000000:9a:00.0");
  EXPECT_EQ(gpu_identity(3, 0, 8).host_numa_node, 0);
  EXPECT_EQ(gpu_identity(4, 0, 8).host_numa_node, 1);
}

TEST(DeviceAttribute, AgreesWithTheProps) {
  cudaDeviceProp p;
  fill_device_prop_v13(&p, h100(), 5, 2, 8);
  auto at = [](cudaDeviceAttr a) { return attr(a, 5, 2); };
  EXPECT_EQ(at(cudaDevAttrMultiProcessorCount), p.multiProcessorCount);
  EXPECT_EQ(at(cudaDevAttrComputeCapabilityMajor), 9);
  EXPECT_EQ(at(cudaDevAttrComputeCapabilityMinor), 0);
  EXPECT_EQ(at(cudaDevAttrMaxSharedMemoryPerBlockOptin), 232448);
  EXPECT_EQ(at(cudaDevAttrMaxSharedMemoryPerBlockOptin),
            static_cast<int>(p.sharedMemPerBlockOptin));
  EXPECT_EQ(at(cudaDevAttrMaxSharedMemoryPerMultiprocessor),
            static_cast<int>(p.sharedMemPerMultiprocessor));
  EXPECT_EQ(at(cudaDevAttrL2CacheSize), p.l2CacheSize);
  EXPECT_EQ(at(cudaDevAttrPciBusId), p.pciBusID);
  EXPECT_EQ(at(cudaDevAttrPciDomainId), p.pciDomainID);
  EXPECT_EQ(at(cudaDevAttrMaxBlockDimZ), p.maxThreadsDim[2]);
  EXPECT_EQ(at(cudaDevAttrMaxGridDimX), p.maxGridSize[0]);
  EXPECT_EQ(at(cudaDevAttrMaxTexture2DLayeredLayers), p.maxTexture2DLayered[2]);
  EXPECT_EQ(at(cudaDevAttrHostNumaId), p.hostNumaId);
  EXPECT_EQ(at(cudaDevAttrClockRate), 1980000);
  EXPECT_EQ(at(cudaDevAttrMemoryClockRate), 2619000);
  EXPECT_EQ(at(cudaDevAttrGlobalMemoryBusWidth), 5120);
  EXPECT_EQ(at(cudaDevAttrGpuPciDeviceId), static_cast<int>(p.gpuPciDeviceID));
  EXPECT_EQ(at(cudaDevAttrClusterLaunch), 1);
  EXPECT_EQ(at(cudaDevAttrMemSyncDomainCount), 4);
}

TEST(DeviceAttribute, EveryEnumeratorOfTheHeaderIsAnswered) {
  std::set<int> named;
  for (const auto& [name, value] : kDeviceAttrs) {
    named.insert(value);
    // cudaDevAttrReserved92 and the like (not cudaDevAttrReservedSharedMemoryPerBlock).
    const std::string n = name;
    const bool reserved = n.starts_with("cudaDevAttrReserved") &&
                          n.find_first_not_of("0123456789", 19) == std::string::npos;
    int v = -1;
    const cudaError_t rc =
        device_attribute(&v, static_cast<cudaDeviceAttr>(value), h100(), 0, 0, 8);
    if (reserved && value != 96) {
      EXPECT_EQ(rc, cudaErrorInvalidValue) << name;
    } else {
      EXPECT_EQ(rc, cudaSuccess) << name;
    }
  }
  EXPECT_GT(named.size(), 100u);
  // Numbers no header defines are refused, and so is a null output pointer.
  int v = 0;
  EXPECT_EQ(device_attribute(&v, static_cast<cudaDeviceAttr>(44), h100(), 0, 0, 8),
            cudaErrorInvalidValue);
  EXPECT_EQ(device_attribute(&v, cudaDevAttrMax, h100(), 0, 0, 8), cudaErrorInvalidValue);
  EXPECT_EQ(device_attribute(nullptr, cudaDevAttrWarpSize, h100(), 0, 0, 8), cudaErrorInvalidValue);
}

TEST(DeviceAttribute, A100HasNoClustersAndOneSyncDomain) {
  const wire::DeviceSpec a100 =
      kernels::to_device_spec(kernels::GpuCatalog::builtin().find("a100"));
  int v = -1;
  ASSERT_EQ(device_attribute(&v, cudaDevAttrClusterLaunch, a100, 0, 0, 8), cudaSuccess);
  EXPECT_EQ(v, 0);
  ASSERT_EQ(device_attribute(&v, cudaDevAttrMemSyncDomainCount, a100, 0, 0, 8), cudaSuccess);
  EXPECT_EQ(v, 1);
  ASSERT_EQ(device_attribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, a100, 0, 0, 8),
            cudaSuccess);
  EXPECT_EQ(v, 163 * 1024);
}

}  // namespace
}  // namespace phantora::intercept
