// Simulated busbw of large collectives on 1x8 and 4x8 H100 against the reference model: the
// closed forms of NCCL's cost model (NVIDIA/nccl src/graph/tuning.cc: latency +
// traffic / bandwidth, with the link figures 370.8 GB/s NVLink and 48.5 GB/s per NIC). Each
// expectation is written out here, independently of the library's planner.
#include <gtest/gtest.h>

#include <numeric>

#include "phantora/netmodel/network_sim.hpp"

namespace phantora::net {
namespace {

constexpr double kMiB = 1024.0 * 1024;
constexpr double kNvlink = 370.8e9;   // 18 x 20.6 GB/s
constexpr double kNics = 8 * 48.5e9;  // 8 ConnectX-7 per host
constexpr double kTolerance = 0.05;

struct Case {
  const char* name;
  int hosts;
  CollOp op;
  TuningOverrides tuning;
  // Reference time in us for NCCL's size S (per-rank buffer x n for AllGather/ReduceScatter;
  // for AllToAll the per-peer size P).
  double (*reference_us)(double bytes);
};

double busbw_of(const Case& c, double bytes) {
  const Topology topo = Topology::preset("dgx-h100", c.hosts);
  const int n = topo.num_gpus();
  std::vector<GpuId> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  NetworkSimulator sim(topo);
  // The request states the per-rank size as NCCL's API does.
  const double per_rank =
      (c.op == CollOp::AllGather || c.op == CollOp::ReduceScatter) ? bytes / n : bytes;
  const TransferId id =
      sim.start(CollectiveRequest{c.op, ranks, Bytes(static_cast<uint64_t>(per_rank)), 0, c.tuning},
                SimTime::zero());
  sim.advance_to(SimTime::seconds(100));
  EXPECT_TRUE(sim.transfer(id).end.has_value());
  return sim.transfer(id).busbw_gbs();
}

double reference_busbw(const Case& c, double bytes) {
  const int n = 8 * c.hosts;
  double s = bytes;  // nccl-tests' S
  if (c.op == CollOp::AllToAll) s = bytes * n;
  return s / (c.reference_us(bytes) * 1e-6) / 1e9 * bus_bandwidth_factor(c.op, n);
}

const Case kCases[] = {
    // 1x8, NVLS (NCCL's pick): S + S/n per GPU over NVLink at 85% efficiency, 25 us.
    {"allreduce_1x8_nvls",
     1,
     CollOp::AllReduce,
     {},
     [](double s) { return 25.0 + s * 9 / 8 / (0.85 * kNvlink) * 1e6; }},
    // 1x8 ring AllGather / ReduceScatter, Simple: 8.4 + 7 x 3.4 us + S(n-1)/n / NVLink.
    {"allgather_1x8",
     1,
     CollOp::AllGather,
     {.proto = "Simple"},
     [](double s) { return 8.4 + 7 * 3.4 + s * 7 / 8 / kNvlink * 1e6; }},
    {"reducescatter_1x8",
     1,
     CollOp::ReduceScatter,
     {.proto = "Simple"},
     [](double s) { return 8.4 + 7 * 3.4 + s * 7 / 8 / kNvlink * 1e6; }},
    // 1x8 all-to-all: each GPU sends 7 x P over NVLink; one Simple step of latency.
    {"alltoall_1x8",
     1,
     CollOp::AllToAll,
     {},
     [](double p) { return 8.4 + 3.4 + 7 * p / kNvlink * 1e6; }},
    // 4x8 ring AllReduce, Simple: the NICs bind; latency (8.4 + 56 x 3.4 + 6 x 14) x 1.4.
    {"allreduce_4x8_ring",
     4,
     CollOp::AllReduce,
     {.algo = "Ring", .proto = "Simple"},
     [](double s) { return (8.4 + 56 * 3.4 + 6 * 14.0) * 1.4 + s * 62 / 32 / kNics * 1e6; }},
    // 4x8 ring AllGather / ReduceScatter: 31 steps, 3 over the network, S(n-1)/n over NICs.
    {"allgather_4x8",
     4,
     CollOp::AllGather,
     {.proto = "Simple"},
     [](double s) { return 8.4 + 28 * 3.4 + 3 * 14.0 + s * 31 / 32 / kNics * 1e6; }},
    {"reducescatter_4x8",
     4,
     CollOp::ReduceScatter,
     {.proto = "Simple"},
     [](double s) { return 8.4 + 28 * 3.4 + 3 * 14.0 + s * 31 / 32 / kNics * 1e6; }},
    // 4x8 all-to-all: a NIC carries what its host's 8 GPUs send to the 3 other hosts' GPUs on
    // its rail: 24 P at 48.5 GB/s; one network Simple step of latency.
    {"alltoall_4x8",
     4,
     CollOp::AllToAll,
     {},
     [](double p) { return 8.4 + 14.0 + 24 * p / 48.5e9 * 1e6; }},
};

// Test names carry the case's name; without this gtest would print the struct's raw bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class BusBandwidth : public ::testing::TestWithParam<Case> {};

TEST_P(BusBandwidth, WithinFivePercentOfTheReferenceModel) {
  const Case& c = GetParam();
  for (double mib : {64.0, 256.0, 1024.0}) {
    // AllToAll: 64 MiB is the whole send buffer of a rank, P = that / n.
    const double bytes = c.op == CollOp::AllToAll ? mib * kMiB / (8 * c.hosts) : mib * kMiB;
    const double sim = busbw_of(c, bytes), ref = reference_busbw(c, bytes);
    EXPECT_NEAR(sim, ref, kTolerance * ref) << c.name << " at " << mib << " MiB";
  }
}

INSTANTIATE_TEST_SUITE_P(H100, BusBandwidth, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The 4x8 tree (NCCL's pick for large all-reduces across nodes here) at 1 GiB, where NCCL's
// tree correction factor is 1: each NIC carries 2 S / 8, at 92% (Tree), plus the tree latency
// 8.4 + 2 (7 x 4.0 + 2 x 14) us.
TEST(BusBandwidthTree, AllReduce4x8TreeOneGiB) {
  const Case c{"tree", 4, CollOp::AllReduce, {.algo = "Tree", .proto = "Simple"}, [](double s) {
                 return 8.4 + 2 * (7 * 4.0 + 2 * 14.0) + 2 * s / (0.92 * kNics) * 1e6;
               }};
  const double s = 1024 * kMiB;
  EXPECT_NEAR(busbw_of(c, s), reference_busbw(c, s), kTolerance * reference_busbw(c, s));
}

}  // namespace
}  // namespace phantora::net
