// Finds libphantora.so for LD_PRELOAD: $PHANTORA_SHIM, else next to the phantora executable
// in the build tree (../intercept/) or an installed layout (../lib/).
#pragma once

#include <filesystem>

namespace phantora::tools {

std::filesystem::path find_shim();

}  // namespace phantora::tools
