#include "safe_read.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace phantora::shim {

std::string read_up_to(const void* p, size_t n) {
  static const int self_mem = ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
  std::string bytes(n, '\0');
  const long page = ::sysconf(_SC_PAGESIZE);
  size_t done = 0;
  while (done < n && self_mem >= 0) {
    const auto at = reinterpret_cast<uintptr_t>(p) + done;
    const size_t chunk = std::min<size_t>(n - done, page - at % page);
    const ssize_t got = ::pread(self_mem, bytes.data() + done, chunk, static_cast<off_t>(at));
    if (got <= 0) break;
    done += static_cast<size_t>(got);
    if (static_cast<size_t>(got) < chunk) break;
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace phantora::shim
