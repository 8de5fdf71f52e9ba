#include "phantora/simcore/server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace phantora::sim {

namespace asio = boost::asio;
using stream_protocol = asio::local::stream_protocol;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(stream_protocol::socket socket, Server& server)
      : socket_(std::move(socket)), server_(server) {}

  void start() { read_header(); }
  void send_reply(const wire::Reply& r) {
    if (!ended_) send(wire::FrameType::kReply, &r, sizeof(r));
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
        const wire::Welcome w = sim.hello(h);
        client_ = w.client_id;
        server_.bind_client(w.client_id, weak_from_this());
        send(wire::FrameType::kWelcome, &w, sizeof(w));
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
        int64_t host_ps = 0;
        if (payload_.size() != sizeof(host_ps)) throw ProtocolError("bye has the wrong size");
        std::memcpy(&host_ps, payload_.data(), sizeof(host_ps));
        sim.bye(*client_, SimTime::ps(host_ps));
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
    const bool idle = outbox_.empty();
    std::vector<std::byte> frame(sizeof(wire::FrameHeader) + size);
    wire::FrameHeader fh;
    fh.type = type;
    fh.length = static_cast<uint32_t>(size);
    std::memcpy(frame.data(), &fh, sizeof(fh));
    std::memcpy(frame.data() + sizeof(fh), body, size);
    outbox_.push_back(std::move(frame));
    if (idle) write_next();
  }

  void write_next() {
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(outbox_.front()),
                      [this, self](boost::system::error_code ec, size_t) {
                        if (ec) return end(ec.message());
                        outbox_.pop_front();
                        if (!outbox_.empty()) write_next();
                      });
  }

  void end(const std::string& why) {
    if (ended_) return;
    ended_ = true;
    if (client_ && !said_bye_) server_.simulation().disconnected(*client_, why);
    if (!client_ && why != "connection closed") spdlog::warn("rejected a connection: {}", why);
    // Let queued replies drain before closing: a reader may still wait for its last answer.
    if (outbox_.empty() || said_bye_) close();
    server_.session_closed(this);
  }

  stream_protocol::socket socket_;
  Server& server_;
  wire::FrameHeader header_{};
  std::vector<std::byte> payload_;
  std::vector<wire::Reply> replies_;
  std::deque<std::vector<std::byte>> outbox_;
  std::optional<ClientId> client_;
  bool said_bye_ = false;
  bool ended_ = false;
};

Server::Server(asio::io_context& io, const std::filesystem::path& socket_path, Simulation& sim)
    : io_(io), acceptor_(io, stream_protocol::endpoint(socket_path.string())), sim_(sim) {
  sim_.set_reply_sink([this](ClientId client, const wire::Reply& r) {
    auto it = by_client_.find(client);
    if (it == by_client_.end()) return;
    if (auto session = it->second.lock()) session->send_reply(r);
  });
  sim_.set_failure_sink([this](const std::string& why) { fail(why); });
  watch_timeouts();
  sim_.set_payload_sink(
      [this](ClientId client, uint64_t recvbuff, const std::vector<std::byte>& bytes) {
        auto it = by_client_.find(client);
        if (it == by_client_.end()) return;
        if (auto session = it->second.lock()) session->send_payload(recvbuff, bytes);
      });
  accept();
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
      if (ec != asio::error::operation_aborted) spdlog::warn("accept failed: {}", ec.message());
      return;
    }
    // Only processes of the user who started the run may join it (the token is checked next).
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        cred.uid != getuid()) {
      spdlog::warn("refused a connection from uid {} (the run belongs to uid {})", cred.uid,
                   getuid());
      accept();
      return;
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
