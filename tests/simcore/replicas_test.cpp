// Replicas: which communicators stand for every data-parallel replica and which transfers the
// network gets for one live collective (simcore/replicas.hpp).
#include "phantora/simcore/replicas.hpp"

#include <gtest/gtest.h>

namespace phantora::sim {
namespace {

using net::CollectiveRequest;
using net::CollOp;

CollectiveRequest request(CollOp op, std::vector<int> ranks, uint64_t bytes) {
  return CollectiveRequest{op, std::move(ranks), Bytes(bytes), 0, {}};
}

TEST(DpCommRule, ParsesAllAndSizes) {
  EXPECT_TRUE(DpCommRule::parse("all").matches(7));
  const DpCommRule r = DpCommRule::parse("size:1,4");
  EXPECT_TRUE(r.matches(1));
  EXPECT_TRUE(r.matches(4));
  EXPECT_FALSE(r.matches(2));
  EXPECT_EQ(r.describe(), "size:1,4");
  for (const char* bad : {"", "size:", "size:0", "size:2,", "size:x", "sizes:2", "ALL"})
    EXPECT_THROW(DpCommRule::parse(bad), std::invalid_argument) << bad;
}

TEST(Replicas, OneCopyLeavesTheRequestAlone) {
  const Replicas none(1, 8, DpCommRule{});
  EXPECT_FALSE(none.spans(8));
  const auto out = none.expand(request(CollOp::AllReduce, {0, 1}, 1024), false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ranks, (std::vector<int>{0, 1}));
}

TEST(Replicas, SpanningAllGatherRunsOnceOverEveryCopyWithTheSameArray) {
  // 2 live GPUs (0, 1) per slice of 4 GPUs, 3 slices: ranks copy-major {0,1,4,5,8,9}; each
  // rank's contribution is a third of the live one (the gathered array, 2 x 600 B, is kept).
  const Replicas rep(3, 4, DpCommRule{});
  const auto out = rep.expand(request(CollOp::AllGather, {0, 1}, 600), true);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ranks, (std::vector<int>{0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(out[0].bytes.count(), 200u);
  EXPECT_EQ(rep.represented_ranks(2, true), 6);
}

TEST(Replicas, SpanningAllReduceKeepsTheWholeBuffer) {
  const Replicas rep(4, 8, DpCommRule::parse("size:1"));
  EXPECT_TRUE(rep.spans(1));
  EXPECT_FALSE(rep.spans(8));
  const auto out = rep.expand(request(CollOp::AllReduce, {3}, 1 << 20), true);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ranks, (std::vector<int>{3, 11, 19, 27}));
  EXPECT_EQ(out[0].bytes.count(), 1u << 20);
}

TEST(Replicas, SliceCollectivesAreCopiedIntoEveryReplica) {
  const Replicas rep(3, 4, DpCommRule::parse("size:1"));
  const auto out = rep.expand(request(CollOp::ReduceScatter, {0, 1, 2, 3}, 512), false);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].ranks, (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(out[2].bytes.count(), 512u);  // each copy moves what the live one does
}

TEST(Replicas, PointToPointStaysInsideEachSlice) {
  const Replicas rep(2, 4, DpCommRule{});
  const auto out = rep.expand(request(CollOp::SendRecv, {1, 2}, 64), true);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].ranks, (std::vector<int>{5, 6}));
}

}  // namespace
}  // namespace phantora::sim
