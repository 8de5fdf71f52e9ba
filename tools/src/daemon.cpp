#include "daemon.hpp"

#include <stdlib.h>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

namespace phantora::tools {
namespace asio = boost::asio;

namespace {

asio::ip::tcp::endpoint listen_endpoint(asio::io_context& io, const HostPort& where) {
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(where.host, ec);
  if (!ec) return {address, where.port};
  asio::ip::tcp::resolver resolver(io);
  const auto found = resolver.resolve(where.host, std::to_string(where.port), ec);
  if (ec || found.empty()) {
    throw std::invalid_argument(fmt::format("--listen {}: cannot resolve '{}': {}",
                                            where.to_string(), where.host, ec.message()));
  }
  return found.begin()->endpoint();
}

}  // namespace

Daemon::Daemon(PreparedRun& run, const std::optional<HostPort>& tcp, ClientObserver observer) {
  simulation_ = std::make_unique<sim::Simulation>(run.config, *run.costs);
  if (tcp) {
    server_ = std::make_unique<sim::Server>(io_, listen_endpoint(io_, *tcp), *simulation_);
    tcp_port_ = server_->tcp_port();
  } else {
    std::string tmpl = (std::filesystem::temp_directory_path() / "phantora-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("cannot create a private run directory");
    private_dir_ = tmpl;
    socket_ = private_dir_ / "daemon.sock";
    server_ = std::make_unique<sim::Server>(io_, socket_, *simulation_);
  }
  server_->set_client_observer(std::move(observer.joined), std::move(observer.left));
  server_->set_failure_handler([this](const std::string& why) {
    std::lock_guard lock(failure_mu_);
    failure_ = why;
  });
  thread_ = std::thread([this] { io_.run(); });
}

Daemon::~Daemon() {
  stop(std::chrono::milliseconds(0));
  if (!private_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(private_dir_, ignored);
  }
}

std::optional<std::string> Daemon::failure() const {
  std::lock_guard lock(failure_mu_);
  return failure_;
}

void Daemon::post(std::function<void(const sim::Simulation&)> fn) {
  asio::post(io_, [this, fn = std::move(fn)] { fn(*simulation_); });
}

void Daemon::job_stopped() {
  asio::post(io_, [this] { server_->job_stopped(); });
}

void Daemon::stop(std::chrono::milliseconds grace) {
  if (stopped_) return;
  stopped_ = true;
  asio::post(io_, [this, grace] { server_->shutdown(grace, [this] { io_.stop(); }); });
  thread_.join();
}

}  // namespace phantora::tools
