// Max-min fairness on graphs small enough to solve by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "phantora/netmodel/maxmin.hpp"

namespace phantora::net {
namespace {

TEST(MaxMin, TwoFlowsOnOneLinkGetHalfEach) {
  MaxMinSolver s;
  const ConstraintId link = s.add_constraint(10.0);
  const ConstraintId path[] = {link};
  const FlowId a = s.add_flow(path);
  const FlowId b = s.add_flow(path);
  // 10 shared by 2: 10 / 2 = 5 each.
  EXPECT_DOUBLE_EQ(s.rate(a), 5.0);
  EXPECT_DOUBLE_EQ(s.rate(b), 5.0);
}

TEST(MaxMin, FlowBottleneckedElsewhereLeavesTheRestToTheOther) {
  MaxMinSolver s;
  const ConstraintId shared = s.add_constraint(10.0);
  const ConstraintId narrow = s.add_constraint(2.0);
  const ConstraintId pa[] = {shared};
  const ConstraintId pb[] = {shared, narrow};
  const FlowId a = s.add_flow(pa);
  const FlowId b = s.add_flow(pb);
  // b is held to 2 by the narrow link; a takes what b leaves on the shared one: 10 - 2 = 8.
  EXPECT_DOUBLE_EQ(s.rate(b), 2.0);
  EXPECT_DOUBLE_EQ(s.rate(a), 8.0);
}

TEST(MaxMin, BoundActsLikeAPrivateLink) {
  MaxMinSolver s;
  const ConstraintId link = s.add_constraint(10.0);
  const ConstraintId path[] = {link};
  const FlowId capped = s.add_flow(path, 3.0);
  const FlowId free_flow = s.add_flow(path);
  // capped stops at its bound 3; the other gets 10 - 3 = 7.
  EXPECT_DOUBLE_EQ(s.rate(capped), 3.0);
  EXPECT_DOUBLE_EQ(s.rate(free_flow), 7.0);
}

TEST(MaxMin, ParkingLot) {
  // Two unit links in series; one long flow over both and one short flow on each. Each link
  // is shared by 2 flows: 1 / 2 = 0.5 for everybody.
  MaxMinSolver s;
  const ConstraintId l1 = s.add_constraint(1.0), l2 = s.add_constraint(1.0);
  const ConstraintId plong[] = {l1, l2}, p1[] = {l1}, p2[] = {l2};
  const FlowId f_long = s.add_flow(plong), f1 = s.add_flow(p1), f2 = s.add_flow(p2);
  EXPECT_DOUBLE_EQ(s.rate(f_long), 0.5);
  EXPECT_DOUBLE_EQ(s.rate(f1), 0.5);
  EXPECT_DOUBLE_EQ(s.rate(f2), 0.5);
}

TEST(MaxMin, UnequalLinksProgressiveFilling) {
  // l1 = 3 carries a, b, c; l2 = 10 carries c, d. Fill: l1 saturates first at 3/3 = 1 (a, b,
  // c = 1); l2 then gives d what c leaves: 10 - 1 = 9.
  MaxMinSolver s;
  const ConstraintId l1 = s.add_constraint(3.0), l2 = s.add_constraint(10.0);
  const ConstraintId pa[] = {l1}, pc[] = {l1, l2}, pd[] = {l2};
  const FlowId a = s.add_flow(pa), b = s.add_flow(pa), c = s.add_flow(pc), d = s.add_flow(pd);
  EXPECT_DOUBLE_EQ(s.rate(a), 1.0);
  EXPECT_DOUBLE_EQ(s.rate(b), 1.0);
  EXPECT_DOUBLE_EQ(s.rate(c), 1.0);
  EXPECT_DOUBLE_EQ(s.rate(d), 9.0);
}

TEST(MaxMin, RemovingAFlowGivesItsShareBack) {
  MaxMinSolver s;
  const ConstraintId link = s.add_constraint(10.0);
  const ConstraintId path[] = {link};
  const FlowId a = s.add_flow(path);
  const FlowId b = s.add_flow(path);
  EXPECT_DOUBLE_EQ(s.rate(a), 5.0);
  s.remove_flow(b);
  // Alone on the link: all 10.
  EXPECT_DOUBLE_EQ(s.rate(a), 10.0);
  EXPECT_FALSE(s.is_alive(b));
  EXPECT_EQ(s.active_flows(), 1u);
}

TEST(MaxMin, OnlyTheTouchedComponentIsRecomputed) {
  MaxMinSolver s;
  const ConstraintId x = s.add_constraint(4.0), y = s.add_constraint(6.0);
  const ConstraintId px[] = {x}, py[] = {y};
  const FlowId x1 = s.add_flow(px), x2 = s.add_flow(px);
  const FlowId y1 = s.add_flow(py);
  s.solve();
  // A new flow on y: only y's component (y1 and the newcomer) is recomputed, not x1, x2.
  const FlowId y2 = s.add_flow(py);
  const auto changed = s.solve();
  ASSERT_EQ(changed.size(), 2u);
  for (FlowId f : changed) EXPECT_TRUE(f == y1 || f == y2);
  EXPECT_DOUBLE_EQ(s.rate(y1), 3.0);  // 6 / 2
  EXPECT_DOUBLE_EQ(s.rate(x1), 2.0);  // 4 / 2, untouched
  EXPECT_DOUBLE_EQ(s.rate(x2), 2.0);
}

TEST(MaxMin, RemovalSplitsAComponent) {
  // a on l1, b on l2, bridge on both. Removing the bridge leaves two components, each
  // recomputed: a = cap(l1) = 2, b = cap(l2) = 8.
  MaxMinSolver s;
  const ConstraintId l1 = s.add_constraint(2.0), l2 = s.add_constraint(8.0);
  const ConstraintId pa[] = {l1}, pb[] = {l2}, pbridge[] = {l1, l2};
  const FlowId a = s.add_flow(pa), b = s.add_flow(pb), bridge = s.add_flow(pbridge);
  EXPECT_DOUBLE_EQ(s.rate(a), 1.0);       // l1: 2 / 2
  EXPECT_DOUBLE_EQ(s.rate(bridge), 1.0);  // held by l1
  EXPECT_DOUBLE_EQ(s.rate(b), 7.0);       // l2: 8 - 1
  s.remove_flow(bridge);
  EXPECT_DOUBLE_EQ(s.rate(a), 2.0);
  EXPECT_DOUBLE_EQ(s.rate(b), 8.0);
}

TEST(MaxMin, FlowWithNothingToLimitItIsInfinite) {
  MaxMinSolver s;
  const FlowId f = s.add_flow({});
  EXPECT_TRUE(std::isinf(s.rate(f)));
  const FlowId g = s.add_flow({}, 5.0);
  EXPECT_DOUBLE_EQ(s.rate(g), 5.0);
}

TEST(MaxMin, BadArgumentsAreRejected) {
  MaxMinSolver s;
  EXPECT_THROW(s.add_constraint(-1.0), std::invalid_argument);
  const ConstraintId unknown[] = {7};
  EXPECT_THROW(s.add_flow(unknown), std::out_of_range);
  EXPECT_THROW(s.remove_flow(3), std::invalid_argument);
}

}  // namespace
}  // namespace phantora::net
