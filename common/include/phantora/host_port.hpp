// "HOST:PORT" as users write a daemon's TCP address: `phantora run --listen`, and the
// PHANTORA_ADDRESS the shim connects to. HOST is a name, an IPv4 address or an IPv6 address in
// brackets ("[::1]:7450"); PORT is 0-65535 (0: let the system choose, for listening only).
// Header-only and standard library only: the shim includes it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace phantora {

struct HostPort {
  std::string host;  // without brackets
  uint16_t port = 0;

  // "host:port", with brackets around an IPv6 address.
  std::string to_string() const {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
};

// nullopt and `why` set when `text` is not HOST:PORT.
inline std::optional<HostPort> parse_host_port(std::string_view text, std::string* why = nullptr) {
  auto fail = [why](const char* reason) -> std::optional<HostPort> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  HostPort hp;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("an IPv6 address needs its closing ']'");
    hp.host = std::string(text.substr(1, close - 1));
    if (hp.host.empty()) return fail("the address in brackets is empty");
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return fail("expected ':PORT' after the bracketed address");
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("expected HOST:PORT");
    hp.host = std::string(text.substr(0, colon));
    if (hp.host.find(':') != std::string::npos)
      return fail("an IPv6 address goes in brackets: [ADDRESS]:PORT");
    if (hp.host.empty()) return fail("the host is empty (0.0.0.0 listens on every address)");
    port = text.substr(colon + 1);
  }
  for (char c : hp.host) {
    if (c == ' ' || c == '\t' || c == '/' || c == '[' || c == ']')
      return fail("the host contains a character no host name or address has");
  }
  if (port.empty()) return fail("the port is empty");
  if (port.size() > 5) return fail("the port must be between 0 and 65535");
  uint32_t value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return fail("the port must be a number");
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > 65535) return fail("the port must be between 0 and 65535");
  hp.port = static_cast<uint16_t>(value);
  return hp;
}

}  // namespace phantora
