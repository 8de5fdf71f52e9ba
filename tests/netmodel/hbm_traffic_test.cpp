// What a collective's plan moves through one GPU's HBM (netmodel/include/phantora/netmodel/
// hbm_traffic.hpp): bytes sent, received, and the local operands a reduction reads, worked by
// hand from the ring and NVLS schedules.
#include "phantora/netmodel/hbm_traffic.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace phantora::net {
namespace {

CollectivePlan plan(const Topology& t, CollOp op, int n, double bytes, TuningOverrides o = {}) {
  std::vector<GpuId> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  return plan_collective(
      t, CollectiveRequest{op, ranks, Bytes(static_cast<uint64_t>(bytes)), 0, std::move(o)});
}

const TuningOverrides kRing{.algo = "Ring", .proto = "Simple"};

TEST(HbmTraffic, RingAllGatherReadsWhatItSendsAndWritesWhatItReceives) {
  // 8 ranks, each contributing s: every GPU forwards 7 chunks of s and receives 7.
  const Topology t = Topology::preset("dgx-h100", 1);
  const double s = 16 << 20;
  const CollectivePlan p = plan(t, CollOp::AllGather, 8, s, kRing);
  for (GpuId g = 0; g < 8; ++g) EXPECT_NEAR(hbm_traffic_bytes(p, g), 14 * s, 1e-6 * s) << g;
}

TEST(HbmTraffic, RingReduceScatterAlsoReadsTheLocalOperandOfEveryChunkItReceives) {
  // 8 ranks, each keeping r: 7 chunks of r sent, 7 received, 7 local operands read.
  const Topology t = Topology::preset("dgx-h100", 1);
  const double r = 16 << 20;
  const CollectivePlan p = plan(t, CollOp::ReduceScatter, 8, r, kRing);
  EXPECT_NEAR(hbm_traffic_bytes(p, 3), 21 * r, 1e-6 * r);
}

TEST(HbmTraffic, RingAllReduceReducesHalfOfWhatItReceives) {
  // Buffer S on 8 ranks: 2 × 7/8 S sent and received; the reduce-scatter half (7/8 S) also
  // reads its local operand: 1.75 S + 1.75 S + 0.875 S = 4.375 S.
  const Topology t = Topology::preset("dgx-h100", 1);
  const double s = 64 << 20;
  const CollectivePlan p = plan(t, CollOp::AllReduce, 8, s, kRing);
  EXPECT_NEAR(hbm_traffic_bytes(p, 0), 4.375 * s, 1e-6 * s);
}

TEST(HbmTraffic, NvlsReducesInTheSwitch) {
  // NVLS all-reduce: each GPU sends and receives S (1 + 1/8) to and from the switch
  // (nccl_model_test's NvlsFlowsGoToAndFromTheSwitch); no local reduction read.
  const Topology t = Topology::preset("dgx-h100", 1);
  const double s = 1 << 26;
  const CollectivePlan p = plan(t, CollOp::AllReduce, 8, s);
  ASSERT_EQ(p.algorithm, Algorithm::Nvls);
  EXPECT_NEAR(hbm_traffic_bytes(p, 5), 2 * s * (1 + 1.0 / 8), 1e-6 * s);
}

TEST(HbmTraffic, AGpuOutsideThePlanServesNothing) {
  const Topology t = Topology::preset("dgx-h100", 1);
  const CollectivePlan p = plan(t, CollOp::AllGather, 4, 1 << 20, kRing);
  EXPECT_EQ(hbm_traffic_bytes(p, 6), 0.0);
  EXPECT_GT(hbm_traffic_bytes(p, 3), 0.0);
  // Several GPUs in one pass: each as alone; one named twice counts once.
  const std::vector<GpuId> gpus{3, 6, 0, 3};
  const std::vector<double> bytes = hbm_traffic_bytes(p, gpus);
  EXPECT_EQ(bytes,
            (std::vector<double>{hbm_traffic_bytes(p, 3), 0.0, hbm_traffic_bytes(p, 0), 0.0}));
}

}  // namespace
}  // namespace phantora::net
