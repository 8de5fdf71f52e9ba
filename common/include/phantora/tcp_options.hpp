// The options both ends of a rank's TCP connection to the daemon set (shim and server alike).
// Request/response latency matters more than throughput (a blocked rank waits for each reply):
// no Nagle delay. A peer whose machine vanished must not hold the run forever: keepalive
// probes find a silent peer in about 10 + 3 x 5 s. Header-only, libc only: the shim includes
// it too.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace phantora {

inline void set_rank_tcp_options(int fd) {
  const int one = 1, idle_s = 10, interval_s = 5, probes = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
}

}  // namespace phantora
