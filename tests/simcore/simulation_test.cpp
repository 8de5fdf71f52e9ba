// sim::Simulation driven directly with hand-built batches of wire records: decoding, replies to
// blocking requests, rejection of malformed records, memory accounting per GPU and the cost of
// graph launches. Costs come from FixedCosts below, so every expected time is plain arithmetic.
#include "phantora/simcore/simulation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "phantora/netmodel/hbm_traffic.hpp"
#include "phantora/simcore/report.hpp"

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace phantora::sim {
namespace {

using wire::RecordType;

constexpr SimTime us(double v) {
  return SimTime::us(v);
}
constexpr int64_t ps_us(double v) {
  return SimTime::us(v).as_ps();
}

constexpr uint64_t kLegacy0 = wire::kLegacyStreamBase + 0;
constexpr uint64_t kLegacy1 = wire::kLegacyStreamBase + 1;
constexpr uint64_t kS1 = wire::kFirstUserStream;
constexpr uint64_t kS2 = wire::kFirstUserStream + 1;

// Kernel costs by mangled name; copies by kind (pageable H2D/D2H take twice as long);
// memsets 2 µs. Every value is a whole number of µs so the sums below are exact.
class FixedCosts : public CostProvider {
 public:
  std::map<std::string, SimTime, std::less<>> kernels = {
      {"_Z1av", us(10)}, {"_Z1bv", us(20)}, {"_Z1cv", us(5)}, {"_Z1dv", us(7)}};
  std::vector<bool> pinned_seen;
  std::vector<wire::KernelWork> work_seen;
  std::vector<wire::Gemm> gemms_seen;

  // HBM bytes a kernel moves, by mangled name (none: unknown).
  std::map<std::string, double, std::less<>> kernel_hbm_bytes;

  Cost kernel(const KernelLaunch& l) override {
    work_seen.push_back(l.work);
    auto it = kernels.find(l.mangled_name);
    if (it == kernels.end()) return Cost{us(1), CostSource::kDefault};
    auto hbm = kernel_hbm_bytes.find(l.mangled_name);
    return Cost{
        it->second, CostSource::kPinned, {}, hbm == kernel_hbm_bytes.end() ? 0.0 : hbm->second};
  }
  Cost copy(wire::CopyKind kind, uint64_t, bool pinned) override {
    pinned_seen.push_back(pinned);
    SimTime t;
    switch (kind) {
      case wire::CopyKind::kHostToDevice:
        t = us(30);
        break;
      case wire::CopyKind::kDeviceToHost:
        t = us(40);
        break;
      case wire::CopyKind::kDeviceToDevice:
        t = us(3);
        break;
      default:
        t = us(6);
        break;
    }
    if (!pinned) t = t * 2;
    return Cost{t, CostSource::kModelled};
  }
  Cost memset(uint64_t) override { return Cost{us(2), CostSource::kModelled}; }
  Cost gemm(const wire::Gemm& g) override {
    gemms_seen.push_back(g);
    return Cost{us(50), CostSource::kModelled};
  }
};

// Builds the payload of one kBatch frame.
class Batch {
 public:
  template <typename T>
  Batch& add(RecordType type, const T& body, double host_us = 0, uint64_t request = 0) {
    return raw(type, &body, sizeof(body), host_us, request);
  }
  Batch& raw(RecordType type, const void* body, size_t size, double host_us = 0,
             uint64_t request = 0, int64_t host_ps_override = -1) {
    wire::RecordHeader h;
    h.type = type;
    h.size = static_cast<uint32_t>(size);
    h.request = request;
    h.host_time_ps = host_ps_override >= 0 ? host_ps_override : ps_us(host_us);
    // A single-threaded client: bounds the network at its clock unless it waits for a reply.
    h.bound_ps = request != 0 ? wire::kNoBound : h.host_time_ps;
    append(&h, sizeof(h));
    append(body, size);
    return *this;
  }
  Batch& kernel(uint32_t id, const std::string& name) {
    std::vector<std::byte> body(sizeof(wire::DefineKernel) + name.size());
    wire::DefineKernel k{id, static_cast<uint32_t>(name.size())};
    std::memcpy(body.data(), &k, sizeof(k));
    std::memcpy(body.data() + sizeof(k), name.data(), name.size());
    return raw(RecordType::kDefineKernel, body.data(), body.size());
  }
  Batch& stream(uint64_t id, int device, uint32_t flags = wire::kStreamBlocking) {
    return add(RecordType::kStreamCreate, wire::StreamCreate{id, device, flags, 0, 0});
  }
  Batch& launch(uint32_t kernel, uint64_t stream, double host_us = 0, int device = 0,
                uint64_t request = 0) {
    wire::Launch l{};
    l.stream = stream;
    l.device = device;
    l.kernel = kernel;
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = 32, l.block[1] = l.block[2] = 1;
    return add(RecordType::kLaunch, l, host_us, request);
  }
  Batch& copy(wire::CopyKind kind, uint64_t stream, bool pinned, double host_us = 0,
              uint64_t request = 0, int device = 0) {
    return add(RecordType::kCopy,
               wire::Copy{stream, device, kind, static_cast<uint8_t>(pinned), 0, 4096}, host_us,
               request);
  }
  Batch& record(uint64_t event, uint64_t stream, double host_us = 0, int device = 0) {
    return add(RecordType::kEventRecord, wire::EventOp{event, stream, device, 0}, host_us);
  }
  Batch& wait(uint64_t stream, uint64_t event, double host_us = 0, int device = 0) {
    return add(RecordType::kStreamWaitEvent, wire::EventOp{event, stream, device, 0}, host_us);
  }
  Batch& stream_sync(uint64_t stream, uint64_t request, double host_us = 0, int device = 0) {
    return add(RecordType::kStreamSync, wire::StreamRef{stream, device, 0}, host_us, request);
  }
  Batch& event_sync(uint64_t event, uint64_t request, double host_us = 0) {
    return add(RecordType::kEventSync, wire::EventOp{event, 0, 0, 0}, host_us, request);
  }
  Batch& device_sync(int device, uint64_t request, double host_us = 0) {
    return add(RecordType::kDeviceSync, wire::DeviceRef{device, 0}, host_us, request);
  }
  Batch& alloc(uint64_t address, uint64_t bytes, int device) {
    return add(RecordType::kAlloc, wire::MemOp{address, bytes, device, 0});
  }
  Batch& free(uint64_t address, int device) {
    return add(RecordType::kFree, wire::MemOp{address, 0, device, 0});
  }
  Batch& graph(uint64_t id, const std::vector<wire::GraphNode>& nodes) {
    wire::DefineGraph g{id, static_cast<uint32_t>(nodes.size()), 0};
    std::vector<std::byte> body(sizeof(g) + nodes.size() * sizeof(wire::GraphNode));
    std::memcpy(body.data(), &g, sizeof(g));
    std::memcpy(body.data() + sizeof(g), nodes.data(), nodes.size() * sizeof(wire::GraphNode));
    return raw(RecordType::kDefineGraph, body.data(), body.size());
  }
  Batch& graph_launch(uint64_t id, uint64_t stream, double host_us = 0, int device = 0) {
    return add(RecordType::kGraphLaunch, wire::GraphLaunch{id, stream, device, 0}, host_us);
  }
  std::span<const std::byte> bytes() const { return bytes_; }
  std::vector<std::byte>& data() { return bytes_; }

 private:
  void append(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<std::byte> bytes_;
};

wire::GraphNode kernel_node(uint32_t kernel, std::vector<uint32_t> deps = {}) {
  wire::GraphNode n{};
  n.kind = wire::GraphNodeKind::kKernel;
  n.kernel = kernel;
  n.grid[0] = n.grid[1] = n.grid[2] = 1;
  n.block[0] = n.block[1] = n.block[2] = 1;
  n.dep_count = static_cast<uint8_t>(deps.size());
  for (size_t i = 0; i < deps.size(); ++i) n.deps[i] = deps[i];
  return n;
}

wire::Hello hello_for(int host, const std::string& token = "sekrit", int rank = -1) {
  wire::Hello h;
  std::memcpy(h.token, token.data(), std::min(token.size(), wire::kTokenBytes));
  h.host = host;
  h.pid = 1000 + host;
  h.global_rank = rank;
  return h;
}

// A Simulation driven by hand-built batches, answering as the shim does.
class DrivenSimulation : public ::testing::Test {
 protected:
  explicit DrivenSimulation(SimulationConfig config) : sim(std::move(config), costs) {
    sim.set_reply_sink([this](ClientId id, const wire::Reply& r) { woken.emplace_back(id, r); });
  }

  // Applies a batch; returns the replies. As the shim does, each thread woken by a reply then
  // says it runs again (wire::kHostResumed), so that the reply no longer bounds its client.
  // Every reply, in this batch or a later one, is kept in `answered`.
  std::vector<wire::Reply> run(ClientId id, const Batch& b) {
    std::vector<wire::Reply> replies;
    sim.batch(id, b.bytes(), replies);
    for (const wire::Reply& r : replies) woken.emplace_back(id, r);
    while (!woken.empty()) {
      const auto [client, r] = woken.front();
      woken.erase(woken.begin());
      answered[{client, r.request}] = SimTime::ps(r.time_ps);
      const wire::HostClock resumed{r.request, wire::kHostResumed, 0};
      Batch ack;
      ack.raw(RecordType::kHostClock, &resumed, sizeof(resumed), 0, 0, r.time_ps);
      std::vector<wire::Reply> none;
      sim.batch(client, ack.bytes(), none);
      for (const wire::Reply& more : none) woken.emplace_back(client, more);
    }
    return replies;
  }

  FixedCosts costs;
  Simulation sim;
  std::vector<std::pair<ClientId, wire::Reply>> woken;        // replies not yet taken up
  std::map<std::pair<ClientId, uint64_t>, SimTime> answered;  // by client and request
};

class SimulationTest : public DrivenSimulation {
 protected:
  SimulationTest() : DrivenSimulation(config()) {}

  static SimulationConfig config() {
    SimulationConfig c;
    c.hosts = 2;
    c.gpus_per_host = 2;
    c.gpu_name = "fake";
    std::strcpy(c.device.name, "Fake GPU");
    c.device.total_global_mem = 1000;
    c.cpu_time = wire::CpuTimeMode::kZero;
    c.per_call_cost = us(2);
    c.launch_latency = us(4);
    c.token = "sekrit";
    return c;
  }

  ClientId connect(int host = 0) { return sim.hello(hello_for(host)).client_id; }

  // The reply time of a batch expected to answer exactly one request.
  SimTime answer(ClientId id, const Batch& b) {
    auto r = run(id, b);
    EXPECT_EQ(r.size(), 1u);
    if (r.empty()) return SimTime::infinite();
    EXPECT_EQ(r[0].status, wire::ReplyStatus::kOk);
    return SimTime::ps(r[0].time_ps);
  }
};

// --- hello ------------------------------------------------------------------------------

TEST_F(SimulationTest, HelloAnswersTheClusterAndTimingConfiguration) {
  const wire::Welcome w0 = sim.hello(hello_for(0));
  const wire::Welcome w1 = sim.hello(hello_for(1));
  EXPECT_EQ(w0.client_id, 0u);
  EXPECT_EQ(w1.client_id, 1u);
  EXPECT_EQ(w0.hosts, 2);
  EXPECT_EQ(w0.gpus_per_host, 2);
  EXPECT_EQ(w0.cpu_time, wire::CpuTimeMode::kZero);
  EXPECT_EQ(w0.per_call_cost_ps, 2'000'000);   // 2 µs
  EXPECT_EQ(w0.launch_latency_ps, 4'000'000);  // 4 µs
  EXPECT_STREQ(w0.device.name, "Fake GPU");
  EXPECT_EQ(w0.device.total_global_mem, 1000u);
  EXPECT_EQ(sim.connected_clients(), 2u);
}

TEST_F(SimulationTest, WrongTokenIsRejected) {
  EXPECT_THROW(sim.hello(hello_for(0, "not-the-token")), ProtocolError);
  EXPECT_THROW(sim.hello(hello_for(0, "")), ProtocolError);
  EXPECT_THROW(sim.hello(hello_for(0, "sekritX")), ProtocolError);  // prefix is not enough
  EXPECT_EQ(sim.connected_clients(), 0u);
}

TEST_F(SimulationTest, HostOutsideTheClusterIsRejected) {
  EXPECT_THROW(sim.hello(hello_for(2)), ProtocolError);  // hosts 0 and 1 exist
  EXPECT_THROW(sim.hello(hello_for(-1)), ProtocolError);
}

TEST_F(SimulationTest, BatchFromUnknownClientIsRejected) {
  std::vector<wire::Reply> r;
  Batch b;
  b.device_sync(0, 1);
  EXPECT_THROW(sim.batch(5, b.bytes(), r), ProtocolError);
}

// --- decoding and timing ----------------------------------------------------------------

TEST_F(SimulationTest, LaunchOnLegacyStreamThenStreamSync) {
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").launch(1, kLegacy0).stream_sync(kLegacy0, 7);
  auto r = run(c, b);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].request, 7u);
  // Kernel a (10 µs) submitted at host 0: starts at 0 + 4 (latency), ends 14.
  EXPECT_EQ(r[0].time_ps, ps_us(14));
}

TEST_F(SimulationTest, AsyncRecordsGetNoReply) {
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av")
      .stream(kS1, 0)
      .launch(1, kS1)
      .record(3, kS1)
      .copy(wire::CopyKind::kDeviceToDevice, kS1, true);
  EXPECT_TRUE(run(c, b).empty());
}

TEST_F(SimulationTest, LaunchWithRequestIdRepliesWithItsEnd) {
  const ClientId c = connect();
  Batch b;
  b.kernel(2, "_Z1bv").launch(2, kLegacy0, /*host_us=*/10, 0, /*request=*/9);
  // 10 + 4 = 14 start, + 20 = 34.
  EXPECT_EQ(answer(c, b), us(34));
}

TEST_F(SimulationTest, TwoStreamsOverlapAndLegacyStreamJoinsThem) {
  // The two_streams.cu scenario on the wire, with a=10, b=20, c=5 µs:
  //   event start on legacy at 4; a on s1 4→14; b on s2 4→24; c on legacy waits for both:
  //   24→29; stop event at 29. Elapsed stop − start = 25 µs.
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").kernel(2, "_Z1bv").kernel(3, "_Z1cv");
  b.stream(kS1, 0).stream(kS2, 0);
  b.record(100, kLegacy0).launch(1, kS1).launch(2, kS2).launch(3, kLegacy0).record(101, kLegacy0);
  b.event_sync(100, 1).event_sync(101, 2);
  auto r = run(c, b);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].time_ps, ps_us(4));
  EXPECT_EQ(r[1].time_ps, ps_us(29));
}

TEST_F(SimulationTest, StreamsOverlapCountsKernelTimeBesideAnotherStream) {
  // Non-blocking streams on device 0: a (10 µs) twice on s1, 4 → 14 → 24; b (20 µs) on s2,
  // 4 → 24. Each stream is busy 20 µs, the GPU 20 µs: 20 µs ran beside another stream. On
  // device 1 one stream only: a 4 → 14, then b 14 → 34, no overlap.
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").kernel(2, "_Z1bv");
  b.stream(kS1, 0, wire::kStreamNonBlocking).stream(kS2, 0, wire::kStreamNonBlocking);
  b.launch(1, kS1).launch(2, kS2).launch(1, kS1);
  b.launch(1, kLegacy1, 0, 1).launch(2, kLegacy1, 0, 1);
  b.device_sync(0, 1).device_sync(1, 2);
  run(c, b);
  const RunStats& s = sim.finish();
  EXPECT_EQ(s.gpus[0].busy, us(40));
  EXPECT_EQ(s.gpus[0].streams_overlap, us(20));
  EXPECT_EQ(s.gpus[1].busy, us(30));
  EXPECT_EQ(s.gpus[1].streams_overlap, SimTime::zero());
  const nlohmann::json r = make_report(config(), s, RunOutcome{});
  EXPECT_DOUBLE_EQ(r["gpu_time"]["streams_overlap_s"].get<double>(), 20e-6);
  EXPECT_DOUBLE_EQ(r["gpus"][0]["streams_overlap_s"].get<double>(), 20e-6);
  EXPECT_NE(summary_table(r).find("kernels on parallel streams"), std::string::npos);
}

TEST_F(SimulationTest, TheSummaryKeepsAMessageOfSeveralLinesUnderItsStatus) {
  RunOutcome outcome;
  outcome.status = "failed";
  outcome.message = "stopped; it stood so:\n  network at 1.000 ms\n  rank 0 waits";
  const std::string table = summary_table(make_report(config(), sim.finish(), outcome));
  EXPECT_NE(
      table.find("failed: stopped; it stood so:\n    network at 1.000 ms\n    rank 0 waits\n"),
      std::string::npos)
      << table;
}

TEST_F(SimulationTest, CrossStreamEventWaitDelaysTheWaiter) {
  const ClientId c = connect();
  Batch b;
  b.kernel(2, "_Z1bv").kernel(1, "_Z1av");
  b.stream(kS1, 0, wire::kStreamNonBlocking).stream(kS2, 0, wire::kStreamNonBlocking);
  b.launch(2, kS1).record(5, kS1);  // b: 4 → 24; event 5 at 24
  b.wait(kS2, 5).launch(1, kS2);    // a waits for 24: 24 → 34
  b.stream_sync(kS2, 1).stream_sync(kS1, 2);
  auto r = run(c, b);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].time_ps, ps_us(34));
  EXPECT_EQ(r[1].time_ps, ps_us(24));
}

TEST_F(SimulationTest, NonBlockingStreamDoesNotJoinLegacyStream) {
  const ClientId c = connect();
  Batch b;
  b.kernel(2, "_Z1bv").kernel(3, "_Z1cv");
  b.stream(kS1, 0, wire::kStreamNonBlocking);
  b.launch(2, kS1);       // 4 → 24 on the non-blocking stream
  b.launch(3, kLegacy0);  // legacy does not wait for it: 4 → 9
  b.stream_sync(kLegacy0, 1).device_sync(0, 2);
  auto r = run(c, b);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].time_ps, ps_us(9));
  EXPECT_EQ(r[1].time_ps, ps_us(24));  // the device sync covers every stream
}

TEST_F(SimulationTest, HostTimeOfRecordsBoundsTheStart) {
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av");
  b.launch(1, kLegacy0, 0);    // 4 → 14
  b.launch(1, kLegacy0, 100);  // host 100: starts 104, ends 114
  b.stream_sync(kLegacy0, 1, 100);
  EXPECT_EQ(answer(c, b), us(114));
}

TEST_F(SimulationTest, ReplyCarriesCompletionTimeEvenWhenHostIsLater) {
  // The reply is the time the awaited work completed (an event's timestamp); the shim moves
  // its clock to max(clock, reply). Kernel ends at 14; the sync is asked at host 500.
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").launch(1, kLegacy0, 0).stream_sync(kLegacy0, 1, 500);
  EXPECT_EQ(answer(c, b), us(14));
}

TEST_F(SimulationTest, CopiesAndMemsetsCostWhatTheProviderSays) {
  const ClientId c = connect();
  Batch b;
  b.copy(wire::CopyKind::kHostToDevice, kLegacy0, /*pinned=*/true, 0, /*request=*/1);   // 4→34
  b.copy(wire::CopyKind::kDeviceToHost, kLegacy0, /*pinned=*/false, 0, /*request=*/2);  // →114
  b.copy(wire::CopyKind::kDeviceToDevice, kLegacy0, true, 0, 3);                        // →117
  b.add(RecordType::kMemset, wire::Memset{kLegacy0, 0, 0, 64}, 0, 4);                   // →119
  auto r = run(c, b);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].time_ps, ps_us(34));   // 4 + 30 (pinned H2D)
  EXPECT_EQ(r[1].time_ps, ps_us(114));  // 34 + 2 × 40 (pageable D2H)
  EXPECT_EQ(r[2].time_ps, ps_us(117));  // 114 + 3
  EXPECT_EQ(r[3].time_ps, ps_us(119));  // 117 + 2
  EXPECT_EQ(costs.pinned_seen, (std::vector<bool>{true, false, true}));
}

TEST_F(SimulationTest, EventSyncOfNeverRecordedEventIsImmediate) {
  const ClientId c = connect();
  Batch b;
  b.event_sync(12345, 1, 50);
  EXPECT_EQ(answer(c, b), SimTime::zero());
}

TEST_F(SimulationTest, HostFuncIsAZeroCostStreamOp) {
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").launch(1, kLegacy0);  // 4 → 14
  b.add(RecordType::kHostFunc, wire::StreamRef{kLegacy0, 0, 0});
  b.launch(1, kLegacy0).stream_sync(kLegacy0, 1);  // 14 → 24
  EXPECT_EQ(answer(c, b), us(24));
}

TEST_F(SimulationTest, DevicesOfOneClientAreIndependent) {
  const ClientId c = connect();
  Batch b;
  b.kernel(2, "_Z1bv");
  b.launch(2, kLegacy0, 0, 0);  // device 0: 4 → 24
  b.launch(2, kLegacy1, 0, 1);  // device 1: 4 → 24 as well, no cross-device barrier
  b.launch(2, kLegacy1, 0, 1);  // 24 → 44
  b.device_sync(0, 1).device_sync(1, 2);
  auto r = run(c, b);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].time_ps, ps_us(24));
  EXPECT_EQ(r[1].time_ps, ps_us(44));
}

TEST_F(SimulationTest, ClientsDoNotShareStreams) {
  const ClientId c0 = connect(0);
  const ClientId c1 = connect(0);
  Batch b0;
  b0.kernel(2, "_Z1bv").launch(2, kLegacy0).launch(2, kLegacy0);  // 4 → 44 on client 0
  run(c0, b0);
  Batch b1;
  b1.kernel(1, "_Z1av").launch(1, kLegacy0).stream_sync(kLegacy0, 1);
  // Client 1's legacy stream (same id, same host GPU) is its own: 4 → 14.
  EXPECT_EQ(answer(c1, b1), us(14));
}

TEST_F(SimulationTest, BatchesAccumulateAcrossCalls) {
  const ClientId c = connect();
  Batch b1;
  b1.kernel(1, "_Z1av").stream(kS1, 0).launch(1, kS1);  // 4 → 14
  run(c, b1);
  Batch b2;
  b2.launch(1, kS1).stream_sync(kS1, 1);  // kernel id 1 still defined: 14 → 24
  EXPECT_EQ(answer(c, b2), us(24));
}

// --- statistics and the end of the run --------------------------------------------------

TEST_F(SimulationTest, StatsCountOpsKernelsAndBusyTimePerGpu) {
  const ClientId c = connect(1);  // host 1: its device 1 is global GPU 1 × 2 + 1 = 3
  Batch b;
  b.kernel(1, "_Z1av").kernel(4, "_Z1dv").kernel(9, "_Z7unknownv");
  b.launch(1, kLegacy1, 0, 1).launch(1, kLegacy1, 0, 1).launch(4, kLegacy1, 0, 1);
  b.launch(9, kLegacy0, 0, 0);  // default cost 1 µs on global GPU 2
  b.copy(wire::CopyKind::kHostToDevice, kLegacy1, true, 0, 0, 1);
  run(c, b);
  const RunStats& s = sim.finish();
  ASSERT_EQ(s.gpus.size(), 4u);
  EXPECT_EQ(s.gpus[3].busy, us(10 + 10 + 7 + 30));
  EXPECT_EQ(s.gpus[2].busy, us(1));
  EXPECT_EQ(s.gpus[0].busy, SimTime::zero());
  EXPECT_EQ(s.op_counts.at(OpKind::kKernel), 4u);
  EXPECT_EQ(s.op_counts.at(OpKind::kCopy), 1u);
  EXPECT_EQ(s.kernels.at("_Z1av").count, 2u);
  EXPECT_EQ(s.kernels.at("_Z1av").total, us(20));
  EXPECT_EQ(s.kernels.at("_Z1dv").source, CostSource::kPinned);
  EXPECT_EQ(s.kernels.at("_Z7unknownv").source, CostSource::kDefault);
  EXPECT_EQ(s.gpu_time_by_source.at(CostSource::kPinned), us(27));
  EXPECT_EQ(s.gpu_time_by_source.at(CostSource::kDefault), us(1));
  EXPECT_EQ(s.gpu_time_by_source.at(CostSource::kModelled), us(30));
  // Device 1: 4 → 14 → 24 → 31 → 61 (copy).
  EXPECT_EQ(s.simulated_end, us(61));
  ASSERT_EQ(s.clients.size(), 1u);
  EXPECT_EQ(s.clients[0].host, 1);
}

TEST_F(SimulationTest, ReportListsEveryDefaultPricedKernelByName) {
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").kernel(7, "_Z7unknownv").kernel(8, "_Z8unknown2v");
  b.launch(1, kLegacy0, 0).launch(7, kLegacy0, 0).launch(8, kLegacy0, 0).launch(8, kLegacy0, 0);
  run(c, b);
  const nlohmann::json r = make_report(config(), sim.finish(), RunOutcome{});
  const nlohmann::json& defaulted = r["gpu_time"]["defaulted_kernels"];
  // _Z1av is pinned (10 µs); the unknown kernels cost the fixture's default 1 µs per launch and
  // are listed, costliest first.
  ASSERT_EQ(defaulted.size(), 2u) << defaulted.dump();
  EXPECT_EQ(defaulted[0]["mangled"], "_Z8unknown2v");
  EXPECT_EQ(defaulted[0]["count"], 2);
  EXPECT_DOUBLE_EQ(defaulted[0]["total_s"].get<double>(), 2e-6);
  EXPECT_EQ(defaulted[0]["source"], "default");
  EXPECT_EQ(defaulted[1]["mangled"], "_Z7unknownv");
  EXPECT_DOUBLE_EQ(defaulted[1]["total_s"].get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(r["gpu_time"]["by_source"]["default"]["time_s"].get<double>(), 3e-6);
}

TEST_F(SimulationTest, SimulatedEndIncludesTheHostClock) {
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").launch(1, kLegacy0, 0);  // GPU done at 14
  b.add(RecordType::kHostClock, wire::HostClock{0}, /*host_us=*/250);
  run(c, b);
  sim.bye(c, us(300));  // the process said goodbye at host 300 µs
  const RunStats& s = sim.finish();
  EXPECT_EQ(s.simulated_end, us(300));
  EXPECT_EQ(s.clients[0].host_clock, us(300));
  EXPECT_EQ(s.clients[0].end, "exited");
  EXPECT_EQ(sim.connected_clients(), 0u);
}

// A launcher or a loader's worker that never touched the GPU runs its own clock (its timeouts
// wait real time): the run ends with the ranks, whatever that clock reached. Without ranks the
// helpers' clocks are all there is.
TEST_F(SimulationTest, SimulatedEndIsTheRanksNotAHelpersClock) {
  const ClientId rank = connect();
  const ClientId helper = connect();
  Batch b;
  b.kernel(1, "_Z1av").launch(1, kLegacy0, 0);  // GPU done at 14
  run(rank, b);
  sim.bye(rank, us(300));
  sim.bye(helper, us(5'500'000));  // an agent's monitoring sleeps: 5.5 s
  const RunStats& s = sim.finish();
  EXPECT_EQ(s.simulated_end, us(300));
  ASSERT_EQ(s.clients.size(), 2u);
  EXPECT_EQ(s.clients[1].host_clock, us(5'500'000));  // still reported as its own

  Simulation alone(config(), costs);
  const ClientId only = alone.hello(hello_for(0)).client_id;
  alone.bye(only, us(700));
  EXPECT_EQ(alone.finish().simulated_end, us(700));
}

TEST_F(SimulationTest, DisconnectIsRecorded) {
  const ClientId c = connect();
  sim.disconnected(c, "socket reset");
  EXPECT_EQ(sim.connected_clients(), 0u);
  EXPECT_EQ(sim.finish().clients[0].end, "disconnected: socket reset");
}

// --- memory -----------------------------------------------------------------------------

TEST_F(SimulationTest, PeakMemoryPerGpu) {
  const ClientId h0 = connect(0);
  const ClientId h1 = connect(1);
  Batch b1;
  b1.alloc(0x1000, 100, 1);  // global GPU 3: in use 100
  b1.alloc(0x2000, 50, 1);   // 150 (peak)
  b1.free(0x1000, 1);        // 50
  b1.alloc(0x3000, 30, 1);   // 80; the peak stays 150
  b1.alloc(0x4000, 7, 0);    // global GPU 2: 7
  run(h1, b1);
  Batch b0;
  b0.alloc(0x1000, 10, 0);  // global GPU 0; the same address in another process is fine
  b0.free(0x1000, 0);
  b0.alloc(0x1000, 5, 0);  // reuse after free: peak still 10
  run(h0, b0);
  const RunStats& s = sim.finish();
  EXPECT_EQ(s.gpus[3].peak_memory, 150);
  EXPECT_EQ(s.gpus[3].memory_in_use, 80);
  EXPECT_EQ(s.gpus[2].peak_memory, 7);
  EXPECT_EQ(s.gpus[0].peak_memory, 10);
  EXPECT_EQ(s.gpus[0].memory_in_use, 5);
  EXPECT_EQ(s.gpus[1].peak_memory, 0);
}

TEST_F(SimulationTest, FreeChargesTheGpuTheAllocationCameFrom) {
  // The free record names a device; the bytes released are those of the allocation, which
  // lives on the device it was allocated on. A mismatched device must not corrupt another
  // GPU's figures: either reject the record or credit the right GPU.
  const ClientId c = connect();
  Batch b;
  b.alloc(0x1000, 100, 0).free(0x1000, 1);
  bool rejected = false;
  try {
    run(c, b);
  } catch (const ProtocolError&) {
    rejected = true;
  }
  const RunStats& s = sim.stats();
  EXPECT_GE(s.gpus[1].memory_in_use, 0) << "GPU 1 was credited memory it never allocated";
  if (!rejected) {
    EXPECT_EQ(s.gpus[0].memory_in_use, 0);
  }
}

TEST_F(SimulationTest, AllocOfALiveAddressIsRejected) {
  // Allocating an address that is still live would double count it: in use becomes 200 while
  // the one free that can follow releases only the second size.
  const ClientId c = connect();
  Batch b;
  b.alloc(0x1000, 100, 0).alloc(0x1000, 100, 0);
  EXPECT_THROW(run(c, b), ProtocolError);
}

// --- graphs -----------------------------------------------------------------------------

TEST_F(SimulationTest, GraphCostsItsLongestDependencyChain) {
  // Nodes: 0 a(10); 1 b(20) after 0; 2 c(5) after 0; 3 d(7) after 1 and 2.
  // Paths: a-b-d = 37, a-c-d = 22. Sum of all nodes would be 42: the graph costs 37.
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").kernel(2, "_Z1bv").kernel(3, "_Z1cv").kernel(4, "_Z1dv");
  b.graph(77, {kernel_node(1), kernel_node(2, {0}), kernel_node(3, {0}), kernel_node(4, {1, 2})});
  // Launched 3 times back to back at host 0: 4 + 3 × 37 = 115.
  b.graph_launch(77, kLegacy0).graph_launch(77, kLegacy0).graph_launch(77, kLegacy0);
  b.stream_sync(kLegacy0, 1);
  EXPECT_EQ(answer(c, b), us(115));
  EXPECT_EQ(sim.finish().op_counts.at(OpKind::kGraph), 3u);
}

TEST_F(SimulationTest, GraphLongestPathIsNotTheLargestNode) {
  // Two independent chains: b(20) alone, and a(10) → c(5) → d(7) → a(10) = 32.
  const ClientId c = connect();
  Batch b;
  b.kernel(1, "_Z1av").kernel(2, "_Z1bv").kernel(3, "_Z1cv").kernel(4, "_Z1dv");
  b.graph(1, {kernel_node(2), kernel_node(1), kernel_node(3, {1}), kernel_node(4, {2}),
              kernel_node(1, {3})});
  b.graph_launch(1, kLegacy0).stream_sync(kLegacy0, 1);
  EXPECT_EQ(answer(c, b), us(4 + 32));
}

TEST_F(SimulationTest, GraphCopyMemsetAndEmptyNodes) {
  // 0 H2D copy (30, costed as pinned); 1 memset (2) after 0; 2 empty after 1;
  // 3 a(10) after 2: 30 + 2 + 0 + 10 = 42, in parallel with 4 D2D (3).
  const ClientId c = connect();
  wire::GraphNode copy{};
  copy.kind = wire::GraphNodeKind::kCopy;
  copy.copy_kind = wire::CopyKind::kHostToDevice;
  copy.bytes = 1 << 20;
  wire::GraphNode mset{};
  mset.kind = wire::GraphNodeKind::kMemset;
  mset.bytes = 64;
  mset.dep_count = 1;
  mset.deps[0] = 0;
  wire::GraphNode empty{};
  empty.kind = wire::GraphNodeKind::kEmpty;
  empty.dep_count = 1;
  empty.deps[0] = 1;
  wire::GraphNode d2d{};
  d2d.kind = wire::GraphNodeKind::kCopy;
  d2d.copy_kind = wire::CopyKind::kDeviceToDevice;
  Batch b;
  b.kernel(1, "_Z1av");
  b.graph(2, {copy, mset, empty, kernel_node(1, {2}), d2d});
  b.graph_launch(2, kLegacy0, 10).stream_sync(kLegacy0, 1, 10);
  EXPECT_EQ(answer(c, b), us(10 + 4 + 42));
}

TEST_F(SimulationTest, GraphNodesCarryGemmsAndKernelWork) {
  // A GEMM captured into a graph is priced as that GEMM (50 µs here, the provider's GEMM price,
  // not a kernel's), and a kernel node's decoded work reaches the provider as a launch's does.
  const ClientId c = connect();
  wire::GraphNode gemm{};
  gemm.kind = wire::GraphNodeKind::kGemm;
  gemm.gemm.m = 4096, gemm.gemm.n = 1024, gemm.gemm.k = 512, gemm.gemm.batch = 1;
  gemm.gemm.accumulate = 1;
  wire::GraphNode attention = kernel_node(1, {0});
  attention.work.kind = wire::WorkKind::kAttentionForward;
  attention.work.attention.heads_q = 16, attention.work.attention.heads_kv = 4;
  attention.work.attention.seq_k = 560;
  Batch b;
  b.kernel(1, "_Z1av");
  b.graph(3, {gemm, attention});
  b.graph_launch(3, kLegacy0, 10).stream_sync(kLegacy0, 1, 10);
  EXPECT_EQ(answer(c, b), us(10 + 4 + 50 + 10));
  ASSERT_EQ(costs.gemms_seen.size(), 1u);
  EXPECT_EQ(costs.gemms_seen[0].m, 4096);
  EXPECT_EQ(costs.gemms_seen[0].accumulate, 1);
  ASSERT_FALSE(costs.work_seen.empty());
  EXPECT_EQ(costs.work_seen.back().kind, wire::WorkKind::kAttentionForward);
  EXPECT_EQ(costs.work_seen.back().attention.heads_kv, 4u);
  EXPECT_EQ(costs.work_seen.back().attention.seq_k, 560u);
}

TEST_F(SimulationTest, GraphLaunchFollowsStreamSemantics) {
  // A graph on a blocking stream waits for earlier legacy work like any other op.
  const ClientId c = connect();
  Batch b;
  b.kernel(2, "_Z1bv").kernel(1, "_Z1av").stream(kS1, 0);
  b.graph(5, {kernel_node(1), kernel_node(1, {0})});  // 20 µs
  b.launch(2, kLegacy0);                              // legacy 4 → 24
  b.graph_launch(5, kS1).stream_sync(kS1, 1);         // 24 → 44
  EXPECT_EQ(answer(c, b), us(44));
}

// --- malformed input --------------------------------------------------------------------

class MalformedTest : public SimulationTest {
 protected:
  void expect_rejected(const Batch& b) {
    const ClientId c = connect();
    std::vector<wire::Reply> r;
    EXPECT_THROW(sim.batch(c, b.bytes(), r), ProtocolError);
  }
};

TEST_F(MalformedTest, TruncatedRecordHeader) {
  Batch b;
  b.device_sync(0, 1);
  b.data().resize(sizeof(wire::RecordHeader) - 1);
  expect_rejected(b);
}

TEST_F(MalformedTest, RecordLongerThanTheBatch) {
  Batch b;
  b.device_sync(0, 1);
  b.data().pop_back();  // header says 8 body bytes, 7 remain
  expect_rejected(b);
}

TEST_F(MalformedTest, BodyOfTheWrongSize) {
  wire::Launch l{};
  l.stream = kLegacy0;
  std::vector<std::byte> longer(sizeof(l) + 1);
  std::memcpy(longer.data(), &l, sizeof(l));
  Batch shorter;
  shorter.kernel(1, "_Z1av").raw(RecordType::kLaunch, &l, sizeof(l) - 1);
  expect_rejected(shorter);
  Batch too_long;
  too_long.kernel(1, "_Z1av").raw(RecordType::kLaunch, longer.data(), longer.size());
  expect_rejected(too_long);
  Batch sync;
  sync.raw(RecordType::kStreamSync, longer.data(), sizeof(wire::StreamRef) + 4, 0, 1);
  expect_rejected(sync);
}

TEST_F(MalformedTest, UnknownRecordType) {
  Batch b;
  const wire::DeviceRef d{};
  b.raw(static_cast<RecordType>(999), &d, sizeof(d));
  expect_rejected(b);
}

TEST_F(MalformedTest, NegativeHostTime) {
  Batch b;
  const wire::DeviceRef d{};
  b.raw(RecordType::kDeviceSync, &d, sizeof(d), 0, 1, /*host_ps_override=*/0);
  // Rewrite the host time to −1 ps.
  const int64_t minus_one = -1;
  std::memcpy(b.data().data() + offsetof(wire::RecordHeader, host_time_ps), &minus_one,
              sizeof(minus_one));
  expect_rejected(b);
}

TEST_F(MalformedTest, LaunchOfUndefinedKernel) {
  Batch b;
  b.launch(42, kLegacy0);
  expect_rejected(b);
}

TEST_F(MalformedTest, DefineKernelSizeMismatch) {
  Batch b;
  wire::DefineKernel k{1, 10};  // claims 10 name bytes, carries 3
  std::vector<std::byte> body(sizeof(k) + 3);
  std::memcpy(body.data(), &k, sizeof(k));
  b.raw(RecordType::kDefineKernel, body.data(), body.size());
  expect_rejected(b);
}

TEST_F(MalformedTest, DeviceOutOfRange) {
  Batch launch;
  launch.kernel(1, "_Z1av").launch(1, wire::kLegacyStreamBase + 2, 0, /*device=*/2);
  expect_rejected(launch);
  Batch sync;
  sync.device_sync(-1, 1);
  expect_rejected(sync);
  Batch create;
  create.stream(kS1, 5);
  expect_rejected(create);
  Batch alloc;
  alloc.alloc(0x1000, 1, 2);
  expect_rejected(alloc);
}

TEST_F(MalformedTest, StreamIdInTheReservedRange) {
  Batch b;
  b.stream(5, 0);
  expect_rejected(b);
}

TEST_F(MalformedTest, FreeOfAnAddressNeverAllocated) {
  Batch b;
  b.alloc(0x1000, 8, 0).free(0x2000, 0);
  expect_rejected(b);
  Batch twice;
  twice.alloc(0x1000, 8, 0).free(0x1000, 0).free(0x1000, 0);
  expect_rejected(twice);
}

TEST_F(MalformedTest, GraphDefinitionErrors) {
  const std::vector<wire::GraphNode> nodes = {kernel_node(1), kernel_node(1, {0})};
  Batch size_mismatch;
  size_mismatch.graph(1, nodes);
  size_mismatch.data().pop_back();
  // Re-state the record size so the batch framing itself is consistent.
  {
    auto& d = size_mismatch.data();
    const uint32_t size = static_cast<uint32_t>(d.size() - sizeof(wire::RecordHeader));
    std::memcpy(d.data() + offsetof(wire::RecordHeader, size), &size, sizeof(size));
  }
  expect_rejected(size_mismatch);

  Batch forward;
  forward.graph(1, {kernel_node(1, {1}), kernel_node(1)});  // node 0 depends on node 1
  expect_rejected(forward);

  Batch self;
  self.graph(1, {kernel_node(1, {0})});
  expect_rejected(self);

  wire::GraphNode wide = kernel_node(1);
  wide.dep_count = wire::kMaxGraphNodeDeps + 1;
  Batch too_many;
  too_many.graph(1, {kernel_node(1), wide});
  expect_rejected(too_many);
}

TEST_F(MalformedTest, LaunchOfUnknownGraph) {
  Batch b;
  b.graph_launch(9, kLegacy0);
  expect_rejected(b);
}

TEST_F(MalformedTest, GraphNodeNamingAnUndefinedKernel) {
  Batch b;
  b.graph(1, {kernel_node(33)}).graph_launch(1, kLegacy0);
  expect_rejected(b);
}

TEST_F(MalformedTest, UseOfAStreamNeverCreated) {
  // A record naming a user stream the client never announced is an unexpected message
  // (simulation.hpp: ProtocolError closes that connection), like an undefined kernel.
  Batch launch;
  launch.kernel(1, "_Z1av").launch(1, kS2);
  expect_rejected(launch);
  Batch destroy;
  destroy.add(RecordType::kStreamDestroy, wire::StreamRef{kS2, 0, 0});
  expect_rejected(destroy);
}

TEST_F(MalformedTest, DuplicateStreamCreate) {
  Batch b;
  b.stream(kS1, 0).stream(kS1, 0);
  expect_rejected(b);
}

// --- sharing the GPU with NCCL (gpu_sharing.hpp) -----------------------------------------

// Two ranks on one H100 host: rank 0 launches an all-reduce of 1 GiB on one stream and a kernel
// (20 µs alone) on another; the kernel runs on the SMs the all-reduce's channels leave.
class SharingTest : public DrivenSimulation {
 protected:
  SharingTest() : DrivenSimulation(config()) {}
  static SimulationConfig config() {
    SimulationConfig c;
    c.hosts = 1;
    c.gpus_per_host = 2;
    c.gpu_name = "h100";
    c.device.multiprocessor_count = kSms;
    c.hbm_bytes_per_s = kHbm;
    c.cpu_time = wire::CpuTimeMode::kZero;
    c.launch_latency = us(4);
    c.token = "sekrit";
    return c;
  }
  static constexpr int kSms = 132;
  static constexpr double kHbm = 3e12;  // bytes/s the GPU's kernels reach
  static constexpr uint64_t kBytes = uint64_t{1} << 30;

  ClientId connect(int rank) {
    wire::Hello h = hello_for(0, "sekrit", rank);
    h.pid = 2000 + rank;
    return sim.hello(h).client_id;
  }
  static Batch join(int rank) {
    wire::CommInit init{};
    init.comm = 77;
    init.unique_id[0] = 42;
    init.nranks = 2;
    init.rank = rank;
    init.device = rank;
    Batch b;
    b.kernel(1, "_Z1bv").stream(kS1, rank).stream(kS2, rank);
    return b.add(RecordType::kCommInit, init, 0, /*request=*/1);
  }
  static Batch& all_reduce(Batch& b, int device, double host_us) {
    struct {
      wire::CollectiveHeader head;
      wire::CollectiveOp op;
    } body{};
    body.head = wire::CollectiveHeader{kS1, device, 1};
    body.op.comm = 77;
    body.op.kind = wire::CollKind::kAllReduce;
    body.op.dtype = wire::DataType::kBF16;
    body.op.count = kBytes / 2;
    return b.add(RecordType::kCollective, body, host_us);
  }
  static Batch& kernel(Batch& b, int device, uint32_t ctas, double host_us,
                       wire::WorkKind work = wire::WorkKind::kNone) {
    wire::Launch l{};
    l.stream = kS2;
    l.device = device;
    l.kernel = 1;
    l.grid[0] = ctas;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = 128, l.block[1] = l.block[2] = 1;
    l.work.kind = work;
    return b.add(RecordType::kLaunch, l, host_us);
  }
  // Rank 0's kernel end (the answer to its stream sync) when it launches the kernel with
  // `ctas` CTAs after its all-reduce (or before it). `rank1_first`: rank 1's records reach
  // the daemon first.
  SimTime kernel_end(uint32_t ctas, bool after, bool rank1_first = false,
                     wire::WorkKind work = wire::WorkKind::kNone) {
    const ClientId r0 = connect(0), r1 = connect(1);
    run(r0, join(0));
    run(r1, join(1));
    Batch b0, b1;
    if (after) all_reduce(b0, 0, 10);
    kernel(b0, 0, ctas, 10, work);
    if (!after) all_reduce(b0, 0, 10);
    b0.stream_sync(kS2, 2, 10, 0);
    all_reduce(b1, 1, 10).stream_sync(kS1, 2, 10, 1);
    if (rank1_first) {
      run(r1, b1);
      run(r0, b0);
    } else {
      run(r0, b0);
      run(r1, b1);
    }
    sim.finish();  // lets the network finish the all-reduce rank 1 waits for
    for (const auto& [client, r] : woken) answered[{client, r.request}] = SimTime::ps(r.time_ps);
    EXPECT_TRUE(answered.contains({r1, 2}));
    return answered.at({r0, 2});
  }
  net::CollectivePlan plan() const {
    const net::CollectiveRequest r{net::CollOp::AllReduce, {0, 1}, Bytes(kBytes), 0, {}};
    return net::plan_collective(sim.network().topology(), r);
  }
  // Channels NCCL's model plans the all-reduce with on this host (what the kernel loses).
  int channels() const { return plan().channels; }
  // What the all-reduce draws from GPU 0's HBM: its traffic over its modelled time.
  double hbm_drawn() const {
    const net::CollectivePlan p = plan();
    return net::hbm_traffic_bytes(p, 0) / p.predicted.as_seconds();
  }
};

TEST_F(SharingTest, AKernelLaunchedAfterACollectiveRunsOnTheSmsItLeaves) {
  const int ch = channels();
  ASSERT_GT(ch, 0);
  ASSERT_LT(ch, kSms);
  // Kernel and all-reduce both start at 10 + 4 µs; the all-reduce (1 GiB) outlasts the kernel,
  // which does its 20 µs of work on 132 - ch SMs: 20 µs x 132 / (132 - ch), rounded up.
  const int64_t need = (us(20).as_ps() * kSms + (kSms - ch) - 1) / (kSms - ch);
  EXPECT_EQ(kernel_end(0, true), us(14) + SimTime::ps(need)) << ch << " channels";
  // The report's gpu_time.shared_with_nccl: one kernel, the time beyond its 20 µs alone.
  EXPECT_EQ(sim.stats().kernels_shared_with_nccl, 1u);
  EXPECT_EQ(sim.stats().shared_with_nccl, SimTime::ps(need) - us(20));
}

TEST_F(SharingTest, TheSameEndWhicheverRankReachesTheDaemonFirst) {
  const int ch = channels();
  const int64_t need = (us(20).as_ps() * kSms + (kSms - ch) - 1) / (kSms - ch);
  EXPECT_EQ(kernel_end(kSms, true, /*rank1_first=*/true), us(14) + SimTime::ps(need));
}

TEST_F(SharingTest, AMemoryBoundKernelGetsTheHbmBandwidthTheAllReduceLeaves) {
  // The 20 µs kernel moves 60 MB: alone it draws all of the GPU's 3 TB/s. The all-reduce's
  // plan moves hbm_traffic_bytes through GPU 0's HBM over its modelled time (tested by hand in
  // netmodel's HbmTraffic.*), and outlasts the kernel: the kernel runs at the HBM left over
  // what it draws alone, if that binds before the SMs do.
  costs.kernel_hbm_bytes["_Z1bv"] = 6e7;
  const double drawn = hbm_drawn();
  const double hbm_rate = (kHbm - drawn) / kHbm;
  const double sm_rate = static_cast<double>(kSms - channels()) / kSms;
  ASSERT_LT(hbm_rate, sm_rate) << drawn;
  const SimTime end = kernel_end(0, true);
  EXPECT_NEAR(static_cast<double>((end - us(14)).as_ps()), us(20).as_ps() / hbm_rate, 2.0);
  EXPECT_EQ(sim.stats().kernels_shared_with_nccl, 1u);
  EXPECT_EQ(sim.stats().shared_with_nccl, end - us(34));
}

TEST_F(SharingTest, TheSameHbmBoundEndWhicheverRankReachesTheDaemonFirst) {
  // The transfer's data starts moving only once rank 1 has arrived: rank 0's kernel must not
  // be placed before then, whichever order the ranks' records come in.
  costs.kernel_hbm_bytes["_Z1bv"] = 6e7;
  const double drawn = hbm_drawn();
  const SimTime end = kernel_end(0, true, /*rank1_first=*/true);
  EXPECT_NEAR(static_cast<double>((end - us(14)).as_ps()), us(20).as_ps() * kHbm / (kHbm - drawn),
              2.0);
}

TEST_F(SharingTest, AStallReportSaysWhoHoldsTheNetworkAndWhoWaits) {
  // Rank 0 posts its all-reduce and waits for it; rank 1 has launched a kernel at 10 µs and not
  // reached the all-reduce: it bounds the network from 10 µs, which may run to 10 + 4 µs.
  const ClientId r0 = connect(0), r1 = connect(1);
  run(r0, join(0));
  run(r1, join(1));
  Batch b0, b1;
  all_reduce(b0, 0, 10).stream_sync(kS1, 2, 10, 0);
  kernel(b1, 1, 1, 10);
  run(r0, b0);
  run(r1, b1);
  const std::vector<std::string> lines = sim.stall_report();
  ASSERT_EQ(lines.size(), 5u) << fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_NE(lines[0].find("causality lets it run to 0.014 ms"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("pid 2000 rank 0: host clock 0.010 ms, 1 call(s) awaiting"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("every thread waits, does not bound the network"), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("pid 2001 rank 1: host clock 0.010 ms, 0 call(s) awaiting"),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[2].find("bounds the network from 0.010 ms <- holds it"), std::string::npos)
      << lines[2];
  EXPECT_NE(lines[3].find("collective #0: never called by rank 1"), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find("rank 0 is blocked in a synchronising CUDA/NCCL call"), std::string::npos)
      << lines[4];
}

TEST_F(SharingTest, AStallReportNamesTheAnswersNotYetTakenUp) {
  // Rank 0 queries event 99, never recorded: complete, answered at once with time 0. Until its
  // thread says it runs again, that answer bounds rank 0 from 0 (the record's own bound says
  // "waits"), and the report names the request: a debugger on the rank shows which thread waits
  // for it.
  const ClientId r0 = connect(0), r1 = connect(1);
  run(r0, join(0));
  run(r1, join(1));
  Batch b;
  b.event_sync(99, 7, 10);
  std::vector<wire::Reply> replies;  // not taken up: no kHostResumed follows (run() sends one)
  sim.batch(r0, b.bytes(), replies);
  ASSERT_EQ(replies.size(), 1u);
  const std::vector<std::string> lines = sim.stall_report();
  ASSERT_GE(lines.size(), 2u) << fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_NE(lines[1].find("pid 2000 rank 0: host clock 0.010 ms, 0 call(s) awaiting an answer; "
                          "bounds the network from 0.000 ms (1 answer(s) not yet taken up: "
                          "request 7 at 0.000 ms)"),
            std::string::npos)
      << lines[1];
}

TEST_F(SharingTest, AClientThatHoldsTheNetworkWhileItWaitsIsToldHowFarItGot) {
  // Rank 0 posts its all-reduce at 10 µs and waits for it in one thread, while another of its
  // threads holds its bound at 500 µs (a sleep to its wake-up); rank 1 does the same and only
  // waits. The network may run to 500 + 4 µs, short of the 1 GiB all-reduce's end: rank 0's
  // answer cannot come before 500 µs, and rank 0 is told so (wire::Progress), since it holds
  // the network there itself; rank 1, which holds nothing, is not. When rank 0's bound moves on
  // to 700 µs it is told again; once it waits in every thread the all-reduce ends, and a client
  // with nothing left to wait for is told nothing more.
  std::vector<std::pair<ClientId, SimTime>> told;
  sim.set_progress_sink([&told](ClientId id, const wire::Progress& p) {
    told.emplace_back(id, SimTime::ps(p.answers_from_ps));
  });
  const ClientId r0 = connect(0), r1 = connect(1);
  run(r0, join(0));
  run(r1, join(1));
  told.clear();
  const auto moved_to = [](double host_us) {
    Batch b;
    return b.add(RecordType::kHostClock, wire::HostClock{0, 0, 0}, host_us);
  };
  Batch b0, b1;
  all_reduce(b0, 0, 10).stream_sync(kS1, 2, 10, 0);
  b0.add(RecordType::kHostClock, wire::HostClock{0, 0, 0}, 500);
  all_reduce(b1, 1, 10).stream_sync(kS1, 2, 10, 1);
  run(r1, b1);
  EXPECT_TRUE(told.empty());
  run(r0, b0);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0], std::make_pair(r0, us(500)));
  run(r0, moved_to(700));
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[1], std::make_pair(r0, us(700)));
  run(r0, moved_to(700));  // the same bound again: nothing new to say
  EXPECT_EQ(told.size(), 2u);
  // A record whose bound says that every thread waits: the network drains to the all-reduce's
  // end.
  Batch all_wait = moved_to(700);
  wire::RecordHeader h;
  std::memcpy(&h, all_wait.data().data(), sizeof(h));
  h.bound_ps = wire::kNoBound;
  std::memcpy(all_wait.data().data(), &h, sizeof(h));
  run(r0, all_wait);
  EXPECT_TRUE(answered.contains({r0, 2}));
  EXPECT_TRUE(answered.contains({r1, 2}));
  EXPECT_GT(answered.at({r0, 2}), us(700));
  EXPECT_EQ(told.size(), 2u);
}

TEST_F(SharingTest, AProgressCoversTheRequestsReadBeforeItAndAQueryMayGoOnWithout) {
  // As above, rank 0 holds the network at 500 µs while it waits for its all-reduce (request 2),
  // and is told so, for the requests read by then. A query read later (request 3, the same
  // stream) may be answered earlier than what was said of the others, so it is said again for
  // it, at the same time. Its thread goes on without the answer (the shim lets a query go on
  // once it is told that the answer comes after the thread's clock) and says so before the
  // reply: the reply, when the all-reduce ends, bounds nothing, while the synchronisation's
  // (request 2), not yet taken up, still bounds rank 0.
  std::vector<std::pair<ClientId, wire::Progress>> told;
  sim.set_progress_sink(
      [&told](ClientId id, const wire::Progress& p) { told.emplace_back(id, p); });
  const ClientId r0 = connect(0), r1 = connect(1);
  run(r0, join(0));
  run(r1, join(1));
  told.clear();
  const wire::HostClock moved{0, 0, 0};
  Batch b0, b1;
  all_reduce(b0, 0, 10).stream_sync(kS1, 2, 10, 0).add(RecordType::kHostClock, moved, 500);
  all_reduce(b1, 1, 10).stream_sync(kS1, 2, 10, 1);
  run(r1, b1);
  run(r0, b0);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].first, r0);
  EXPECT_EQ(told[0].second.answers_from_ps, us(500).as_ps());
  EXPECT_EQ(told[0].second.through_request, 2u);
  Batch query;
  query.stream_sync(kS1, 3, 10, 0).add(RecordType::kHostClock, moved, 500);
  run(r0, query);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[1].second.answers_from_ps, us(500).as_ps());
  EXPECT_EQ(told[1].second.through_request, 3u);
  // The query's thread goes on; then every thread waits (the last record's bound) and the
  // network drains.
  const wire::HostClock resumed{3, wire::kHostResumed, 0};
  Batch all_wait;
  all_wait.add(RecordType::kHostClock, resumed, 500).add(RecordType::kHostClock, moved, 500);
  wire::RecordHeader h;
  const size_t last = all_wait.data().size() - sizeof(h) - sizeof(moved);
  std::memcpy(&h, all_wait.data().data() + last, sizeof(h));
  h.bound_ps = wire::kNoBound;
  std::memcpy(all_wait.data().data() + last, &h, sizeof(h));
  std::vector<wire::Reply> replies;  // taken up by hand: run() would say each thread runs
  sim.batch(r0, all_wait.bytes(), replies);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].time_ps, replies[1].time_ps);
  EXPECT_GT(SimTime::ps(replies[0].time_ps), us(500));
  const std::vector<std::string> lines = sim.stall_report();
  ASSERT_GE(lines.size(), 2u) << fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_NE(lines[1].find(fmt::format("(1 answer(s) not yet taken up: request 2 at {:.3f} ms)",
                                      SimTime::ps(replies[0].time_ps).as_ms())),
            std::string::npos)
      << lines[1];
}

TEST_F(SharingTest, AKernelLaunchedBeforeTheCollectiveRunsAlone) {
  EXPECT_EQ(kernel_end(kSms, false), us(34));
  EXPECT_EQ(sim.stats().kernels_shared_with_nccl, 0u);
}

TEST_F(SharingTest, AKernelThatFitsBesideNcclsCtasIsNotSlowed) {
  const uint32_t fits = static_cast<uint32_t>(kSms - channels());
  EXPECT_EQ(kernel_end(fits, true), us(34));
}

// The shim cannot know the grid cuDNN would give a convolution, and its launch names one block:
// a convolution is taken to fill the GPU, as a GEMM is, so it loses the SMs NCCL holds whatever
// grid its launch names.
TEST_F(SharingTest, AConvolutionFillsTheGpuWhateverItsLaunchsGrid) {
  const int ch = channels();
  const int64_t need = (us(20).as_ps() * kSms + (kSms - ch) - 1) / (kSms - ch);
  EXPECT_EQ(kernel_end(1, true, false, wire::WorkKind::kConvolution), us(14) + SimTime::ps(need));
  EXPECT_EQ(sim.stats().kernels_shared_with_nccl, 1u);
}

}  // namespace
}  // namespace phantora::sim
