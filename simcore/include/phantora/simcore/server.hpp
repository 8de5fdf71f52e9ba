// The daemon's transport: a Unix stream socket served by one Boost.Asio thread. Each
// connection is one client process; its frames are decoded and handed to the Simulation.
// A malformed frame closes that connection with a logged reason; the daemon carries on.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "phantora/simcore/simulation.hpp"

namespace phantora::sim {

class Session;

class Server {
 public:
  Server(boost::asio::io_context& io, const std::filesystem::path& socket_path, Simulation& sim);
  ~Server();

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

 private:
  void accept();
  void maybe_done();
  void watch_timeouts();

  boost::asio::io_context& io_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  Simulation& sim_;
  std::set<std::shared_ptr<Session>> sessions_;
  std::map<ClientId, std::weak_ptr<Session>> by_client_;
  std::function<void(const std::string&)> on_failure_;
  bool failed_ = false;
  std::function<void()> on_done_;
  std::unique_ptr<boost::asio::steady_timer> grace_timer_;
  std::unique_ptr<boost::asio::steady_timer> timeout_timer_;
};

}  // namespace phantora::sim
