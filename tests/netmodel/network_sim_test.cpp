// The simulator: event progression, contention, oversubscription, link counters.
#include <gtest/gtest.h>

#include <numeric>
#include <sstream>
#include <string>

#include "phantora/netmodel/network_sim.hpp"

namespace phantora::net {
namespace {

constexpr double kMiB = 1024.0 * 1024;

CollectiveRequest all_reduce(std::vector<GpuId> ranks, double bytes, TuningOverrides o = {}) {
  return {CollOp::AllReduce, std::move(ranks), Bytes(static_cast<uint64_t>(bytes)), 0,
          std::move(o)};
}

std::vector<GpuId> first_n(int n) {
  std::vector<GpuId> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Runs until `id` completes; returns its end.
SimTime run_until_done(NetworkSimulator& sim, TransferId id) {
  while (!sim.transfer(id).end) {
    const SimTime t = sim.next_event_time();
    if (t.is_infinite()) break;
    sim.advance_to(t);
  }
  return sim.transfer(id).end.value_or(SimTime::infinite());
}

TEST(NetworkSim, AloneATransferEndsAtThePlansPrediction) {
  NetworkSimulator sim(Topology::preset("dgx-h100", 1));
  const SimTime start = SimTime::us(10);
  const TransferId id = sim.start(all_reduce(first_n(8), 64 * kMiB), start);
  const SimTime predicted = sim.transfer(id).predicted;
  // Flows finish, then the latency term: the first event is the flows' end.
  const SimTime first = sim.next_event_time();
  EXPECT_EQ(first, start + predicted - sim.transfer(id).latency);
  EXPECT_TRUE(sim.advance_to(first).empty());
  const SimTime second = sim.next_event_time();
  EXPECT_EQ(second, start + predicted);
  const auto done = sim.advance_to(second);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0], (Completion{id, start + predicted}));
  EXPECT_TRUE(sim.next_event_time().is_infinite());
  EXPECT_EQ(sim.active_flows(), 0u);
  // busbw = S / t x 2(n-1)/n.
  const auto& info = sim.transfer(id);
  EXPECT_NEAR(info.busbw_gbs(), 64 * kMiB / predicted.as_seconds() / 1e9 * 1.75, 1e-9);
}

TEST(NetworkSim, AdvancingPastSeveralCompletionsReportsThemInOrder) {
  NetworkSimulator sim(Topology::preset("dgx-h100", 2));
  const TransferId a = sim.start(all_reduce({0, 1}, 1 * kMiB), SimTime::zero());
  const TransferId b = sim.start(all_reduce({8, 9, 10, 11}, 32 * kMiB), SimTime::zero());
  const auto done = sim.advance_to(SimTime::seconds(1));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].id, a);  // smaller, ends first
  EXPECT_EQ(done[1].id, b);
  // Disjoint GPUs: neither slows the other (to the picosecond rounding of each flow).
  EXPECT_NEAR(done[0].end.as_ps(), sim.transfer(a).predicted.as_ps(), 2);
  EXPECT_NEAR(done[1].end.as_ps(), sim.transfer(b).predicted.as_ps(), 2);
  EXPECT_EQ(sim.now(), SimTime::seconds(1));
}

TEST(NetworkSim, StartingLaterKeepsEarlierCompletions) {
  NetworkSimulator sim(Topology::preset("dgx-h100", 1));
  const TransferId a = sim.start(all_reduce(first_n(8), 1 * kMiB), SimTime::zero());
  const SimTime a_end = sim.transfer(a).predicted;
  const TransferId b = sim.start(all_reduce(first_n(8), 1 * kMiB), a_end + SimTime::us(5));
  const auto done = sim.advance_to(SimTime::seconds(1));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], (Completion{a, a_end}));
  EXPECT_EQ(done[1].end, a_end + SimTime::us(5) + sim.transfer(b).predicted);
}

TEST(NetworkSim, TimeOnlyMovesForward) {
  NetworkSimulator sim(Topology::preset("dgx-h100", 1));
  sim.advance_to(SimTime::us(10));
  EXPECT_THROW(sim.advance_to(SimTime::us(5)), std::invalid_argument);
  EXPECT_THROW(sim.start(all_reduce({0, 1}, 1024), SimTime::us(5)), std::invalid_argument);
}

TEST(NetworkSim, TrivialTransfersCompleteAtOnce) {
  NetworkSimulator sim(Topology::preset("dgx-h100", 1));
  const TransferId a = sim.start(all_reduce({3}, 1 << 20), SimTime::us(1));
  const TransferId b = sim.start(all_reduce({0, 1}, 0), SimTime::us(1));
  const auto done = sim.advance_to(SimTime::us(1));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], (Completion{a, SimTime::us(1)}));
  EXPECT_EQ(done[1], (Completion{b, SimTime::us(1)}));
}

TEST(NetworkSim, TwoAllReducesSharingANicEachGetHalf) {
  // ethernet-2tier: one NIC per host shared by its 8 GPUs. Communicator A = GPU 0 of both
  // hosts, B = GPU 1 of both: both rings cross the same two NICs.
  const Topology topo = Topology::preset("ethernet-2tier", 2);
  const TuningOverrides ring{.algo = "Ring", .proto = "Simple"};
  const double bytes = 256 * kMiB;
  NetworkSimulator alone(topo);
  const TransferId solo = alone.start(all_reduce({0, 8}, bytes, ring), SimTime::zero());
  const SimTime t_alone = run_until_done(alone, solo);
  const SimTime lat = alone.transfer(solo).latency;
  // Alone: 2(n-1)/n x S = S crosses the 12 GB/s NIC.
  EXPECT_NEAR((t_alone - lat).as_seconds(), bytes / 12e9, 1e-6);

  NetworkSimulator both(topo);
  const TransferId a = both.start(all_reduce({0, 8}, bytes, ring), SimTime::zero());
  const TransferId b = both.start(all_reduce({1, 9}, bytes, ring), SimTime::zero());
  both.advance_to(SimTime::seconds(10));
  // Together: each gets half the NIC, so the bandwidth part takes twice as long.
  for (TransferId id : {a, b}) {
    const SimTime t = *both.transfer(id).end;
    EXPECT_NEAR((t - lat).as_seconds(), 2 * (t_alone - lat).as_seconds(), 1e-6);
    EXPECT_NEAR(both.transfer(id).busbw_gbs(), alone.transfer(solo).busbw_gbs() / 2,
                0.01 * alone.transfer(solo).busbw_gbs());
  }
}

// Two hosts under different leaves, one spine, one NIC each, the given oversubscription.
std::string fmt_two_racks(double oversubscription) {
  return R"(
[cluster]
hosts = 2
gpus_per_host = 1
gpu_model = "test"
[intra]
fabric = "nvswitch"
bandwidth_gbytes_per_s = 100
latency_ns = 25
nvls = false
[nic]
per_host = 1
bandwidth_gbytes_per_s = 10
latency_ns = 500
[leaf]
kind = "host"
hosts_per_leaf = 1
latency_ns = 300
[spine]
count = 1
latency_ns = 300
ecmp = true
oversubscription = )" +
         std::to_string(oversubscription) + R"(
[nccl]
arch = "hopper"
channels = 2
nvls_channels = 1
)";
}

Topology two_racks(double oversubscription) {
  return Topology::from_toml_string(fmt_two_racks(oversubscription), "two-racks.toml");
}

TEST(NetworkSim, OversubscribedSpineSlowsCrossRackTrafficByTheRatio) {
  const double bytes = 64 * kMiB;
  SimTime duration[2];
  const double ratios[2] = {1.0, 4.0};
  for (int i = 0; i < 2; ++i) {
    NetworkSimulator sim(two_racks(ratios[i]));
    const TransferId id = sim.start(
        CollectiveRequest{CollOp::SendRecv, {0, 1}, Bytes(static_cast<uint64_t>(bytes)), 0, {}},
        SimTime::zero());
    duration[i] = run_until_done(sim, id) - sim.transfer(id).latency;
  }
  // Non-blocking: the 10 GB/s NIC; at 4:1 the uplink is 10 / 4 GB/s: four times slower.
  EXPECT_NEAR(duration[0].as_seconds(), bytes / 10e9, 1e-6);
  EXPECT_NEAR(duration[1].as_seconds() / duration[0].as_seconds(), 4.0, 1e-6);
}

TEST(NetworkSim, LinkCountersAddUp) {
  NetworkSimulator sim(Topology::preset("dgx-h100", 1));
  const double s = 128 * kMiB;
  const TransferId id =
      sim.start(all_reduce(first_n(8), s, {.algo = "Ring", .proto = "Simple"}), SimTime::zero());
  const SimTime end = run_until_done(sim, id);
  const auto stats = sim.link_stats();
  const Topology& t = sim.topology();
  for (GpuId g = 0; g < 8; ++g) {
    // Ring: every GPU sends 2(n-1)/n x S = 1.75 S; busy while its flows ran (end - latency).
    const LinkStats& tx = stats[t.gpu_tx(g)];
    EXPECT_NEAR(tx.bytes, 1.75 * s, 1e-6 * s);
    EXPECT_EQ(tx.busy, end - sim.transfer(id).latency);
    EXPECT_NEAR(tx.utilisation, 1.75 * s / (370.8e9 * end.as_seconds()), 1e-9);
    EXPECT_NEAR(stats[t.gpu_rx(g)].bytes, 1.75 * s, 1e-6 * s);
  }
  EXPECT_EQ(stats[t.nic_tx(0, 0)].bytes, 0.0);
  std::ostringstream csv;
  sim.write_links_csv(csv);
  const std::string text = csv.str();
  EXPECT_EQ(text.rfind("link,kind,capacity_gbytes_per_s,bytes,busy_s,utilisation\n", 0), 0u);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 16);  // 8 tx + 8 rx links used
  EXPECT_NE(text.find("h0/gpu3->nvsw,gpu-to-switch,370.800,"), std::string::npos) << text;
}

TEST(NetworkSim, DeterministicRunToRun) {
  auto run = [] {
    NetworkSimulator sim(Topology::preset("dgx-h100", 4));
    std::vector<Completion> all;
    SimTime t = SimTime::zero();
    for (int i = 0; i < 6; ++i) {
      sim.start(all_reduce(first_n(32), (1 + i) * 8 * kMiB), t);
      sim.start(CollectiveRequest{CollOp::AllToAll, {0, 9, 18, 27}, Bytes(1 << 22), 0, {}}, t);
      t = t + SimTime::us(50);
    }
    auto done = sim.advance_to(SimTime::seconds(1));
    return done;
  };
  const auto a = run(), b = run();
  ASSERT_EQ(a.size(), 12u);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace phantora::net
