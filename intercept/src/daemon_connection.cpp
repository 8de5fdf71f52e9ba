#include "daemon_connection.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "phantora/host_port.hpp"
#include "phantora/tcp_options.hpp"
#include "real_clock.hpp"
#include "runtime.hpp"

namespace phantora::shim {
namespace {

constexpr int kDefaultConnectTimeoutS = 30;

// The shim's own timeouts run in real time, whatever clocks the program sees.
int64_t now_ms() {
  return real_monotonic_ns() / 1000000;
}

const char* env_or_null(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

DaemonConnection connect_unix(const char* path) {
  DaemonConnection c{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), path, false};
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(addr.sun_path))
    fatal(std::string("socket path too long: ") + path);
  std::strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
  if (::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    fatal(std::string("cannot reach the simulator at ") + path + ": " + std::strerror(errno) +
          "\n  (did the phantora run that started this process end?)");
  }
  return c;
}

std::string numeric_host(const addrinfo* ai) {
  char host[NI_MAXHOST];
  if (getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) !=
      0) {
    return "?";
  }
  return host;
}

// One non-blocking connect, waited for at most `wait_ms`. Returns the fd, or -1 with `error` set.
int try_connect(const addrinfo* ai, int wait_ms, std::string& error) {
  const int fd =
      ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  int err = 0;
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&p, 1, wait_ms);
      } while (ready < 0 && errno == EINTR);
      socklen_t len = sizeof(err);
      if (ready == 0) {
        err = ETIMEDOUT;
      } else if (ready < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
      }
    }
  }
  if (err != 0) {
    error = numeric_host(ai) + ": " + std::strerror(err);
    ::close(fd);
    return -1;
  }
  // Blocking again (the shim's reads and writes expect it).
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  set_rank_tcp_options(fd);
  return fd;
}

DaemonConnection connect_tcp(const char* address) {
  std::string why;
  const std::optional<HostPort> hp = parse_host_port(address, &why);
  if (!hp) fatal(std::string("PHANTORA_ADDRESS='") + address + "' is not HOST:PORT: " + why);
  if (hp->port == 0) fatal(std::string("PHANTORA_ADDRESS='") + address + "': port 0");
  if (env_or_null("PHANTORA_TOKEN") == nullptr) {
    fatal(
        std::string("PHANTORA_TOKEN is not set: a process that reaches the simulator over TCP (") +
        address + ") must present the run's token");
  }
  int timeout_s = kDefaultConnectTimeoutS;
  if (const char* t = env_or_null("PHANTORA_CONNECT_TIMEOUT_S")) {
    char* end = nullptr;
    const long v = std::strtol(t, &end, 10);
    if (*end != '\0' || v < 0 || v > 86400)
      fatal(std::string("PHANTORA_CONNECT_TIMEOUT_S='") + t + "' is not a number of seconds");
    timeout_s = static_cast<int>(v);
  }
  const std::string port = std::to_string(hp->port);
  const int64_t deadline = now_ms() + static_cast<int64_t>(timeout_s) * 1000;
  int pause_ms = 100;
  std::string last_error;
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int gai = getaddrinfo(hp->host.c_str(), port.c_str(), &hints, &found);
    if (gai != 0) {
      last_error = std::string("cannot resolve '") + hp->host +
                   "': " + (gai == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(gai));
    } else {
      for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
        const int64_t left = std::max<int64_t>(deadline - now_ms(), 0);
        const int fd =
            try_connect(ai, static_cast<int>(std::clamp<int64_t>(left, 1000, 5000)), last_error);
        if (fd >= 0) {
          freeaddrinfo(found);
          return DaemonConnection{fd, hp->to_string(), true};
        }
      }
      freeaddrinfo(found);
    }
    if (now_ms() + pause_ms > deadline) break;
    const timespec pause{0, pause_ms * 1000000L};
    syscall(SYS_nanosleep, &pause, nullptr);  // a real pause, never the program's simulated one
    pause_ms = std::min(pause_ms * 2, 1000);
  }
  fatal("cannot reach the simulator at " + hp->to_string() + " (PHANTORA_ADDRESS), tried for " +
        std::to_string(timeout_s) + " s: " + last_error +
        "\n  (is its phantora run or phantora serve still running, and can this machine reach "
        "that address and port? PHANTORA_CONNECT_TIMEOUT_S sets how long to try)");
}

}  // namespace

DaemonConnection connect_to_daemon() {
  if (const char* address = env_or_null("PHANTORA_ADDRESS")) return connect_tcp(address);
  if (const char* path = env_or_null("PHANTORA_SOCKET")) return connect_unix(path);
  fatal(
      "libphantora.so is loaded but no simulator is running (neither PHANTORA_SOCKET nor "
      "PHANTORA_ADDRESS is set).\n"
      "  Start the program under the simulator: phantora run [options] -- <command>");
}

}  // namespace phantora::shim
