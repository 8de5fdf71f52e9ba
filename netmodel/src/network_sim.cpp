#include "phantora/netmodel/network_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace phantora::net {

double TransferInfo::algbw_gbs() const {
  if (!end || *end <= start) return 0;
  return static_cast<double>(bytes.count()) / (*end - start).as_seconds() / 1e9;
}

double TransferInfo::busbw_gbs() const {
  return algbw_gbs() * bus_bandwidth_factor(op, n_ranks);
}

NetworkSimulator::NetworkSimulator(Topology topo) : topo_(std::move(topo)) {
  for (const Link& l : topo_.links()) solver_.add_constraint(l.capacity.as_bytes_per_s());
  const size_t n = topo_.links().size();
  link_bytes_.assign(n, 0.0);
  link_flows_.assign(n, 0);
  link_busy_.assign(n, SimTime::zero());
  link_busy_since_.assign(n, SimTime::zero());
}

TransferId NetworkSimulator::start(const CollectiveRequest& req, SimTime at) {
  return start(plan_collective(topo_, req, next_transfer_), at);
}

TransferId NetworkSimulator::start(CollectivePlan plan, SimTime at) {
  if (at < now_)
    throw std::invalid_argument(fmt::format("transfer starts at {} ps, before the current {} ps",
                                            at.as_ps(), now_.as_ps()));
  if (at > now_) run_until(at);
  const TransferId id = next_transfer_++;
  Transfer& t = transfers_[id];
  t.info = TransferInfo{.op = plan.op,
                        .n_ranks = plan.n_ranks,
                        .algorithm = plan.algorithm,
                        .protocol = plan.protocol,
                        .channels = plan.channels,
                        .bytes = plan.algbw_bytes,
                        .start = now_,
                        .latency = plan.latency,
                        .predicted = plan.predicted,
                        .end = std::nullopt,
                        .flows = plan.flows.size()};
  ++active_transfers_;
  ++counters_.transfers;
  counters_.flows += plan.flows.size();
  for (const PlannedFlow& pf : plan.flows) {
    const FlowId f = solver_.add_flow(pf.path);
    if (f >= flows_.size()) flows_.resize(f + 1);
    flows_[f] = Flow{.transfer = id,
                     .remaining = plan.wire_bytes(pf),
                     .rate = 0,
                     .updated = now_,
                     .finish = SimTime::infinite(),
                     .version = flows_[f].version + 1,
                     .live = true};
    for (LinkId l : pf.path) link_flow_added(l);
  }
  t.open_flows = plan.flows.size();
  // The paths now live in the solver; keep the plan's summary, not its flows.
  plan.flows.clear();
  plan.flows.shrink_to_fit();
  t.plan = std::move(plan);
  if (t.open_flows == 0) schedule_completion(id, now_ + t.plan.latency);
  return id;
}

void NetworkSimulator::link_flow_added(LinkId l) {
  if (link_flows_[l]++ == 0) link_busy_since_[l] = now_;
}

void NetworkSimulator::link_flow_removed(LinkId l) {
  if (--link_flows_[l] == 0) link_busy_[l] += now_ - link_busy_since_[l];
}

// Brings a flow's remaining bytes (and the links' byte counters) up to now at its old rate.
void NetworkSimulator::settle(FlowId id) {
  Flow& f = flows_[id];
  if (now_ > f.updated && f.rate > 0) {
    const double moved = std::min(f.remaining, f.rate * (now_ - f.updated).as_seconds());
    f.remaining -= moved;
    for (LinkId l : solver_.constraints_of(id)) link_bytes_[l] += moved;
  }
  f.updated = now_;
}

// Re-solves the components that changed and reschedules their flows' completions.
void NetworkSimulator::resolve() {
  if (!solver_.dirty()) return;
  ++counters_.rate_solves;
  for (FlowId id : solver_.solve()) {
    Flow& f = flows_[id];
    if (!f.live) continue;
    const double rate = solver_.rate(id);
    // Same rate: the pending finish event still holds (new flows start at rate 0).
    if (rate == f.rate) continue;
    settle(id);
    f.rate = rate;
    if (f.remaining <= 0 || std::isinf(f.rate)) {
      f.finish = now_;
    } else if (f.rate <= 0) {
      f.finish = SimTime::infinite();
    } else {
      // Round up to the next picosecond: flows of equal size and rate finish together.
      const double ps = std::ceil(f.remaining / f.rate * 1e12);
      f.finish = ps >= 9e18 ? SimTime::infinite() : now_ + SimTime::ps(static_cast<int64_t>(ps));
    }
    ++f.version;
    if (!f.finish.is_infinite()) flow_events_.push({f.finish, id, f.version});
  }
}

void NetworkSimulator::finish_flow(FlowId id) {
  Flow& f = flows_[id];
  settle(id);
  // Whatever rounding left over is delivered now.
  for (LinkId l : solver_.constraints_of(id)) {
    link_bytes_[l] += f.remaining;
    link_flow_removed(l);
  }
  f.remaining = 0;
  f.live = false;
  solver_.remove_flow(id);
  Transfer& t = transfers_.at(f.transfer);
  if (--t.open_flows == 0) schedule_completion(f.transfer, now_ + t.plan.latency);
}

void NetworkSimulator::release(TransferId id) {
  auto it = transfers_.find(id);
  if (it != transfers_.end() && it->second.info.end) transfers_.erase(it);
}

void NetworkSimulator::schedule_completion(TransferId id, SimTime at) {
  done_events_.push({at, id, 0});
}

void NetworkSimulator::run_until(SimTime t) {
  for (;;) {
    resolve();
    while (!flow_events_.empty()) {
      const Event& e = flow_events_.top();
      if (flows_[e.id].live && flows_[e.id].version == e.version) break;
      flow_events_.pop();
    }
    const SimTime next_flow = flow_events_.empty() ? SimTime::infinite() : flow_events_.top().at;
    const SimTime next_done = done_events_.empty() ? SimTime::infinite() : done_events_.top().at;
    const SimTime next = std::min(next_flow, next_done);
    if (next > t || next.is_infinite()) break;
    now_ = next;
    while (!flow_events_.empty() && flow_events_.top().at == now_) {
      const Event e = flow_events_.top();
      flow_events_.pop();
      if (flows_[e.id].live && flows_[e.id].version == e.version) finish_flow(e.id);
    }
    while (!done_events_.empty() && done_events_.top().at <= now_) {
      const Event e = done_events_.top();
      done_events_.pop();
      Transfer& tr = transfers_.at(e.id);
      tr.info.end = e.at;
      --active_transfers_;
      completed_.push_back({e.id, e.at});
    }
  }
  if (!t.is_infinite() && t > now_) now_ = t;
}

SimTime NetworkSimulator::next_event_time() {
  resolve();
  SimTime next = SimTime::infinite();
  for (const Completion& c : completed_) next = std::min(next, c.end);
  while (!flow_events_.empty()) {
    const Event& e = flow_events_.top();
    if (flows_[e.id].live && flows_[e.id].version == e.version) {
      next = std::min(next, e.at);
      break;
    }
    flow_events_.pop();
  }
  if (!done_events_.empty()) next = std::min(next, done_events_.top().at);
  return next;
}

std::vector<Completion> NetworkSimulator::advance_to(SimTime t) {
  if (t < now_)
    throw std::invalid_argument(
        fmt::format("advance_to({} ps) is before the current {} ps", t.as_ps(), now_.as_ps()));
  run_until(t);
  std::vector<Completion> out;
  out.swap(completed_);
  std::stable_sort(out.begin(), out.end(), [](const Completion& a, const Completion& b) {
    return a.end < b.end || (a.end == b.end && a.id < b.id);
  });
  return out;
}

}  // namespace phantora::net
