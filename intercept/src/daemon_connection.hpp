// Finding the daemon: PHANTORA_ADDRESS (TCP, "host:port", for ranks on other machines) or
// PHANTORA_SOCKET (the local launcher's Unix socket). Plain libc: the shim takes on no
// networking library.
#pragma once

#include <string>

namespace phantora::shim {

struct DaemonConnection {
  int fd = -1;
  std::string where;  // "host:port" or the socket's path, for messages
  bool tcp = false;
};

// Connects, or ends the process (fatal) with a message that names the address and the cause.
// A TCP address is retried until PHANTORA_CONNECT_TIMEOUT_S (default 30) seconds have passed,
// so that ranks may start before the daemon listens (a Kubernetes pod before the daemon's).
DaemonConnection connect_to_daemon();

}  // namespace phantora::shim
