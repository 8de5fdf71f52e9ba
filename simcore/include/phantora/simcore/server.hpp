// The daemon's transport, served by one Boost.Asio thread: a Unix stream socket (the local
// launcher's: only processes of the run's user may connect, then they show the run's token) or
// a TCP listener (ranks on other machines: the token is the only authentication). Each
// connection is one client process; its frames are decoded and handed to the Simulation.
// The first frame must be a hello of the right size, within kHelloWithin; a refused hello is
// answered with the reason (wire::FrameType::kRefused). A malformed frame closes that connection
// with a logged reason; the daemon carries on.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "phantora/simcore/simulation.hpp"

namespace phantora::sim {

class Session;

// How long a new connection may take to say hello before it is closed.
inline constexpr std::chrono::seconds kHelloWithin{10};

class Server {
 public:
  // Listens on a Unix socket at `socket_path`.
  Server(boost::asio::io_context& io, const std::filesystem::path& socket_path, Simulation& sim);
  // Listens on TCP (port 0: one the system chooses, see tcp_port()). Throws std::runtime_error
  // naming the address when it cannot listen there.
  Server(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
         Simulation& sim);
  ~Server();

  // The TCP port listened on; 0 on a Unix socket.
  uint16_t tcp_port() const { return tcp_port_; }
  bool is_tcp() const { return tcp_; }

  // Stops accepting; once every open connection has closed (or `grace` passed), calls `done`.
  void shutdown(std::chrono::milliseconds grace, std::function<void()> done);

  Simulation& simulation() { return sim_; }
  void session_closed(Session* s);
  void bind_client(ClientId id, std::weak_ptr<Session> session);
  // The job cannot go on (collectives disagree, ...): tell whoever runs the job.
  void set_failure_handler(std::function<void(const std::string&)> handler) {
    on_failure_ = std::move(handler);
  }
  void fail(const std::string& why);
  // Whoever runs the job is stopping it (its wall-clock limit, Ctrl-C): what the ranks' ends
  // then leave waiting is that stop's doing, not a failure of the job to report.
  void job_stopped() { failed_ = true; }
  // Told (on the daemon's thread) when a client has been welcomed and when its connection has
  // ended, with whether it said goodbye first: `phantora serve` ends a run by these.
  void set_client_observer(std::function<void(ClientId, const wire::Hello&)> joined,
                           std::function<void(ClientId, bool said_bye)> left) {
    on_joined_ = std::move(joined);
    on_left_ = std::move(left);
  }
  void client_joined(ClientId id, const wire::Hello& hello) {
    if (on_joined_) on_joined_(id, hello);
  }
  void client_left(ClientId id, bool said_bye) {
    if (on_left_) on_left_(id, said_bye);
  }

 private:
  Server(boost::asio::io_context& io, const boost::asio::generic::stream_protocol::endpoint& where,
         bool tcp, const std::string& description, Simulation& sim);
  void accept();
  void maybe_done();
  void watch_timeouts();
  // The connection of `client`, or null once it has gone.
  std::shared_ptr<Session> session_of(ClientId client) const;

  boost::asio::io_context& io_;
  boost::asio::basic_socket_acceptor<boost::asio::generic::stream_protocol> acceptor_;
  bool tcp_ = false;
  uint16_t tcp_port_ = 0;
  Simulation& sim_;
  std::set<std::shared_ptr<Session>> sessions_;
  std::map<ClientId, std::weak_ptr<Session>> by_client_;
  std::function<void(const std::string&)> on_failure_;
  std::function<void(ClientId, const wire::Hello&)> on_joined_;
  std::function<void(ClientId, bool)> on_left_;
  bool failed_ = false;
  std::function<void()> on_done_;
  std::unique_ptr<boost::asio::steady_timer> grace_timer_;
  std::unique_ptr<boost::asio::steady_timer> timeout_timer_;
  std::unique_ptr<boost::asio::steady_timer> accept_retry_;
};

}  // namespace phantora::sim
