// Max-min fair bandwidth sharing over opaque constraints and flows (SimGrid lmm style).
//
// The solver knows nothing of networks: a constraint is a capacity, a flow uses a set of
// constraints (one unit of capacity per unit of rate on each) and may carry its own rate bound.
// Rates follow progressive filling: every flow's rate grows together until a constraint
// saturates or a bound is hit; the flows there are frozen and the rest keep growing.
//
// Updates are incremental. Adding or removing a flow only marks the constraints it touches;
// solve() recomputes the connected components (flows linked through shared constraints) that
// hold a mark and leaves every other component's rates untouched.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace phantora::net {

using ConstraintId = uint32_t;
using FlowId = uint32_t;

class MaxMinSolver {
 public:
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  ConstraintId add_constraint(double capacity);
  // A flow may name the same constraint once only. Ids of removed flows are reused.
  FlowId add_flow(std::span<const ConstraintId> constraints, double bound = kUnbounded);
  void remove_flow(FlowId flow);

  // Recomputes the components changed since the last call and returns the flows whose rate was
  // recomputed (a superset of those whose rate changed). The span is valid until the next call.
  std::span<const FlowId> solve();
  // Marks every component dirty: the next solve() is a from-scratch solve (used by tests).
  void invalidate_all();

  // Rate of a live flow as of the last solve(); solves first if anything changed.
  double rate(FlowId flow);
  bool is_alive(FlowId flow) const { return flow < flows_.size() && flows_[flow].alive; }
  bool dirty() const { return !dirty_constraints_.empty() || !dirty_flows_.empty(); }

  size_t active_flows() const { return active_; }
  size_t constraint_count() const { return constraints_.size(); }
  double capacity(ConstraintId c) const { return constraints_[c].capacity; }
  size_t flows_on(ConstraintId c) const { return constraints_[c].flows.size(); }
  std::span<const ConstraintId> constraints_of(FlowId f) const { return flows_[f].cons; }

 private:
  struct Constraint {
    double capacity = 0;
    std::vector<FlowId> flows;
    // Scratch state of the progressive filling.
    double remaining = 0;
    uint32_t unfixed = 0;
    uint32_t version = 0;
    uint32_t visited = 0;
  };
  struct Flow {
    std::vector<ConstraintId> cons;
    std::vector<uint32_t> slot;  // slot[i]: index of this flow in constraints_[cons[i]].flows
    double bound = kUnbounded;
    double rate = 0;
    bool alive = false;
    bool fixed = false;
    uint32_t visited = 0;
  };
  struct HeapEntry {
    double level;
    uint32_t id;
    uint32_t version;  // constraint version, or UINT32_MAX for a flow's bound
    bool operator>(const HeapEntry& o) const { return level > o.level; }
  };

  void collect_component(uint32_t seed_flow, uint32_t seed_constraint);
  void fill_component();
  void fix(FlowId f, double rate);

  std::vector<Constraint> constraints_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<ConstraintId> dirty_constraints_;
  std::vector<FlowId> dirty_flows_;
  size_t active_ = 0;
  uint32_t epoch_ = 0;
  // Reused buffers.
  std::vector<FlowId> changed_;
  std::vector<FlowId> comp_flows_;
  std::vector<ConstraintId> comp_cons_;
  std::vector<HeapEntry> heap_;
};

}  // namespace phantora::net
