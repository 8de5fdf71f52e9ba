// The simulator of one run, served on a thread of its own: the Simulation of a PreparedRun and
// the Server in front of it, listening on a private Unix socket (the local launcher) or on TCP
// (ranks on other machines, `phantora serve`).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "phantora/host_port.hpp"
#include "phantora/simcore/server.hpp"
#include "phantora/simcore/simulation.hpp"
#include "run_setup.hpp"

namespace phantora::tools {

// Told on the daemon's thread when a client has been welcomed and when its connection ended
// (sim::Server::set_client_observer).
struct ClientObserver {
  std::function<void(sim::ClientId, const wire::Hello&)> joined;
  std::function<void(sim::ClientId, bool said_bye)> left;
};

class Daemon {
 public:
  // `tcp` unset: a Unix socket in a private directory (mode 0700), removed at the end. Else
  // the address to listen on (a name is resolved; port 0: the system chooses). Throws when it
  // cannot listen. `run.config.token` must be set. `observer` is in place before the first
  // connection can be accepted.
  Daemon(PreparedRun& run, const std::optional<HostPort>& tcp, ClientObserver observer = {});
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // The Unix socket's path (empty on TCP) and the TCP port listened on (0 on a Unix socket).
  const std::filesystem::path& socket() const { return socket_; }
  uint16_t tcp_port() const { return tcp_port_; }

  // Why the simulation says the job cannot go on (collectives that disagree, a rank that
  // vanished), once it has said so. Any thread.
  std::optional<std::string> failure() const;
  // The launcher is about to stop the job (sim::Server::job_stopped). Any thread.
  void job_stopped();

  // Stops accepting, lets open connections close (at most `grace`), ends the thread. After
  // this the simulation may be finished. Idempotent.
  void stop(std::chrono::milliseconds grace);
  sim::Simulation& simulation() { return *simulation_; }
  // Runs `fn` on the daemon's thread, where the simulation may be read while it runs (the
  // progress line's figures). Returns at once; after stop() `fn` is never run.
  void post(std::function<void(const sim::Simulation&)> fn);

 private:
  std::filesystem::path private_dir_;
  std::filesystem::path socket_;
  uint16_t tcp_port_ = 0;
  boost::asio::io_context io_;
  std::unique_ptr<sim::Simulation> simulation_;
  std::unique_ptr<sim::Server> server_;
  std::thread thread_;
  mutable std::mutex failure_mu_;
  std::optional<std::string> failure_;
  bool stopped_ = false;
};

}  // namespace phantora::tools
