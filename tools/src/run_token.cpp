#include "run_token.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "phantora/protocol.hpp"

namespace phantora::tools {

std::string random_token() {
  unsigned char raw[16];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(raw), sizeof(raw))) {
    throw std::runtime_error("cannot read /dev/urandom for the run token");
  }
  std::string token;
  for (unsigned char c : raw) token += fmt::format("{:02x}", c);
  return token;  // 32 characters: the whole wire::Hello::token field
}

std::string token_problem(const std::string& token) {
  constexpr size_t kMinBytes = 16;
  if (token.size() < kMinBytes || token.size() > wire::kTokenBytes) {
    return fmt::format("a token has {} to {} characters (this one has {})", kMinBytes,
                       wire::kTokenBytes, token.size());
  }
  for (char c : token) {
    if (c <= ' ' || c > '~') return "a token has printable ASCII characters only, no blanks";
  }
  return "";
}

std::string read_token_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::invalid_argument(
        fmt::format("--token-file {}: cannot read it: {}", path.string(), std::strerror(errno)));
  }
  std::string token;
  std::getline(in, token);
  if (!token.empty() && token.back() == '\r') token.pop_back();
  if (const std::string why = token_problem(token); !why.empty()) {
    throw std::invalid_argument(fmt::format("--token-file {}: {}", path.string(), why));
  }
  return token;
}

void write_private_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
  }
  bool ok = ::fchmod(fd, 0600) == 0;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    std::filesystem::remove(tmp);
    throw std::runtime_error(fmt::format("cannot write {}", path.string()));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace phantora::tools
