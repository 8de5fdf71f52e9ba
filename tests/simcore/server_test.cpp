// sim::Server, the daemon's transport, against a raw client on a Unix socket: how a connection
// ends. The client writes its frames and closes before the daemon's thread runs, so the order in
// which the daemon meets them is fixed: every reply it writes then fails (the peer is gone)
// while the frames the client sent before it closed are still there to read.
#include "phantora/simcore/server.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace phantora::sim {
namespace {

// Every price 1 µs: how a connection ends does not depend on what its work costs.
class UnitCosts : public CostProvider {
 public:
  Cost kernel(const KernelLaunch&) override { return {SimTime::us(1), CostSource::kDefault}; }
  Cost copy(wire::CopyKind, uint64_t, bool) override {
    return {SimTime::us(1), CostSource::kDefault};
  }
  Cost memset(uint64_t) override { return {SimTime::us(1), CostSource::kDefault}; }
  Cost gemm(const wire::Gemm&) override { return {SimTime::us(1), CostSource::kDefault}; }
};

SimulationConfig one_gpu() {
  SimulationConfig c;
  c.gpu_name = "fake";
  std::strcpy(c.device.name, "Fake GPU");
  c.device.total_global_mem = 1000;
  c.cpu_time = wire::CpuTimeMode::kZero;
  c.token = "sekrit";
  return c;
}

template <typename Body>
void append_frame(std::vector<std::byte>& out, wire::FrameType type, const Body& body) {
  wire::FrameHeader h;
  h.type = type;
  h.length = sizeof(body);
  const auto* hb = reinterpret_cast<const std::byte*>(&h);
  const auto* bb = reinterpret_cast<const std::byte*>(&body);
  out.insert(out.end(), hb, hb + sizeof(h));
  out.insert(out.end(), bb, bb + sizeof(body));
}

wire::Hello hello() {
  wire::Hello h;
  std::memcpy(h.token, "sekrit", 6);
  h.pid = 1000;
  return h;
}

class ServerTest : public ::testing::Test {
 protected:
  ServerTest()
      : path_(std::filesystem::temp_directory_path() /
              ("phantora-server-test-" + std::to_string(::getpid()) + ".sock")),
        sim_(one_gpu(), costs_) {
    std::filesystem::remove(path_);
    server_.emplace(io_, path_, sim_);
    server_->set_client_observer({}, [this](ClientId, bool said_bye) {
      said_bye_ = said_bye;
      io_.stop();
    });
  }
  ~ServerTest() override {
    server_.reset();
    std::filesystem::remove(path_);
  }

  // Connects, writes `frames` in one write and closes, all before the daemon's thread runs;
  // then runs it until the connection has ended (or 10 s).
  void send_and_close(const std::vector<std::byte>& frames) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(::write(fd, frames.data(), frames.size()), static_cast<ssize_t>(frames.size()));
    ::close(fd);
    io_.run_for(std::chrono::seconds(10));
  }

  std::filesystem::path path_;
  UnitCosts costs_;
  Simulation sim_;
  boost::asio::io_context io_;
  std::optional<Server> server_;
  std::optional<bool> said_bye_;
};

// A rank's last reply can be in flight when it says goodbye and closes (it no longer reads):
// writing that reply fails (a broken pipe), but the goodbye is already in the socket. The
// connection ends as a goodbye, not as a rank that vanished (docs/reliability.md, finding 14).
TEST_F(ServerTest, AGoodbyeSentBeforeAReplyFailedIsAGoodbye) {
  std::vector<std::byte> frames;
  append_frame(frames, wire::FrameType::kHello, hello());
  append_frame(frames, wire::FrameType::kBye, wire::Bye{});
  send_and_close(frames);
  ASSERT_TRUE(said_bye_.has_value()) << "the connection did not end";
  EXPECT_TRUE(*said_bye_);
}

// Without a goodbye the same failed write still ends the connection, as a disconnection.
TEST_F(ServerTest, AClientGoneWithoutAGoodbyeIsADisconnection) {
  std::vector<std::byte> frames;
  append_frame(frames, wire::FrameType::kHello, hello());
  send_and_close(frames);
  ASSERT_TRUE(said_bye_.has_value()) << "the connection did not end";
  EXPECT_FALSE(*said_bye_);
}

}  // namespace
}  // namespace phantora::sim
