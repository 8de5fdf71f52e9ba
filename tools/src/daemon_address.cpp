#include "daemon_address.hpp"

#include <limits.h>
#include <unistd.h>

#include <stdexcept>

#include <fmt/format.h>

namespace phantora::tools {

HostPort parse_listen(const std::string& text, const char* flag) {
  std::string why;
  const std::optional<HostPort> hp = parse_host_port(text, &why);
  if (!hp) throw std::invalid_argument(fmt::format("{} {}: {}", flag, text, why));
  return *hp;
}

bool is_wildcard(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "0:0:0:0:0:0:0:0";
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    throw std::runtime_error("cannot read this machine's host name; give --advertise HOST");
  }
  return name;
}

std::string rank_address(const HostPort& listen, uint16_t port,
                         const std::optional<std::string>& advertise, bool remote) {
  std::string host = listen.host;
  if (advertise) {
    host = *advertise;
  } else if (is_wildcard(listen.host)) {
    host = remote ? this_host_name() : (listen.host == "0.0.0.0" ? "127.0.0.1" : "::1");
  }
  return HostPort{host, port}.to_string();
}

}  // namespace phantora::tools
