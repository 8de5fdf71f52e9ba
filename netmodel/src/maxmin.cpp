#include "phantora/netmodel/maxmin.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace phantora::net {

namespace {
constexpr uint32_t kNone = UINT32_MAX;
}

ConstraintId MaxMinSolver::add_constraint(double capacity) {
  if (!(capacity >= 0)) throw std::invalid_argument("maxmin: constraint capacity must be >= 0");
  constraints_.emplace_back();
  constraints_.back().capacity = capacity;
  return static_cast<ConstraintId>(constraints_.size() - 1);
}

FlowId MaxMinSolver::add_flow(std::span<const ConstraintId> constraints, double bound) {
  if (!(bound > 0)) throw std::invalid_argument("maxmin: flow bound must be > 0");
  FlowId id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.cons.assign(constraints.begin(), constraints.end());
  f.slot.resize(f.cons.size());
  f.bound = bound;
  f.rate = 0;
  f.alive = true;
  for (size_t i = 0; i < f.cons.size(); ++i) {
    if (f.cons[i] >= constraints_.size()) throw std::out_of_range("maxmin: unknown constraint");
    auto& list = constraints_[f.cons[i]].flows;
    f.slot[i] = static_cast<uint32_t>(list.size());
    list.push_back(id);
  }
  dirty_flows_.push_back(id);
  ++active_;
  return id;
}

void MaxMinSolver::remove_flow(FlowId id) {
  if (!is_alive(id)) throw std::invalid_argument("maxmin: removing a flow that is not alive");
  Flow& f = flows_[id];
  for (size_t i = 0; i < f.cons.size(); ++i) {
    auto& list = constraints_[f.cons[i]].flows;
    const uint32_t pos = f.slot[i];
    const FlowId moved = list.back();
    list[pos] = moved;
    list.pop_back();
    if (moved != id) {
      // Tell the moved flow where it now sits in this constraint's list.
      Flow& m = flows_[moved];
      for (size_t j = 0; j < m.cons.size(); ++j) {
        if (m.cons[j] == f.cons[i]) {
          m.slot[j] = pos;
          break;
        }
      }
    }
    // The component may have split; each former neighbour seeds a recomputation.
    dirty_constraints_.push_back(f.cons[i]);
  }
  f.cons.clear();
  f.slot.clear();
  f.alive = false;
  free_flows_.push_back(id);
  --active_;
}

void MaxMinSolver::invalidate_all() {
  for (ConstraintId c = 0; c < constraints_.size(); ++c) dirty_constraints_.push_back(c);
  for (FlowId f = 0; f < flows_.size(); ++f)
    if (flows_[f].alive && flows_[f].cons.empty()) dirty_flows_.push_back(f);
}

double MaxMinSolver::rate(FlowId flow) {
  if (!is_alive(flow)) throw std::invalid_argument("maxmin: rate of a flow that is not alive");
  if (dirty()) solve();
  return flows_[flow].rate;
}

// Breadth-first walk over flows and constraints linked by usage, from one seed.
void MaxMinSolver::collect_component(uint32_t seed_flow, uint32_t seed_constraint) {
  comp_flows_.clear();
  comp_cons_.clear();
  if (seed_flow != kNone) {
    if (!flows_[seed_flow].alive || flows_[seed_flow].visited == epoch_) return;
    flows_[seed_flow].visited = epoch_;
    comp_flows_.push_back(seed_flow);
  } else {
    if (constraints_[seed_constraint].visited == epoch_) return;
    constraints_[seed_constraint].visited = epoch_;
    comp_cons_.push_back(seed_constraint);
  }
  size_t fi = 0, ci = 0;
  while (fi < comp_flows_.size() || ci < comp_cons_.size()) {
    for (; fi < comp_flows_.size(); ++fi) {
      for (ConstraintId c : flows_[comp_flows_[fi]].cons) {
        if (constraints_[c].visited != epoch_) {
          constraints_[c].visited = epoch_;
          comp_cons_.push_back(c);
        }
      }
    }
    for (; ci < comp_cons_.size(); ++ci) {
      for (FlowId f : constraints_[comp_cons_[ci]].flows) {
        if (flows_[f].visited != epoch_) {
          flows_[f].visited = epoch_;
          comp_flows_.push_back(f);
        }
      }
    }
  }
}

void MaxMinSolver::fix(FlowId id, double rate) {
  Flow& f = flows_[id];
  f.fixed = true;
  f.rate = rate;
  for (ConstraintId c : f.cons) {
    Constraint& k = constraints_[c];
    k.remaining -= rate;
    --k.unfixed;
    ++k.version;
    if (k.unfixed > 0) {
      heap_.push_back({std::max(k.remaining, 0.0) / k.unfixed, c, k.version});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
    }
  }
}

// Progressive filling on the current component, driven by a min-heap of candidate levels:
// each constraint's fair share (remaining capacity / unfrozen flows) and each flow's bound.
// Entries made stale by a later change of the constraint are skipped by version.
void MaxMinSolver::fill_component() {
  heap_.clear();
  for (ConstraintId c : comp_cons_) {
    Constraint& k = constraints_[c];
    k.remaining = k.capacity;
    k.unfixed = static_cast<uint32_t>(k.flows.size());
    ++k.version;
    if (k.unfixed > 0) heap_.push_back({k.remaining / k.unfixed, c, k.version});
  }
  for (FlowId f : comp_flows_) {
    Flow& fl = flows_[f];
    fl.fixed = false;
    if (fl.bound != kUnbounded) heap_.push_back({fl.bound, f, kNone});
  }
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>{});
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const HeapEntry e = heap_.back();
    heap_.pop_back();
    if (e.version == kNone) {
      if (!flows_[e.id].fixed) fix(e.id, e.level);
      continue;
    }
    Constraint& k = constraints_[e.id];
    if (e.version != k.version || k.unfixed == 0) continue;
    // Saturated: every flow still growing here stops at this level. fix() changes the
    // counters of the constraints, never their flow lists, so iterating the list is safe.
    for (FlowId f : k.flows)
      if (!flows_[f].fixed) fix(f, e.level);
  }
  // Flows that touch no constraint and have no bound are limited by nothing.
  for (FlowId f : comp_flows_)
    if (!flows_[f].fixed) flows_[f].rate = flows_[f].bound;
  changed_.insert(changed_.end(), comp_flows_.begin(), comp_flows_.end());
}

std::span<const FlowId> MaxMinSolver::solve() {
  changed_.clear();
  if (!dirty()) return changed_;
  ++epoch_;
  for (FlowId f : dirty_flows_) {
    collect_component(f, kNone);
    if (!comp_flows_.empty() || !comp_cons_.empty()) fill_component();
  }
  for (ConstraintId c : dirty_constraints_) {
    collect_component(kNone, c);
    if (!comp_flows_.empty()) fill_component();
  }
  dirty_flows_.clear();
  dirty_constraints_.clear();
  return changed_;
}

}  // namespace phantora::net
