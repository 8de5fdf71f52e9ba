// A short key of the constants this build prices kernels with: the GPU presets, the cost
// parameters and the analytical models' constants compiled in from kernels-db/data.
#pragma once

#include <string>

namespace phantora::kernels {

// 16 hex digits; two builds with the same kernels-db/data/*.toml give the same key, and a change
// of any constant (or comment) in them changes it.
std::string builtin_data_key();

}  // namespace phantora::kernels
