// Where the daemon listens (--listen) and the address the ranks are given for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "phantora/host_port.hpp"

namespace phantora::tools {

// --listen's HOST:PORT. Throws std::invalid_argument naming the flag and the problem.
HostPort parse_listen(const std::string& text, const char* flag = "--listen");

// True for 0.0.0.0 and :: (every address of this machine).
bool is_wildcard(const std::string& host);
bool is_loopback(const std::string& host);

// The HOST:PORT ranks connect to, for a daemon listening on `listen` and bound to `port`:
// `advertise` when given; else the listening host, where it names one; for a wildcard, this
// machine's name when the ranks run elsewhere (`remote`), loopback when they run here.
std::string rank_address(const HostPort& listen, uint16_t port,
                         const std::optional<std::string>& advertise, bool remote);

// This machine's host name (gethostname).
std::string this_host_name();

}  // namespace phantora::tools
