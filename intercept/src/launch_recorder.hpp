// Recording launches for `phantora db profile` (docs/kernels-db.md, "Measuring"). With
// PHANTORA_RECORD_LAUNCHES=DIR in the environment, the first launch of each distinct kernel,
// launch configuration and decoded work is written to DIR/launches-<pid>.txt: the bytes of its
// parameters, which 8-byte words of them hold device addresses (the allocation and the offset
// into it), and the image its code lives in, saved once as DIR/images/<hash>. On a machine with
// a GPU the profiler loads that image and launches the kernel with those bytes, the addresses
// moved to zeroed scratch buffers, and times it.
#pragma once

#include <array>
#include <cstdint>

#include "registry.hpp"
#include "torch_kernel_args.hpp"

namespace phantora::shim {

// Whether PHANTORA_RECORD_LAUNCHES is set (read once).
bool recording_launches();

// Records the launch unless one with the same kernel, configuration and work was recorded.
// `args` is the launch's parameter array (cudaLaunchKernel's `args`, cuLaunchKernel's
// `kernelParams`); launches without one, or whose parameter list is unknown, are skipped.
void record_launch(const KernelInfo& kernel, const std::array<uint32_t, 3>& grid,
                   const std::array<uint32_t, 3>& block, uint64_t shared_mem,
                   const LaunchWork* work, void* const* args);

}  // namespace phantora::shim
