/* What the NVML stand-in (libnvidia-ml.so.1) asks libphantora.so about the simulated GPUs of
 * this host: phantora_gpu_info(), exported by the shim. Plain C, shared by both libraries. */
#ifndef PHANTORA_GPU_INFO_H
#define PHANTORA_GPU_INFO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct phantora_gpu {
  char name[96];         /* "NVIDIA H100 80GB HBM3" */
  char uuid[96];         /* "GPU-xxxxxxxx-xxxx-..." as nvidia-smi prints it */
  char pci_bus_id[32];   /* "00000000:18:00.0" */
  uint64_t total_memory; /* bytes */
  uint64_t used_memory;  /* bytes held by this process on the device */
  int32_t cc_major, cc_minor;
  int32_t pci_domain, pci_bus, pci_device;
  int32_t pci_device_id, pci_subsystem_id;
  int32_t numa_node;
  int32_t nvlinks;        /* NVLink ports, each to the host's NVSwitch fabric */
  int32_t driver_version; /* CUDA driver API version, e.g. 13000 */
};

/* Number of GPUs of this host (NVML counts all of them, regardless of CUDA_VISIBLE_DEVICES). */
int phantora_gpu_count(void);
/* Fills `out` for physical GPU `index`; returns 0, or -1 for an index out of range. */
int phantora_gpu_info(int index, struct phantora_gpu* out);

#ifdef __cplusplus
}
#endif

#endif
