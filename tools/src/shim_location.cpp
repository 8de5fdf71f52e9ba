#include "shim_location.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace phantora::tools {

std::filesystem::path find_shim() {
  if (const char* env = std::getenv("PHANTORA_SHIM"); env != nullptr && *env != '\0') {
    if (!std::filesystem::exists(env)) {
      throw std::runtime_error(fmt::format("PHANTORA_SHIM={} does not exist", env));
    }
    return std::filesystem::absolute(env);
  }
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate :
       {dir.parent_path() / "intercept" / "libphantora.so",
        dir.parent_path() / "lib" / "libphantora.so", dir / "libphantora.so"}) {
    if (std::filesystem::exists(candidate)) return std::filesystem::canonical(candidate);
  }
  throw std::runtime_error(fmt::format(
      "cannot find libphantora.so next to {} (looked in ../intercept, ../lib and {}); build the "
      "'phantora_shim' target or set PHANTORA_SHIM",
      exe.string(), dir.string()));
}

std::filesystem::path find_python_hook() {
  const std::filesystem::path dir = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& candidate :
       {dir / "python", dir.parent_path() / "share" / "phantora" / "python"}) {
    if (std::filesystem::exists(candidate / "sitecustomize.py")) return candidate;
  }
  throw std::runtime_error(fmt::format(
      "cannot find the Python start-up hook (sitecustomize.py) next to {}", dir.string()));
}

}  // namespace phantora::tools
