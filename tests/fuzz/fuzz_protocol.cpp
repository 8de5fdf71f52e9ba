// libFuzzer target: the daemon's wire-protocol decoder (sim::Simulation::hello / batch / bye /
// disconnected) on arbitrary bytes, driven as simcore/src/server.cpp drives it, with a cost
// provider that answers every question with a constant.
//
// Input: byte 0 chooses how many clients (1-4) say a valid hello first (client i: host i % 2,
// rank i, on a 2 x 2 cluster). Then a sequence of commands, each one byte
//   (client << 4) | kind;  kind 0: a batch, u16 length + bytes;  1: bye, 8 bytes of host time;
//   2: the connection drops;  3: a hello, sizeof(wire::Hello) bytes (its token replaced by the
//   run's when the first byte is odd, so that hosts, pids and ranks are fuzzed too).
// A ProtocolError or CollectiveError closes that client's connection, as the server does;
// anything else that escapes (another exception, a sanitizer report, a crash) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "phantora/simcore/report.hpp"
#include "phantora/simcore/simulation.hpp"

namespace {

using namespace phantora;

class ConstantCosts : public sim::CostProvider {
 public:
  sim::Cost kernel(const sim::KernelLaunch&) override {
    return {SimTime::us(10), sim::CostSource::kDefault};
  }
  sim::Cost copy(wire::CopyKind, uint64_t bytes, bool) override {
    return {SimTime::ns(500 + static_cast<int64_t>(bytes % 1000)), sim::CostSource::kDefault};
  }
  sim::Cost memset(uint64_t) override { return {SimTime::us(1), sim::CostSource::kDefault}; }
  sim::Cost gemm(const wire::Gemm&) override {
    return {SimTime::us(20), sim::CostSource::kDefault};
  }
};

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

struct Reader {
  const uint8_t* p;
  size_t n;
  bool take(void* out, size_t k) {
    if (n < k) return false;
    if (k == 0) return true;  // out may be null (an empty vector's data())
    std::memcpy(out, p, k);
    p += k;
    n -= k;
    return true;
  }
};

[[noreturn]] void finding(const char* what, const std::exception& e) {
  std::fprintf(stderr, "fuzz_protocol: unexpected %s: %s\n", what, e.what());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static ConstantCosts costs;
  sim::SimulationConfig config;
  config.hosts = 2;
  config.gpus_per_host = 2;
  config.gpu_name = "h100";
  config.cpu_time = wire::CpuTimeMode::kModel;
  config.token = kToken;
  config.collective_timeout = std::chrono::seconds(0);
  sim::Simulation sim(config, costs);
  bool failed = false;
  sim.set_failure_sink([&](const std::string&) { failed = true; });
  sim.set_reply_sink([](sim::ClientId, const wire::Reply&) {});
  sim.set_payload_sink([](sim::ClientId, uint64_t, const std::vector<std::byte>&) {});

  Reader in{data + 1, size - 1};
  std::vector<bool> open;  // by client id: the connection is still open
  auto close = [&](sim::ClientId id, const char* why) {
    if (id < open.size() && open[id]) {
      open[id] = false;
      sim.disconnected(id, why);
    }
  };
  const int clients = 1 + data[0] % 4;
  for (int i = 0; i < clients; ++i) {
    wire::Hello h;
    std::memcpy(h.token, kToken, wire::kTokenBytes);
    h.host = i % 2;
    h.pid = 1000 + i;
    h.global_rank = i;
    h.local_rank = i / 2;
    const wire::Welcome w = sim.hello(h);
    if (w.client_id >= open.size()) open.resize(w.client_id + 1, false);
    open[w.client_id] = true;
  }
  std::vector<wire::Reply> replies;
  uint8_t cmd;
  while (!failed && in.take(&cmd, 1)) {
    const sim::ClientId id = (cmd >> 4) % open.size();
    try {
      switch (cmd & 3) {
        case 0: {
          uint16_t len = 0;
          if (!in.take(&len, 2)) return 0;
          len = static_cast<uint16_t>(std::min<size_t>(len, in.n));
          std::vector<std::byte> batch(len);
          in.take(batch.data(), len);
          if (!open[id]) break;
          replies.clear();
          sim.batch(id, batch, replies);
          break;
        }
        case 1: {
          int64_t t = 0;
          if (!in.take(&t, 8)) return 0;
          if (!open[id]) break;
          open[id] = false;
          sim.bye(id, SimTime::ps(t < 0 ? 0 : t));
          break;
        }
        case 2:
          close(id, "connection closed");
          break;
        case 3: {
          wire::Hello h;
          if (!in.take(&h, sizeof(h))) return 0;
          if (h.token[0] & 1) std::memcpy(h.token, kToken, wire::kTokenBytes);
          const wire::Welcome w = sim.hello(h);
          if (w.client_id >= open.size()) open.resize(w.client_id + 1, false);
          open[w.client_id] = true;
          break;
        }
      }
    } catch (const sim::ProtocolError& e) {
      close(id, e.what());
    } catch (const sim::CollectiveError& e) {
      failed = true;  // the server ends the run
    } catch (const std::exception& e) {
      finding("exception from the decoder", e);
    }
  }
  try {
    const sim::RunStats& stats = sim.finish();
    sim::RunOutcome outcome;
    (void)sim::make_report(config, stats, outcome).dump();
  } catch (const std::exception& e) {
    finding("exception while finishing the run", e);
  }
  return 0;
}
