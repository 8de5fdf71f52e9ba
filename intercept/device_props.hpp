// Device properties of a simulated GPU, as cudaGetDeviceProperties / cudaDeviceGetAttribute
// report them. Pure functions of the GPU model's figures (wire::DeviceSpec, sent by the
// daemon) and the GPU's place (host, ordinal): no I/O, no global state.
//
// Two struct layouts are supported: CUDA 13's cudaDeviceProp (the headers we build against)
// and CUDA 12's (device_props_cuda12.hpp), which a program built with CUDA 12 passes to
// cudaGetDeviceProperties_v2.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "phantora/protocol.hpp"

namespace phantora::intercept {

// Where a GPU sits: its PCI address and NUMA node, and its UUID. Deterministic: the same
// (host, ordinal) always gets the same identity, and no two GPUs of a cluster share a UUID or
// (on one host) a PCI address.
struct GpuIdentity {
  cudaUUID_t uuid{};
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;
  int host_numa_node = 0;
};

GpuIdentity gpu_identity(int ordinal, int host, int gpus_per_host);

// "GPU-1a2b3c4d-..." as nvidia-smi and NVML print a GPU's UUID.
std::string format_uuid(const cudaUUID_t& uuid);
// "00000000:18:00.0" as cudaDeviceGetPCIBusId and nvidia-smi print it.
std::string format_pci_bus_id(const GpuIdentity& id);

// Fills the CUDA 13 struct completely (every field, reserved ones zeroed).
void fill_device_prop_v13(cudaDeviceProp* out, const wire::DeviceSpec& spec, int ordinal, int host,
                          int gpus_per_host);

// Fills a CUDA 12 `struct cudaDeviceProp` (phantora::intercept::Cuda12DeviceProp layout).
void fill_device_prop_v12(void* out, const wire::DeviceSpec& spec, int ordinal, int host,
                          int gpus_per_host);

// The value of one attribute, consistent with fill_device_prop_v13. Every enumerator of the
// CUDA 13 header is answered, and CUDA 12's cudaDevAttrCooperativeMultiDeviceLaunch (96);
// reserved or unknown ones give cudaErrorInvalidValue, as does a null `value`.
cudaError_t device_attribute(int* value, cudaDeviceAttr attr, const wire::DeviceSpec& spec,
                             int ordinal, int host, int gpus_per_host);

}  // namespace phantora::intercept
