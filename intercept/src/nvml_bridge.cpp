// The shim's answers for the NVML stand-in (intercept/nvml/): the figures of this host's
// simulated GPUs, from the GPU model the daemon announced and the GPU's place in the cluster.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "../device_props.hpp"
#include "address_space.hpp"
#include "context.hpp"
#include "nvml/phantora_gpu_info.h"

using namespace phantora;
using namespace phantora::shim;

namespace {

// NVLink ports per GPU by architecture (NVIDIA datasheets): A100 (sm_80) 12, H100/H200 (sm_90)
// and B200 (sm_100) 18. Other parts: none.
int nvlinks_of(const wire::DeviceSpec& d) {
  if (d.cc_major == 8 && d.cc_minor == 0) return 12;
  if (d.cc_major >= 9) return 18;
  return 0;
}

void copy_string(char* dst, size_t size, const std::string& s) {
  std::snprintf(dst, size, "%s", s.c_str());
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int phantora_gpu_count(void) {
  return Runtime::get().welcome().gpus_per_host;
}

__attribute__((visibility("default"))) int phantora_gpu_info(int index, struct phantora_gpu* out) {
  const wire::Welcome& w = Runtime::get().welcome();
  if (out == nullptr || index < 0 || index >= w.gpus_per_host) return -1;
  *out = phantora_gpu{};
  const int host = Runtime::get().host();
  const intercept::GpuIdentity id = intercept::gpu_identity(index, host, w.gpus_per_host);
  copy_string(out->name, sizeof(out->name), w.device.name);
  copy_string(out->uuid, sizeof(out->uuid), intercept::format_uuid(id.uuid));
  copy_string(out->pci_bus_id, sizeof(out->pci_bus_id), intercept::format_pci_bus_id(id));
  out->total_memory = w.device.total_global_mem;
  out->used_memory = AddressSpace::get().used(index);
  out->cc_major = w.device.cc_major;
  out->cc_minor = w.device.cc_minor;
  out->pci_domain = id.pci_domain;
  out->pci_bus = id.pci_bus;
  out->pci_device = id.pci_device;
  out->pci_device_id = w.device.pci_device_id;
  out->pci_subsystem_id = w.device.pci_subsystem_id;
  out->numa_node = id.host_numa_node;
  out->nvlinks = nvlinks_of(w.device);
  int version = 0;
  cudaDriverGetVersion(&version);
  out->driver_version = version;
  return 0;
}

}  // extern "C"
