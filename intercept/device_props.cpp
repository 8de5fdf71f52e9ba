#include "device_props.hpp"

#include <cstdint>
#include <cstdio>

#include "device_props_common.hpp"

namespace phantora::intercept {
namespace {

// PCI buses of the eight GPUs of a DGX H100 (lspci on DGX/HGX H100 systems); hosts with more
// GPUs continue on further PCI domains so that every (domain, bus) pair stays distinct.
constexpr int kDgxGpuBus[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
constexpr int kBusesPerDomain = sizeof(kDgxGpuBus) / sizeof(kDgxGpuBus[0]);
// Two CPU sockets per host, GPUs split evenly between them (as on DGX/HGX).
constexpr int kSocketsPerHost = 2;

// SplitMix64's finaliser: a bijection on 64-bit values, so distinct inputs give distinct
// outputs, while the result looks random like a real GPU UUID.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void put_be64(char* out, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xff);
}

}  // namespace

GpuIdentity gpu_identity(int ordinal, int host, int gpus_per_host) {
  GpuIdentity id;
  // The first 8 bytes are a bijection of (host, ordinal): unique across the cluster. The
  // rest only has to look like a UUID.
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(host)) << 32) | static_cast<uint32_t>(ordinal);
  const uint64_t first = mix64(key);
  put_be64(id.uuid.bytes, first);
  put_be64(id.uuid.bytes + 8, mix64(first ^ 0x50484e5450484e54ull /* "PHNTPHNT" */));
  id.pci_domain = ordinal / kBusesPerDomain;
  id.pci_bus = kDgxGpuBus[ordinal % kBusesPerDomain];
  id.pci_device = 0;
  if (gpus_per_host >= kSocketsPerHost) {
    const int per_socket = gpus_per_host / kSocketsPerHost;
    id.host_numa_node = std::min(ordinal / per_socket, kSocketsPerHost - 1);
  }
  return id;
}

std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char out[48];
  std::snprintf(out, sizeof(out),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return out;
}

std::string format_pci_bus_id(const GpuIdentity& id) {
  char out[32];
  std::snprintf(out, sizeof(out), "%08x:%02x:%02x.0", static_cast<unsigned>(id.pci_domain),
                static_cast<unsigned>(id.pci_bus), static_cast<unsigned>(id.pci_device));
  return out;
}

void fill_device_prop_v13(cudaDeviceProp* out, const wire::DeviceSpec& spec, int ordinal, int host,
                          int gpus_per_host) {
  const GpuIdentity id = gpu_identity(ordinal, host, gpus_per_host);
  detail::fill_common(*out, spec, id);
  // Fields CUDA 13 added.
  out->deviceNumaConfig = cudaDeviceNumaConfigNone;  // GPU memory is not a NUMA node
  out->deviceNumaId = -1;
  out->mpsEnabled = 0;
  out->hostNumaId = id.host_numa_node;
  // Combined ids as NVML reports them: device or subsystem id high, vendor 0x10de low.
  constexpr unsigned kNvidiaVendor = 0x10de;
  out->gpuPciDeviceID = (static_cast<unsigned>(spec.pci_device_id) << 16) | kNvidiaVendor;
  out->gpuPciSubsystemID = (static_cast<unsigned>(spec.pci_subsystem_id) << 16) | kNvidiaVendor;
  out->hostNumaMultinodeIpcSupported = 0;
}

}  // namespace phantora::intercept
