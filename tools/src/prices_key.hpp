// What prices a run's kernels, as a short key. Programs that take decisions by timing kernels
// on the GPU and cache them across runs (torch.compile: whether padding a misaligned matmul
// pays, which kernel configuration is fastest) are given one cache per key by the start-up hook
// (tools/python/sitecustomize.py; docs/pytorch.md, "torch.compile's decisions by timing"), so a
// decision taken on one simulated GPU's prices is not reused on another's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace phantora::tools {

// "<GPU preset key>-<16 hex digits>": the hex digits hash the constants built in
// (kernels::builtin_data_key()) and, when given, the kernel database and the pinned kernel
// times (each file's path, size and modification time: a file changed in place gets a new key).
std::string prices_key(const std::string& gpu_key,
                       const std::optional<std::filesystem::path>& kernel_db,
                       const std::optional<std::filesystem::path>& kernel_times);

}  // namespace phantora::tools
