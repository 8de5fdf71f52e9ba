// The NCCL model: latencies and bandwidths against NCCL's cost model (NVIDIA/nccl
// src/graph/tuning.cc), selection across sizes, overrides, flow structure.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "phantora/netmodel/nccl_model.hpp"

namespace phantora::net {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::vector<GpuId> first_n(int n) {
  std::vector<GpuId> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

CollectivePlan plan(const Topology& t, CollOp op, int n, double bytes, TuningOverrides o = {}) {
  return plan_collective(
      t, CollectiveRequest{op, first_n(n), Bytes(static_cast<uint64_t>(bytes)), 0, std::move(o)});
}

TEST(NcclModel, RingSimpleLatencyOnOneNode) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const auto p = plan(t, CollOp::AllReduce, 8, 4096, {.algo = "Ring", .proto = "Simple"});
  // base 8.4 + 2(n-1) = 14 steps x 3.4 us (NVLink, Simple) = 56 us.
  EXPECT_NEAR(p.latency.as_us(), 8.4 + 14 * 3.4, 1e-6);
}

TEST(NcclModel, RingAllReduceOneGiBOnEightH100) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const auto p = plan(t, CollOp::AllReduce, 8, kGiB, {.algo = "Ring", .proto = "Simple"});
  EXPECT_EQ(p.algorithm, Algorithm::Ring);
  // S x 2(n-1)/n / 370.8 GB/s + 56 us: 1 GiB x 1.75 / 370.8e9 = 5067.5 us, ~5.1 ms (ref).
  const double expect_us = kGiB * 2 * 7 / 8 / 370.8e9 * 1e6 + 56.0;
  EXPECT_NEAR(p.predicted.as_us(), expect_us, expect_us * 1e-6);
  EXPECT_NEAR(p.predicted.as_ms(), 5.1, 0.1);
}

TEST(NcclModel, NvlsAllReduceOneGiBOnEightH100) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const auto p = plan(t, CollOp::AllReduce, 8, kGiB);
  EXPECT_EQ(p.algorithm, Algorithm::Nvls);  // the fastest on an NVSwitch-3 host at this size
  EXPECT_EQ(p.protocol, Protocol::Simple);
  // Each GPU sends S + S/n to the switch (its buffer for the reduction, its reduced share for
  // the multicast) at 0.85 x 370.8 GB/s, plus NVLS's 25 us: 3832.6 + 25 us.
  const double expect_us = kGiB * (1 + 1.0 / 8) / (0.85 * 370.8e9) * 1e6 + 25.0;
  EXPECT_NEAR(p.predicted.as_us(), expect_us, expect_us * 1e-6);
  // ref: ~4.0 ms at 470 GB/s busbw; NVLS busbw 460-480 measured, 475 in SimAI.
  const double busbw = kGiB * 2 * 7 / 8 / p.predicted.as_seconds() / 1e9;
  EXPECT_NEAR(busbw, 475.0, 0.05 * 475.0);
  EXPECT_NEAR(p.predicted.as_ms(), 4.0, 0.2);
}

TEST(NcclModel, TreeLatencyAcrossNodes) {
  const Topology t = Topology::preset("dgx-h100", 4);
  const auto p = plan(t, CollOp::AllReduce, 32, 4096, {.algo = "Tree", .proto = "Simple"});
  // base 8.4 + 2 x ((ppn-1) = 7 x 4.0 (NVLink Tree Simple) + log2(4 nodes) = 2 x 14 (Net)).
  EXPECT_NEAR(p.latency.as_us(), 8.4 + 2 * (7 * 4.0 + 2 * 14.0), 1e-6);
}

TEST(NcclModel, RingLatencyAcrossNodesHasPlateau) {
  const Topology t = Topology::preset("dgx-h100", 4);
  const auto p = plan(t, CollOp::AllReduce, 32, kGiB, {.algo = "Ring", .proto = "Simple"});
  // 62 steps, 2(nNodes-1) = 6 of them over the network: (8.4 + 56 x 3.4 + 6 x 14) x 1.4.
  EXPECT_NEAR(p.latency.as_us(), (8.4 + 56 * 3.4 + 6 * 14.0) * 1.4, 1e-6);
  const auto small = plan(t, CollOp::AllReduce, 32, 256, {.algo = "Ring", .proto = "Simple"});
  // 256 B over 16 channels x 32 ranks is under 64 B per rank: no plateau factor.
  EXPECT_NEAR(small.latency.as_us(), 8.4 + 56 * 3.4 + 6 * 14.0, 1e-6);
}

TEST(NcclModel, AllGatherLatencyAndBandwidth) {
  const Topology t = Topology::preset("dgx-h100", 1);
  // 8 ranks x 128 MiB each: S = 1 GiB. Ring Simple: 8.4 + 7 x 3.4 us + S x 7/8 / 370.8 GB/s.
  const auto p = plan(t, CollOp::AllGather, 8, kGiB / 8, {.proto = "Simple"});
  EXPECT_EQ(p.algorithm, Algorithm::Ring);
  EXPECT_EQ(p.tuning_bytes.count(), static_cast<uint64_t>(kGiB));
  const double expect_us = 8.4 + 7 * 3.4 + kGiB * 7 / 8 / 370.8e9 * 1e6;
  EXPECT_NEAR(p.predicted.as_us(), expect_us, expect_us * 1e-6);
}

TEST(NcclModel, SelectionAcrossSizes) {
  const Topology one = Topology::preset("dgx-h100", 1);
  // Tiny: latency rules, LL (6.6 us base, 0.6 us/step) wins.
  EXPECT_EQ(plan(one, CollOp::AllReduce, 8, 1024).protocol, Protocol::LL);
  // Large: NVLS on one NVSwitch host.
  EXPECT_EQ(plan(one, CollOp::AllReduce, 8, 256 << 20).algorithm, Algorithm::Nvls);
  const Topology four = Topology::preset("dgx-h100", 4);
  EXPECT_EQ(plan(four, CollOp::AllReduce, 32, 1024).protocol, Protocol::LL);
  const auto big = plan(four, CollOp::AllReduce, 32, kGiB);
  EXPECT_NE(big.algorithm, Algorithm::Nvls);  // NVLS is single-host here
  EXPECT_EQ(big.protocol, Protocol::Simple);
  // The tuner weighs every (algorithm, protocol): 3 Ring + 3 Tree, + NVLS on one host.
  EXPECT_EQ(plan(one, CollOp::AllReduce, 8, 1 << 20).candidates.size(), 7u);
  EXPECT_EQ(big.candidates.size(), 6u);
}

TEST(NcclModel, ChosenIsTheCheapestCandidate) {
  const Topology t = Topology::preset("dgx-h100", 2);
  for (double bytes : {1e3, 1e5, 1e7, 1e9}) {
    const auto p = plan(t, CollOp::AllReduce, 16, bytes);
    double best = 1e300;
    for (const auto& c : p.candidates) best = std::min(best, c.total_us());
    bool found = false;
    for (const auto& c : p.candidates)
      if (c.algorithm == p.algorithm && c.protocol == p.protocol) {
        EXPECT_DOUBLE_EQ(c.total_us(), best) << bytes;
        found = true;
      }
    EXPECT_TRUE(found);
  }
}

TEST(NcclModel, OverridesAreHonoured) {
  const Topology t = Topology::preset("dgx-h100", 1);
  EXPECT_EQ(plan(t, CollOp::AllReduce, 8, kGiB, {.algo = "Tree"}).algorithm, Algorithm::Tree);
  EXPECT_EQ(plan(t, CollOp::AllReduce, 8, kGiB, {.algo = "^NVLS"}).algorithm, Algorithm::Ring);
  EXPECT_EQ(plan(t, CollOp::AllReduce, 8, kGiB, {.proto = "LL"}).protocol, Protocol::LL);
  EXPECT_EQ(plan(t, CollOp::AllReduce, 8, kGiB, {.algo = "Ring", .max_channels = 4}).channels, 4);
  // An algorithm NCCL would not use for the op falls back to Ring, as NCCL does.
  EXPECT_EQ(plan(t, CollOp::AllGather, 8, 1 << 20, {.algo = "Tree"}).algorithm, Algorithm::Ring);
  EXPECT_THROW(plan(t, CollOp::AllReduce, 8, 1024, {.algo = "Ringg"}), std::invalid_argument);
  EXPECT_THROW(plan(t, CollOp::AllReduce, 8, 1024, {.proto = "LL256"}), std::invalid_argument);
}

TEST(NcclModel, SmallSizesUseFewerChannels) {
  const Topology t = Topology::preset("dgx-h100", 1);
  // Simple: channels shrink while bytes < channels x 512 threads x 64: 256 KiB / 32 KiB = 8.
  EXPECT_EQ(plan(t, CollOp::AllReduce, 8, 256 << 10, {.algo = "Ring", .proto = "Simple"}).channels,
            8);
  EXPECT_EQ(plan(t, CollOp::AllReduce, 8, kGiB, {.algo = "Ring", .proto = "Simple"}).channels, 16);
}

TEST(NcclModel, RingFlowsFollowNeighbours) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const double s = 8 << 20;
  const auto p = plan(t, CollOp::AllReduce, 8, s,
                      {.algo = "Ring", .proto = "Simple", .min_channels = 1, .max_channels = 1});
  ASSERT_EQ(p.flows.size(), 8u);
  std::map<GpuId, int> sends, recvs;
  for (const auto& f : p.flows) {
    EXPECT_DOUBLE_EQ(f.bytes, s * 2 * 7 / 8);  // each edge: 2(n-1)/n of the buffer
    EXPECT_EQ(f.path, t.route(f.src, f.dst, 0));
    ++sends[f.src];
    ++recvs[f.dst];
  }
  for (GpuId g = 0; g < 8; ++g) {
    EXPECT_EQ(sends[g], 1);
    EXPECT_EQ(recvs[g], 1);
  }
}

TEST(NcclModel, MultiNodeRingStaysOnRailsAndSpreadsOverNics) {
  const Topology t = Topology::preset("dgx-h100", 4);
  const auto p = plan(t, CollOp::AllReduce, 32, kGiB, {.algo = "Ring"});
  std::map<LinkId, double> nic_bytes;
  for (const auto& f : p.flows) {
    if (t.host_of(f.src) == t.host_of(f.dst)) continue;
    EXPECT_EQ(t.nic_of(f.src), t.nic_of(f.dst));  // same rail: no PXN hop, no spine
    EXPECT_EQ(f.path.size(), 2u);
    nic_bytes[f.path.front()] += f.bytes;
  }
  ASSERT_EQ(nic_bytes.size(), 32u);  // every NIC of every host sends
  for (const auto& [l, b] : nic_bytes) EXPECT_DOUBLE_EQ(b, nic_bytes.begin()->second);
}

TEST(NcclModel, TreeFlowsGoUpAndDown) {
  const Topology t = Topology::preset("dgx-h100", 2);
  const auto p = plan(t, CollOp::AllReduce, 16, 1 << 24,
                      {.algo = "Tree", .min_channels = 1, .max_channels = 1});
  // One channel: a 7-edge chain per host, both ways (28 flows), and one inter-host edge both
  // ways (2 flows), each carrying the whole buffer once.
  ASSERT_EQ(p.flows.size(), 30u);
  int inter = 0;
  for (const auto& f : p.flows) {
    EXPECT_DOUBLE_EQ(f.bytes, 1 << 24);
    if (t.host_of(f.src) != t.host_of(f.dst)) ++inter;
  }
  EXPECT_EQ(inter, 2);
}

TEST(NcclModel, NvlsFlowsGoToAndFromTheSwitch) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const double s = 1 << 26;
  const auto p = plan(t, CollOp::AllReduce, 8, s);
  ASSERT_EQ(p.algorithm, Algorithm::Nvls);
  ASSERT_EQ(p.flows.size(), 2u * 8 * p.channels);
  for (const auto& f : p.flows) {
    EXPECT_TRUE((f.src == kSwitch) != (f.dst == kSwitch));
    EXPECT_EQ(f.path.size(), 1u);
    EXPECT_DOUBLE_EQ(f.bytes, s / p.channels * (1 + 1.0 / 8));
  }
}

TEST(NcclModel, BroadcastIsAChainFromTheRoot) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const auto p = plan_collective(t, CollectiveRequest{CollOp::Broadcast,
                                                      first_n(8),
                                                      Bytes(1 << 20),
                                                      3,
                                                      {.min_channels = 2, .max_channels = 2}});
  EXPECT_EQ(p.algorithm, Algorithm::Ring);
  // n - 1 = 7 edges per channel; nothing flows into the root.
  EXPECT_EQ(p.flows.size(), 2u * 7);
  for (const auto& f : p.flows) EXPECT_NE(f.dst, 3);
}

TEST(NcclModel, PointToPointAcrossRailsUsesPxn) {
  const Topology t = Topology::preset("dgx-h100", 2);
  // GPU 1 of host 0 to GPU 5 of host 1: NVLink to host 0's GPU 5, then rail 5.
  const auto p = plan_collective(
      t, CollectiveRequest{CollOp::SendRecv, {1, t.gpu(1, 5)}, Bytes(1 << 20), 0, {}});
  ASSERT_EQ(p.flows.size(), 1u);
  EXPECT_EQ(p.flows[0].path,
            (std::vector<LinkId>{t.gpu_tx(1), t.gpu_rx(5), t.nic_tx(0, 5), t.nic_rx(1, 5)}));
  EXPECT_EQ(p.algorithm, Algorithm::P2p);
}

TEST(NcclModel, BadRequestsAreRejected) {
  const Topology t = Topology::preset("dgx-h100", 1);
  EXPECT_THROW(plan_collective(t, {CollOp::AllReduce, {0, 0}, Bytes(8), 0, {}}),
               std::invalid_argument);
  EXPECT_THROW(plan_collective(t, {CollOp::AllReduce, {0, 8}, Bytes(8), 0, {}}),
               std::invalid_argument);
  EXPECT_THROW(plan_collective(t, {CollOp::Broadcast, {0, 1}, Bytes(8), 2, {}}),
               std::invalid_argument);
  EXPECT_THROW(plan_collective(t, {CollOp::SendRecv, {0, 1, 2}, Bytes(8), 0, {}}),
               std::invalid_argument);
  EXPECT_THROW(plan_collective(t, {CollOp::AllReduce, {}, Bytes(8), 0, {}}), std::invalid_argument);
}

TEST(NcclModel, NothingToMoveCostsNothing) {
  const Topology t = Topology::preset("dgx-h100", 1);
  EXPECT_EQ(plan(t, CollOp::AllReduce, 1, 1 << 20).predicted, SimTime::zero());
  EXPECT_EQ(plan(t, CollOp::AllReduce, 8, 0).predicted, SimTime::zero());
  EXPECT_TRUE(plan(t, CollOp::AllReduce, 8, 0).flows.empty());
}

TEST(NcclModel, PlanIsPrintable) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const std::string s = plan(t, CollOp::AllReduce, 8, kGiB).describe(t, 2);
  EXPECT_NE(s.find("NVLS / Simple / 16 channels"), std::string::npos) << s;
  EXPECT_NE(s.find("<- chosen"), std::string::npos) << s;
  EXPECT_NE(s.find("h0/gpu0->nvsw"), std::string::npos) << s;
  EXPECT_NE(s.find("more"), std::string::npos) << s;
}

TEST(BusBandwidth, NcclTestsFactors) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollOp::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollOp::AllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollOp::ReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollOp::AllToAll, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollOp::Broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollOp::SendRecv, 2), 1.0);
  // S: the whole array for AllGather (sendcount x n), the per-rank buffer for AllReduce.
  EXPECT_EQ(algbw_bytes(CollOp::AllGather, Bytes(100), 8).count(), 800u);
  EXPECT_EQ(algbw_bytes(CollOp::AllReduce, Bytes(100), 8).count(), 100u);
}

}  // namespace
}  // namespace phantora::net
