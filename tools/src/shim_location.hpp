// Finds libphantora.so for LD_PRELOAD: $PHANTORA_SHIM, else next to the phantora executable
// in the build tree (../intercept/) or an installed layout (../lib/).
#pragma once

#include <filesystem>

namespace phantora::tools {

std::filesystem::path find_shim();
// The folder holding the Python start-up hook (sitecustomize.py): next to the executable in
// the build tree (python/), or share/phantora/python in an installed layout.
std::filesystem::path find_python_hook();

}  // namespace phantora::tools
