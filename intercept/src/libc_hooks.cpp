#include "libc_hooks.hpp"

#include <atomic>
#include <cstring>
#include <span>
#include <string_view>

#include "launcher_command.hpp"
#include "runtime.hpp"

namespace phantora::shim {
namespace {

// Whether this process is a launcher, by its command line.
bool is_launcher() {
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (f == nullptr) return false;
  char buf[8192];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // The first arguments are enough to know the program; a launcher's own come after them.
  constexpr size_t kArgs = 16;
  std::string_view argv[kArgs];
  size_t count = 0;
  for (size_t at = 0; at < n && count < kArgs;) {
    argv[count++] = std::string_view(buf + at);
    at += argv[count - 1].size() + 1;
  }
  return is_launcher_command(std::span<const std::string_view>(argv, count));
}

}  // namespace

bool simulated() {
  static std::atomic<int> decided{-1};
  int d = decided.load(std::memory_order_relaxed);
  if (d < 0) {
    const bool under_phantora =
        std::getenv("PHANTORA_SOCKET") != nullptr || std::getenv("PHANTORA_ADDRESS") != nullptr;
    const char* real = std::getenv("PHANTORA_REAL_CLOCKS");
    const bool opted_out = real != nullptr && std::strcmp(real, "1") == 0;
    d = under_phantora && !opted_out && !is_launcher() ? 1 : 0;
    decided.store(d, std::memory_order_relaxed);
  }
  return d == 1;
}

bool active() {
  return simulated() && !Runtime::in_shim();
}

}  // namespace phantora::shim
