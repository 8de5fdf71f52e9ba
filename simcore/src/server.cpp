#include "phantora/simcore/server.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <vector>

#include <fmt/format.h>

#include <spdlog/spdlog.h>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include "phantora/tcp_options.hpp"

namespace phantora::sim {

namespace asio = boost::asio;
using stream_protocol = asio::generic::stream_protocol;

namespace {

// "10.1.2.3:41000" for a TCP peer, "" otherwise (a Unix peer is the run's own user).
std::string peer_name(stream_protocol::socket& socket) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(socket.native_handle(), reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      (addr.ss_family != AF_INET && addr.ss_family != AF_INET6)) {
    return "";
  }
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), port, sizeof(port),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "";
  }
  return addr.ss_family == AF_INET6 ? fmt::format("[{}]:{}", host, port)
                                    : fmt::format("{}:{}", host, port);
}

// How a process ended, from its goodbye, as the report's `end` says it (docs/report.md).
std::string describe_end(const wire::Bye& bye) {
  if (bye.how == wire::kByeSignalled) {
    const char* name = sigabbrev_np(bye.code);
    return name != nullptr ? fmt::format("killed by SIG{}", name)
                           : fmt::format("killed by signal {}", bye.code);
  }
  return bye.code == 0 ? "exited" : fmt::format("exited with status {}", bye.code);
}

}  // namespace

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(stream_protocol::socket socket, Server& server)
      : socket_(std::move(socket)),
        server_(server),
        peer_(peer_name(socket_)),
        hello_timer_(socket_.get_executor()) {}

  void start() {
    // A connection that never introduces itself is closed: over TCP anyone may connect.
    hello_timer_.expires_after(kHelloWithin);
    hello_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec && !self->client_) {
        self->end(fmt::format("no hello within {} s", kHelloWithin.count()));
        self->close();
      }
    });
    read_header();
  }
  void send_reply(const wire::Reply& r) {
    if (!ended_) send(wire::FrameType::kReply, &r, sizeof(r));
  }
  void send_progress(const wire::Progress& p) {
    if (!ended_) send(wire::FrameType::kProgress, &p, sizeof(p));
  }
  void send_payload(uint64_t recvbuff, const std::vector<std::byte>& bytes) {
    if (ended_) return;
    std::vector<std::byte> body(sizeof(wire::PayloadHeader) + bytes.size());
    const wire::PayloadHeader h{recvbuff, bytes.size()};
    std::memcpy(body.data(), &h, sizeof(h));
    if (!bytes.empty()) std::memcpy(body.data() + sizeof(h), bytes.data(), bytes.size());
    send(wire::FrameType::kPayload, body.data(), body.size());
  }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  void read_header() {
    auto self = shared_from_this();
    asio::async_read(socket_, asio::buffer(&header_, sizeof(header_)),
                     [this, self](boost::system::error_code ec, size_t) {
                       if (ec)
                         return end(ec == asio::error::eof ? "connection closed" : ec.message());
                       if (header_.magic != wire::kMagic || header_.version != wire::kVersion) {
                         return end(fmt::format("bad frame header (magic {:#x}, version {})",
                                                header_.magic, header_.version));
                       }
                       if (header_.length > wire::kMaxFrameBytes) {
                         return end(fmt::format("frame of {} bytes exceeds the {} byte limit",
                                                header_.length, wire::kMaxFrameBytes));
                       }
                       // Nothing but a hello is read from a client that has not shown the
                       // token: no large buffer for a stranger.
                       if (!client_ && (header_.type != wire::FrameType::kHello ||
                                        header_.length != sizeof(wire::Hello))) {
                         return end(fmt::format(
                             "protocol error: the first frame must be a hello of {} bytes (got "
                             "type {}, {} bytes)",
                             sizeof(wire::Hello), static_cast<int>(header_.type), header_.length));
                       }
                       payload_.resize(header_.length);
                       read_payload();
                     });
  }

  void read_payload() {
    auto self = shared_from_this();
    asio::async_read(socket_, asio::buffer(payload_),
                     [this, self](boost::system::error_code ec, size_t) {
                       if (ec) return end(ec.message());
                       try {
                         handle();
                       } catch (const ProtocolError& e) {
                         return end(fmt::format("protocol error: {}", e.what()));
                       } catch (const CollectiveError& e) {
                         server_.fail(e.what());
                         return end(e.what());
                       } catch (const std::exception& e) {
                         return end(fmt::format("rejected: {}", e.what()));
                       }
                       if (!said_bye_) read_header();
                     });
  }

  void handle() {
    Simulation& sim = server_.simulation();
    switch (header_.type) {
      case wire::FrameType::kHello: {
        if (client_) throw ProtocolError("second hello");
        if (payload_.size() != sizeof(wire::Hello)) throw ProtocolError("hello has the wrong size");
        wire::Hello h;
        std::memcpy(&h, payload_.data(), sizeof(h));
        wire::Welcome w;
        try {
          w = sim.hello(h);
        } catch (const ProtocolError& e) {
          // Tell the client why before the connection closes (its message names the cause).
          const std::string why(e.what(), std::min(std::strlen(e.what()), wire::kMaxRefusalBytes));
          send(wire::FrameType::kRefused, why.data(), why.size());
          throw;
        }
        hello_timer_.cancel();
        client_ = w.client_id;
        server_.bind_client(w.client_id, weak_from_this());
        send(wire::FrameType::kWelcome, &w, sizeof(w));
        server_.client_joined(w.client_id, h);
        return;
      }
      case wire::FrameType::kBatch: {
        if (!client_) throw ProtocolError("batch before hello");
        replies_.clear();
        sim.batch(*client_, payload_, replies_);
        for (const wire::Reply& r : replies_) send(wire::FrameType::kReply, &r, sizeof(r));
        return;
      }
      case wire::FrameType::kBye: {
        if (!client_) throw ProtocolError("bye before hello");
        wire::Bye bye;
        if (payload_.size() != sizeof(bye)) throw ProtocolError("bye has the wrong size");
        std::memcpy(&bye, payload_.data(), sizeof(bye));
        if (bye.host_time_ps < 0) throw ProtocolError("bye has a negative host time");
        sim.bye(*client_, SimTime::ps(bye.host_time_ps), describe_end(bye), bye.lapsed_handoffs);
        said_bye_ = true;
        end("goodbye");
        return;
      }
      default:
        throw ProtocolError(
            fmt::format("unexpected frame type {}", static_cast<int>(header_.type)));
    }
  }

  void send(wire::FrameType type, const void* body, size_t size) {
    if (!write_error_.empty()) return;  // the peer reads no more (write_failed)
    const bool idle = outbox_.empty();
    std::vector<std::byte> frame(sizeof(wire::FrameHeader) + size);
    wire::FrameHeader fh;
    fh.type = type;
    fh.length = static_cast<uint32_t>(size);
    std::memcpy(frame.data(), &fh, sizeof(fh));
    if (size > 0) std::memcpy(frame.data() + sizeof(fh), body, size);
    outbox_.push_back(std::move(frame));
    if (idle) write_next();
  }

  void write_next() {
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(outbox_.front()),
                      [this, self](boost::system::error_code ec, size_t) {
                        if (ec) return write_failed(ec.message());
                        outbox_.pop_front();
                        if (!outbox_.empty()) write_next();
                      });
  }

  // A reply could not be written: the peer has stopped reading, usually because it has said
  // goodbye and closed while the reply was on its way. What it sent before it closed is still in
  // the socket, so the read side ends the session (a goodbye, or the end of the stream) rather
  // than this error, which would report a rank that said goodbye as one that vanished.
  void write_failed(const std::string& why) {
    write_error_ = why;
    outbox_.clear();
    boost::system::error_code ignored;
    socket_.shutdown(stream_protocol::socket::shutdown_send, ignored);
    if (ended_) close();
  }

  void end(const std::string& why) {
    if (ended_) return;
    ended_ = true;
    hello_timer_.cancel();
    if (client_ && !said_bye_) {
      server_.simulation().disconnected(
          *client_, write_error_.empty()
                        ? why
                        : fmt::format("{} (a reply could not be written: {})", why, write_error_));
    }
    if (!client_ && why != "connection closed") {
      spdlog::warn("rejected a connection{}: {}", peer_.empty() ? "" : " from " + peer_, why);
    }
    // Let queued replies drain before closing: a reader may still wait for its last answer.
    if (outbox_.empty() || said_bye_) close();
    if (client_) server_.client_left(*client_, said_bye_);
    server_.session_closed(this);
  }

  stream_protocol::socket socket_;
  Server& server_;
  std::string peer_;  // TCP peer for the log; empty on the Unix socket
  asio::steady_timer hello_timer_;
  wire::FrameHeader header_{};
  std::vector<std::byte> payload_;
  std::vector<wire::Reply> replies_;
  std::deque<std::vector<std::byte>> outbox_;
  std::optional<ClientId> client_;
  bool said_bye_ = false;
  bool ended_ = false;
  std::string write_error_;  // why the last write failed; nothing more is written then
};

Server::Server(asio::io_context& io, const std::filesystem::path& socket_path, Simulation& sim)
    : Server(
          io,
          stream_protocol::endpoint(asio::local::stream_protocol::endpoint(socket_path.string())),
          false, socket_path.string(), sim) {}

Server::Server(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint, Simulation& sim)
    : Server(io, stream_protocol::endpoint(endpoint), true,
             endpoint.address().is_v6()
                 ? fmt::format("[{}]:{}", endpoint.address().to_string(), endpoint.port())
                 : fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port()),
             sim) {}

Server::Server(asio::io_context& io, const stream_protocol::endpoint& where, bool tcp,
               const std::string& description, Simulation& sim)
    : io_(io), acceptor_(io), tcp_(tcp), sim_(sim) {
  try {
    acceptor_.open(where.protocol());
    // A fixed port is free again at once after the previous run (no wait for TIME_WAIT).
    if (tcp_) acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(where);
    acceptor_.listen();
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(
        fmt::format("the simulator cannot listen on {}: {}", description, e.code().message()));
  }
  if (tcp_) {
    const stream_protocol::endpoint bound = acceptor_.local_endpoint();
    const auto* addr = static_cast<const sockaddr*>(bound.data());
    tcp_port_ =
        ntohs(addr->sa_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port
                                          : reinterpret_cast<const sockaddr_in*>(addr)->sin_port);
  }
  sim_.set_reply_sink([this](ClientId client, const wire::Reply& r) {
    if (auto session = session_of(client)) session->send_reply(r);
  });
  sim_.set_progress_sink([this](ClientId client, const wire::Progress& p) {
    if (auto session = session_of(client)) session->send_progress(p);
  });
  sim_.set_failure_sink([this](const std::string& why) { fail(why); });
  watch_timeouts();
  sim_.set_payload_sink(
      [this](ClientId client, uint64_t recvbuff, const std::vector<std::byte>& bytes) {
        if (auto session = session_of(client)) session->send_payload(recvbuff, bytes);
      });
  accept();
}

std::shared_ptr<Session> Server::session_of(ClientId client) const {
  auto it = by_client_.find(client);
  return it == by_client_.end() ? nullptr : it->second.lock();
}

void Server::watch_timeouts() {
  timeout_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(1));
  timeout_timer_->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    sim_.check_timeouts(std::chrono::steady_clock::now());
    watch_timeouts();
  });
}

void Server::bind_client(ClientId id, std::weak_ptr<Session> session) {
  by_client_[id] = std::move(session);
}

void Server::fail(const std::string& why) {
  if (failed_) return;
  failed_ = true;
  spdlog::error("{}", why);
  if (on_failure_) on_failure_(why);
}

Server::~Server() = default;

void Server::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, stream_protocol::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted) return;  // shutting down
      // Out of file descriptors, a peer that reset before we took it, ...: the daemon goes on
      // accepting, after a pause so that a persistent error does not spin.
      spdlog::warn("accept failed: {}", ec.message());
      accept_retry_ = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(100));
      accept_retry_->async_wait([this](boost::system::error_code e) {
        if (!e && acceptor_.is_open()) accept();
      });
      return;
    }
    if (tcp_) {
      set_rank_tcp_options(socket.native_handle());
    } else {
      // On the Unix socket only processes of the user who started the run may join it (the
      // token is checked next).
      ucred cred{};
      socklen_t len = sizeof(cred);
      if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
          cred.uid != getuid()) {
        spdlog::warn("refused a connection from uid {} (the run belongs to uid {})", cred.uid,
                     getuid());
        accept();
        return;
      }
    }
    auto session = std::make_shared<Session>(std::move(socket), *this);
    sessions_.insert(session);
    session->start();
    accept();
  });
}

void Server::session_closed(Session* s) {
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->get() == s) {
      // The session's own handlers hold a reference until they return.
      sessions_.erase(it);
      break;
    }
  }
  maybe_done();
}

void Server::shutdown(std::chrono::milliseconds grace, std::function<void()> done) {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  if (accept_retry_) accept_retry_->cancel();
  on_done_ = std::move(done);
  if (timeout_timer_) timeout_timer_->cancel();
  grace_timer_ = std::make_unique<asio::steady_timer>(io_, grace);
  grace_timer_->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    for (const auto& s : sessions_) s->close();
    sessions_.clear();
    maybe_done();
  });
  maybe_done();
}

void Server::maybe_done() {
  if (on_done_ && sessions_.empty()) {
    auto done = std::move(on_done_);
    on_done_ = nullptr;
    if (grace_timer_) grace_timer_->cancel();
    done();
  }
}

}  // namespace phantora::sim
