// libnvidia-ml.so.1 stand-in: the part of NVML that PyTorch uses (c10/cuda/driver_api.h,
// torch/cuda/__init__.py), answering for the simulated GPUs of this host. It asks the preloaded
// shim (phantora_gpu_info, intercept/nvml/phantora_gpu_info.h), so its answers always agree with
// what the CUDA runtime reports. `phantora run` puts its folder first on LD_LIBRARY_PATH.
//
// No NVML header ships with the CUDA toolkit, so the types are declared here with the layouts
// of NVIDIA's nvml.h (NVML API reference, "Device Structs" / "Device Queries"). Functions not
// defined here are absent, as in an older NVML: dlsym() finds nothing, and a program that
// needs one fails naming it (PyTorch treats the optional ones, such as
// nvmlDeviceGetGpuFabricInfoV, as unavailable).
#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "phantora_gpu_info.h"

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

constexpr int kMaxDevices = 64;
constexpr unsigned kNvidiaVendorId = 0x10de;
// What a host with a CUDA 13.0 driver reports (R580 branch).
constexpr const char* kDriverVersion = "580.82.07";
constexpr const char* kNvmlVersion = "13.580.82.07";
// NVSwitch on the other end of every NVLink (H100-generation NVSwitch PCI device id).
constexpr unsigned kNvSwitchDeviceId = 0x22a3;
constexpr int kNvLinkDeviceTypeSwitch = 2;

struct PciInfo {  // nvmlPciInfo_t (v2/v3 layout)
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[32];
};

struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t (also _v3's argument)
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

std::atomic<int> g_init_count{0};

}  // namespace

struct nvmlDevice_st {
  int index;
};
using nvmlDevice_t = nvmlDevice_st*;

namespace {

nvmlDevice_st g_devices[kMaxDevices] = {};

bool initialized() {
  return g_init_count.load() > 0;
}

bool info_of(nvmlDevice_t device, phantora_gpu* info) {
  if (device == nullptr || device < g_devices || device >= g_devices + kMaxDevices) return false;
  return phantora_gpu_info(device->index, info) == 0;
}

nvmlReturn_t copy_out(const char* s, char* buf, unsigned int length) {
  if (buf == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (std::strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, s, std::strlen(s) + 1);
  return NVML_SUCCESS;
}

void fill_pci(const phantora_gpu& g, PciInfo* pci) {
  *pci = PciInfo{};
  pci->domain = static_cast<unsigned>(g.pci_domain);
  pci->bus = static_cast<unsigned>(g.pci_bus);
  pci->device = static_cast<unsigned>(g.pci_device);
  pci->pciDeviceId = static_cast<unsigned>(g.pci_device_id) << 16 | kNvidiaVendorId;
  pci->pciSubSystemId = static_cast<unsigned>(g.pci_subsystem_id) << 16 | kNvidiaVendorId;
  std::snprintf(pci->busId, sizeof(pci->busId), "%s", g.pci_bus_id);
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", g.pci_domain,
                g.pci_bus, g.pci_device);
}

template <typename Info>
nvmlReturn_t running_processes(nvmlDevice_t device, unsigned int* count, Info* infos) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  phantora_gpu g;
  if (count == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  // The only process this one can know about is itself.
  const unsigned int needed = g.used_memory > 0 ? 1 : 0;
  if (*count < needed) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = needed;
  if (needed == 1) {
    if (infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    infos[0] = Info{};
    infos[0].pid = static_cast<unsigned>(getpid());
    infos[0].usedGpuMemory = g.used_memory;
  }
  return NVML_SUCCESS;
}

}  // namespace

#define NVML_API extern "C" __attribute__((visibility("default")))

NVML_API nvmlReturn_t nvmlInit_v2(void) {
  ++g_init_count;
  return NVML_SUCCESS;
}
NVML_API nvmlReturn_t nvmlInit(void) {
  return nvmlInit_v2();
}
NVML_API nvmlReturn_t nvmlInitWithFlags(unsigned int) {
  return nvmlInit_v2();
}

NVML_API nvmlReturn_t nvmlShutdown(void) {
  int n = g_init_count.load();
  while (n > 0 && !g_init_count.compare_exchange_weak(n, n - 1)) {
  }
  return n > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

NVML_API const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    default:
      return "Unknown Error";
  }
}

NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  return copy_out(kDriverVersion, version, length);
}

NVML_API nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return copy_out(kNvmlVersion, version, length);
}

NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  phantora_gpu g;
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (phantora_gpu_info(0, &g) != 0) return NVML_ERROR_UNKNOWN;
  *version = g.driver_version;
  return NVML_SUCCESS;
}
NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  return nvmlSystemGetCudaDriverVersion_v2(version);
}

NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(phantora_gpu_count());
  return NVML_SUCCESS;
}
NVML_API nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return nvmlDeviceGetCount_v2(count);
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= static_cast<unsigned>(phantora_gpu_count()) ||
      index >= static_cast<unsigned>(kMaxDevices))
    return NVML_ERROR_INVALID_ARGUMENT;
  g_devices[index].index = static_cast<int>(index);
  *device = &g_devices[index];
  return NVML_SUCCESS;
}
NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

// Accepts "dddddddd:bb:dd.f" and the short forms, case-insensitively (as NVML does).
NVML_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (bus_id == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const size_t n = std::strlen(bus_id);
  for (int i = 0; i < phantora_gpu_count() && i < kMaxDevices; ++i) {
    phantora_gpu g;
    if (phantora_gpu_info(i, &g) != 0) continue;
    const size_t m = std::strlen(g.pci_bus_id);
    if (n <= m && strcasecmp(g.pci_bus_id + (m - n), bus_id) == 0)
      return nvmlDeviceGetHandleByIndex_v2(static_cast<unsigned>(i), device);
  }
  return NVML_ERROR_NOT_FOUND;
}
NVML_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* bus_id, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByPciBusId_v2(bus_id, device);
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < phantora_gpu_count() && i < kMaxDevices; ++i) {
    phantora_gpu g;
    if (phantora_gpu_info(i, &g) == 0 && std::strcmp(g.uuid, uuid) == 0)
      return nvmlDeviceGetHandleByIndex_v2(static_cast<unsigned>(i), device);
  }
  return NVML_ERROR_NOT_FOUND;
}

NVML_API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (index == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  *index = static_cast<unsigned>(device->index);
  return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  return copy_out(g.name, name, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  return copy_out(g.uuid, uuid, length);
}

NVML_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, PciInfo* pci) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (pci == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  fill_pci(g, pci);
  return NVML_SUCCESS;
}
NVML_API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, PciInfo* pci) {
  return nvmlDeviceGetPciInfo_v3(device, pci);
}

// Memory as this process sees it: what it holds on the device is used, the rest is free.
NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, Memory* memory) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (memory == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  memory->total = g.total_memory;
  memory->used = g.used_memory;
  memory->free = g.total_memory - g.used_memory;
  return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                         int* minor) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (major == nullptr || minor == nullptr || !info_of(device, &g))
    return NVML_ERROR_INVALID_ARGUMENT;
  *major = g.cc_major;
  *minor = g.cc_minor;
  return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int* node) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (node == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  *node = static_cast<unsigned>(g.numa_node);
  return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                           unsigned int* pending) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (current == nullptr || pending == nullptr || !info_of(device, &g))
    return NVML_ERROR_INVALID_ARGUMENT;
  *current = 0;  // MIG disabled: the whole GPU is simulated
  *pending = 0;
  return NVML_SUCCESS;
}

// Every GPU of a host reaches every other over the NVLink/NVSwitch fabric.
NVML_API nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int /*caps index*/,
                                             int* status) {
  phantora_gpu ga, gb;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (status == nullptr || !info_of(a, &ga) || !info_of(b, &gb)) return NVML_ERROR_INVALID_ARGUMENT;
  *status = 0;  // NVML_P2P_STATUS_OK
  return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                               int* active) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (active == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  if (link >= static_cast<unsigned>(g.nvlinks)) return NVML_ERROR_INVALID_ARGUMENT;
  *active = 1;  // NVML_FEATURE_ENABLED
  return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                          int* type) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (type == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  if (link >= static_cast<unsigned>(g.nvlinks)) return NVML_ERROR_INVALID_ARGUMENT;
  *type = kNvLinkDeviceTypeSwitch;
  return NVML_SUCCESS;
}

// The switch at the far end of a link: one of four NVSwitches per host (as in a DGX H100),
// link i going to switch i % 4.
NVML_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                          PciInfo* pci) {
  phantora_gpu g;
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (pci == nullptr || !info_of(device, &g)) return NVML_ERROR_INVALID_ARGUMENT;
  if (link >= static_cast<unsigned>(g.nvlinks)) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = PciInfo{};
  pci->domain = 0;
  pci->bus = 0xe0 + link % 4;
  pci->device = 0;
  pci->pciDeviceId = kNvSwitchDeviceId << 16 | kNvidiaVendorId;
  std::snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", pci->domain, pci->bus,
                pci->device);
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", pci->domain,
                pci->bus, pci->device);
  return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                           ProcessInfoV1* infos) {
  return running_processes(device, count, infos);
}
NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                              unsigned int* count,
                                                              ProcessInfoV2* infos) {
  return running_processes(device, count, infos);
}
NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                              unsigned int* count,
                                                              ProcessInfoV2* infos) {
  return running_processes(device, count, infos);
}
