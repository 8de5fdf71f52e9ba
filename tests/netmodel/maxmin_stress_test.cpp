// Randomised: the incremental solver must agree with a from-scratch solve after every change,
// and every allocation must be feasible and max-min fair. Fixed seed: failures reproduce.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "phantora/netmodel/maxmin.hpp"

namespace phantora::net {
namespace {

struct Spec {
  std::vector<ConstraintId> cons;
  double bound;
};

void expect_max_min_fair(MaxMinSolver& s, const std::vector<double>& caps,
                         const std::vector<std::pair<FlowId, Spec>>& live) {
  std::vector<double> used(caps.size(), 0.0);
  std::vector<double> top(caps.size(), 0.0);  // largest rate on each constraint
  for (const auto& [f, spec] : live)
    for (ConstraintId c : spec.cons) {
      used[c] += s.rate(f);
      top[c] = std::max(top[c], s.rate(f));
    }
  for (size_t c = 0; c < caps.size(); ++c) EXPECT_LE(used[c], caps[c] * (1 + 1e-9)) << c;
  // Max-min: each flow is at its bound or crosses a saturated constraint where no flow is
  // faster (otherwise it could grow without hurting a slower flow).
  for (const auto& [f, spec] : live) {
    const double r = s.rate(f);
    bool justified = std::abs(r - spec.bound) <= 1e-9 * spec.bound;
    for (ConstraintId c : spec.cons)
      if (used[c] >= caps[c] * (1 - 1e-9) && r >= top[c] * (1 - 1e-9)) justified = true;
    EXPECT_TRUE(justified) << "flow " << f << " rate " << r;
  }
}

TEST(MaxMinStress, IncrementalEqualsFromScratchOnRandomGraphs) {
  std::mt19937_64 rng(20240611);
  std::uniform_real_distribution<double> cap_dist(1.0, 100.0), bound_dist(0.5, 60.0), u(0, 1);
  const int n_cons = 40;
  std::vector<double> caps;
  MaxMinSolver inc;
  for (int c = 0; c < n_cons; ++c) caps.push_back(cap_dist(rng));
  for (double c : caps) inc.add_constraint(c);
  std::vector<std::pair<FlowId, Spec>> live;
  for (int step = 0; step < 1500; ++step) {
    if (!live.empty() && u(rng) < 0.4) {
      const size_t i = rng() % live.size();
      inc.remove_flow(live[i].first);
      live.erase(live.begin() + static_cast<long>(i));
    } else {
      Spec spec;
      const int k = 1 + static_cast<int>(rng() % 4);
      while (static_cast<int>(spec.cons.size()) < k) {
        const ConstraintId c = static_cast<ConstraintId>(rng() % n_cons);
        if (std::find(spec.cons.begin(), spec.cons.end(), c) == spec.cons.end())
          spec.cons.push_back(c);
      }
      spec.bound = u(rng) < 0.3 ? bound_dist(rng) : MaxMinSolver::kUnbounded;
      live.emplace_back(inc.add_flow(spec.cons, spec.bound), spec);
    }
    if (step % 5 != 0) continue;  // several changes between solves, as in the simulator
    inc.solve();
    MaxMinSolver fresh;
    for (double c : caps) fresh.add_constraint(c);
    std::vector<FlowId> fresh_ids;
    for (const auto& [f, spec] : live) fresh_ids.push_back(fresh.add_flow(spec.cons, spec.bound));
    for (size_t i = 0; i < live.size(); ++i) {
      const double a = inc.rate(live[i].first), b = fresh.rate(fresh_ids[i]);
      ASSERT_NEAR(a, b, 1e-9 * std::max(1.0, b)) << "step " << step << " flow " << i;
    }
    if (step % 100 == 0) expect_max_min_fair(inc, caps, live);
  }
  // invalidate_all() forces a from-scratch solve of the same solver: same answer.
  std::vector<double> before;
  for (const auto& [f, spec] : live) before.push_back(inc.rate(f));
  inc.invalidate_all();
  for (size_t i = 0; i < live.size(); ++i)
    EXPECT_NEAR(inc.rate(live[i].first), before[i], 1e-9 * std::max(1.0, before[i]));
}

}  // namespace
}  // namespace phantora::net
