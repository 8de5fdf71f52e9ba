// The GPU-sharing model (simcore/include/phantora/simcore/gpu_sharing.hpp): a kernel beside
// NCCL's CTAs runs on the SMs they leave. Every expected time below is worked by hand.
#include "phantora/simcore/gpu_sharing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace phantora::sim {
namespace {

constexpr SimTime us(double v) {
  return SimTime::us(v);
}

TEST(SharedEnd, AloneWithoutHolds) {
  EXPECT_EQ(shared_end(us(5), {us(100), 0}, {132}, {}), us(105));
}

TEST(SharedEnd, AHoldOverTheWholeKernelStretchesItBySmsOverFreeSms) {
  // 16 of 132 SMs held throughout: 116 µs of work on 116 SMs takes 132 µs.
  const std::vector<Hold> holds{{us(0), SimTime::infinite(), 16}};
  EXPECT_EQ(shared_end(us(0), {us(116), 0}, {132}, holds), us(132));
  // The same with the hold's end known and later than the kernel's.
  const std::vector<Hold> ended{{us(0), us(500), 16}};
  EXPECT_EQ(shared_end(us(0), {us(116), 0}, {132}, ended), us(132));
}

TEST(SharedEnd, APartialHoldSlowsOnlyItsSpan) {
  // 100 µs alone from 0; 16 SMs held over [10, 60): 10 µs of work, then 50 µs at 116/132
  // (43,939,393 ps of work, rounded down), then the remaining 46,060,607 ps at full rate.
  const std::vector<Hold> holds{{us(10), us(60), 16}};
  EXPECT_EQ(shared_end(us(0), {us(100), 0}, {132}, holds), SimTime::ps(106'060'607));
}

TEST(SharedEnd, HoldsAddUp) {
  // Two collectives of 16 channels: 100 SMs left; 100 µs of work takes 132 µs.
  const std::vector<Hold> holds{{us(0), SimTime::infinite(), 16}, {us(0), SimTime::infinite(), 16}};
  EXPECT_EQ(shared_end(us(0), {us(100), 0}, {132}, holds), us(132));
}

TEST(SharedEnd, AKernelThatFitsBesideTheHoldIsNotSlowed) {
  const std::vector<Hold> holds{{us(0), SimTime::infinite(), 16}};
  EXPECT_EQ(shared_end(us(0), {us(20), 116}, {132}, holds), us(20));
  // 120 CTAs on 116 free SMs: 116 / 120 of its rate, 116 µs -> 120 µs.
  EXPECT_EQ(shared_end(us(0), {us(116), 120}, {132}, holds), us(120));
}

TEST(SharedEnd, HoldsOutsideTheKernelDoNotCount) {
  const std::vector<Hold> holds{{us(0), us(10), 16}, {us(50), us(90), 16}};
  EXPECT_EQ(shared_end(us(10), {us(40), 0}, {132}, holds), us(50));
}

TEST(SharedEnd, MoreChannelsNeverEndEarlier) {
  SimTime last = SimTime::zero();
  for (int channels : {0, 2, 8, 16, 32, 64, 131, 200}) {
    const std::vector<Hold> holds{{us(3), us(40), channels}};
    const SimTime end = shared_end(us(0), {us(50), 0}, {132}, holds);
    EXPECT_GE(end, last) << channels;
    last = end;
  }
  // Holding every SM leaves one (the kernel still progresses): 3 µs of work, 37 µs at 1/132
  // (280,303 ps of work), then the remaining 46,719,697 ps from 40 µs.
  EXPECT_EQ(last, SimTime::ps(86'719'697));
}

TEST(SharedEnd, NoSmsMeansNoSharing) {
  const std::vector<Hold> holds{{us(0), SimTime::infinite(), 16}};
  EXPECT_EQ(shared_end(us(0), {us(20), 0}, {0}, holds), us(20));
}

// HBM: a GPU whose kernels reach 3 TB/s (3e12 B/s) and 132 SMs.
constexpr GpuCapacity kGpu{132, 3e12};

TEST(SharedEnd, AMemoryBoundKernelGetsTheBandwidthNcclLeaves) {
  // 300 MB in 100 µs alone: it draws the whole 3 TB/s. NCCL holds 16 SMs (116/132 = 0.88 of
  // the SMs) and draws 1 TB/s (2/3 of the bandwidth is left): HBM binds, 100 µs / (2/3).
  const std::vector<Hold> holds{{us(0), SimTime::infinite(), 16, 1e12}};
  EXPECT_EQ(shared_end(us(0), {us(100), 0, 3e8}, kGpu, holds), us(150));
}

TEST(SharedEnd, AKernelThatAsksLittleOfHbmIsBoundBySms) {
  // 30 MB in 100 µs draws 0.3 TB/s, well inside the 2 TB/s left: the SMs bind,
  // 100 µs × 132 / 116 = 113,793,103.4 ps, rounded up.
  const std::vector<Hold> holds{{us(0), SimTime::infinite(), 16, 1e12}};
  EXPECT_EQ(shared_end(us(0), {us(100), 0, 3e7}, kGpu, holds), SimTime::ps(113'793'104));
}

TEST(SharedEnd, BandwidthHeldOverASpanSlowsOnlyThatSpan) {
  // Draws 3 TB/s alone; a transfer draws 1.5 TB/s over [10, 40) µs (no SMs): 10 µs of work,
  // then 30 µs at half rate (15 µs of work), then the remaining 75 µs: ends at 115 µs.
  const std::vector<Hold> holds{{us(10), us(40), 0, 1.5e12}};
  EXPECT_EQ(shared_end(us(0), {us(100), 0, 3e8}, kGpu, holds), us(115));
}

TEST(SharedEnd, UnknownBytesOrUnknownBandwidthNeverSlowByHbm) {
  const std::vector<Hold> holds{{us(0), us(1000), 0, 2e12}};
  EXPECT_EQ(shared_end(us(0), {us(100), 0, 0}, kGpu, holds), us(100));
  EXPECT_EQ(shared_end(us(0), {us(100), 0, 3e8}, GpuCapacity{132, 0}, holds), us(100));
}

TEST(SharedEnd, HbmHeldInFullStallsTheKernelUntilItIsFreed) {
  const std::vector<Hold> holds{{us(0), us(10), 0, 3e12}};
  EXPECT_EQ(shared_end(us(0), {us(100), 0, 3e8}, kGpu, holds), us(110));
  const std::vector<Hold> forever{{us(0), SimTime::infinite(), 0, 3e12}};
  EXPECT_THROW(shared_end(us(0), {us(100), 0, 3e8}, kGpu, forever), std::logic_error);
  // All but 1e-3 B/s held for ever: the kernel's 100 µs of work at 1e-3 / 3e12 of its speed
  // would take 3e11 s, past what SimTime holds (about 106 days): the same error, not an
  // overflowed end.
  const std::vector<Hold> trickle{{us(0), SimTime::infinite(), 0, 3e12 - 1e-3}};
  EXPECT_THROW(shared_end(us(0), {us(100), 0, 3e8}, kGpu, trickle), std::logic_error);
}

TEST(SharedEnd, MoreTrafficNeverEndsEarlier) {
  SimTime last = SimTime::zero();
  for (double drawn : {0.0, 1e11, 5e11, 1e12, 2e12, 2.9e12, 3e12, 4e12}) {
    const std::vector<Hold> holds{{us(5), us(60), 16, drawn}};
    const SimTime end = shared_end(us(0), {us(100), 0, 1.5e8}, kGpu, holds);
    EXPECT_GE(end, last) << drawn;
    last = end;
  }
}

TEST(GpuSharing, OnlyKernelsLaunchedWhileACollectiveIsOpenShareTheGpu) {
  GpuSharing s({132});
  EXPECT_FALSE(s.shares(1, 0));
  s.collective_submitted(7, 1, 0);
  EXPECT_TRUE(s.shares(1, 0));
  EXPECT_FALSE(s.shares(1, 1));  // another device of the client
  EXPECT_FALSE(s.shares(2, 0));  // another client
  s.collective_ready(7, us(10), 16);
  s.collective_finished(7, us(50));
  EXPECT_FALSE(s.shares(1, 0));
}

TEST(GpuSharing, AKernelIsPlacedFromTheCollectivesLaunchedBeforeIt) {
  GpuSharing s({132});
  s.collective_submitted(7, 1, 0);
  const uint64_t k = s.defer(1, 100, 0, OpDesc{OpKind::kKernel, us(116), std::nullopt, 0, 0}, 0);
  EXPECT_TRUE(GpuSharing::is_kernel_token(k));
  EXPECT_FALSE(GpuSharing::is_kernel_token(7));
  // Launched after the kernel: not beside it.
  s.collective_submitted(8, 1, 0);
  s.collective_ready(8, us(0), 64);
  EXPECT_TRUE(s.next_end().is_infinite());  // not at the head of its stream yet
  s.kernel_ready(k, us(0));
  // Collective 7 not ready: as far as is known, the kernel runs alone.
  EXPECT_EQ(s.next_end(), us(116));
  s.collective_ready(7, us(0), 16);
  EXPECT_EQ(s.next_end(), us(132));
  // It ends at 66 µs: 66 µs at 116/132 (58 µs of work), then 58 µs alone.
  s.collective_finished(7, us(66));
  EXPECT_EQ(s.next_end(), us(124));
  const GpuSharing::Placed p = s.place_next();
  EXPECT_EQ(p.token, k);
  EXPECT_EQ(p.client, 1u);
  EXPECT_EQ(p.stream, 100u);
  EXPECT_EQ(p.start, us(0));
  EXPECT_EQ(p.end, us(124));
  EXPECT_EQ(p.op.cost, us(116));  // the time alone, for the report
  EXPECT_EQ(s.deferred(), 0u);
  EXPECT_TRUE(s.next_end().is_infinite());
}

TEST(GpuSharing, ACollectivesDataMovementEndsWithIt) {
  GpuSharing s(kGpu);
  s.collective_submitted(7, 1, 0);
  const uint64_t k =
      s.defer(1, 100, 0, OpDesc{OpKind::kKernel, us(100), std::nullopt, 0, 0}, 0, 3e8);
  s.collective_ready(7, us(0), 16);
  s.kernel_ready(k, us(0));
  // Before its data moves, only its 16 SMs are held: 100 µs × 132 / 116, rounded up.
  EXPECT_EQ(s.next_end(), SimTime::ps(113'793'104));
  // Its transfer draws 1 TB/s for as long as NCCL's model says it takes (1 ms): HBM binds,
  // 100 µs / (2/3) = 150 µs.
  s.collective_moving(7, us(0), us(1000), 1e12);
  EXPECT_EQ(s.next_end(), us(150));
  // The collective ends at 60 µs, before its modelled time: 60 µs at 2/3 (40 µs of work), then
  // the remaining 60 µs alone.
  s.collective_finished(7, us(60));
  EXPECT_EQ(s.place_next().end, us(120));
}

TEST(GpuSharing, PlacesTheEarliestEndFirst) {
  GpuSharing s({132});
  s.collective_submitted(7, 1, 0);
  s.collective_ready(7, us(0), 16);
  const uint64_t a = s.defer(1, 100, 0, OpDesc{OpKind::kKernel, us(58), std::nullopt, 0, 0}, 0);
  const uint64_t b = s.defer(1, 101, 0, OpDesc{OpKind::kKernel, us(29), std::nullopt, 0, 0}, 0);
  s.kernel_ready(a, us(0));
  s.kernel_ready(b, us(0));
  EXPECT_EQ(s.place_next().token, b);  // 29 µs at 116/132: 33 µs
  EXPECT_EQ(s.place_next().end, us(66));
}

TEST(GpuSharing, OffWithoutSms) {
  GpuSharing s({0});
  s.collective_submitted(7, 1, 0);
  EXPECT_FALSE(s.shares(1, 0));
}

}  // namespace
}  // namespace phantora::sim
