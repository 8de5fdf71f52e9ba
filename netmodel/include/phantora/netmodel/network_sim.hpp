// Flow-level network simulator: collectives become flows (nccl_model), flows share links
// max-min fairly (maxmin), and time advances from one flow completion to the next.
//
// Latency: a transfer's flows start moving bytes at its start time; it completes when its last
// flow has finished plus the plan's latency term (NCCL's latency model). Bandwidth is thus
// taken from the first moment, which is conservative under contention, and a transfer alone on
// a non-blocking fabric ends exactly at start + plan.predicted.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "phantora/netmodel/collective.hpp"
#include "phantora/netmodel/maxmin.hpp"
#include "phantora/netmodel/nccl_model.hpp"
#include "phantora/netmodel/topology.hpp"
#include "phantora/units.hpp"

namespace phantora::net {

using TransferId = uint64_t;

struct Completion {
  TransferId id;
  SimTime end;
  bool operator==(const Completion&) const = default;
};

struct TransferInfo {
  CollOp op;
  int n_ranks;
  Algorithm algorithm;
  Protocol protocol;
  int channels;
  Bytes bytes;  // nccl-tests' S
  SimTime start;
  SimTime latency;
  SimTime predicted;           // the plan's duration in NCCL's model
  std::optional<SimTime> end;  // set once complete
  size_t flows = 0;
  // nccl-tests' algbw = S / t and busbw = algbw x bus_bandwidth_factor (GB/s); 0 until done.
  double algbw_gbs() const;
  double busbw_gbs() const;
};

struct LinkStats {
  std::string name;
  LinkKind kind;
  Bandwidth capacity;
  double bytes = 0;        // wire bytes carried so far
  SimTime busy;            // time with at least one flow on the link
  double utilisation = 0;  // bytes / (capacity x elapsed)
};

// How much work the network model did: for the simulator's own performance figures.
struct NetworkCounters {
  uint64_t transfers = 0;
  uint64_t flows = 0;
  uint64_t rate_solves = 0;  // max-min re-solves (one per change in the set of flows)
};

class NetworkSimulator {
 public:
  explicit NetworkSimulator(Topology topo);

  const Topology& topology() const { return topo_; }
  SimTime now() const { return now_; }

  // Plans the collective and injects its flows at `start` (>= now()). Completions that fall
  // between now() and `start` are kept and returned by the next advance_to().
  TransferId start(const CollectiveRequest& req, SimTime start);
  TransferId start(CollectivePlan plan, SimTime start);
  // Plans `req` as start(req, ...) would plan it now (the same ECMP seed), without starting it:
  // for a caller that wants the flows, which a started transfer no longer keeps.
  CollectivePlan plan_next(const CollectiveRequest& req) const {
    return plan_collective(topo_, req, next_transfer_);
  }

  // Earliest time something completes (a flow or a transfer); infinite when idle.
  SimTime next_event_time();
  // Moves to t (>= now()), finishing flows and transfers on the way and re-solving rates at
  // every change. Returns the transfers completed by t, in time order.
  std::vector<Completion> advance_to(SimTime t);

  // A transfer's figures, until release(id). Throws std::out_of_range for an unknown id.
  const TransferInfo& transfer(TransferId id) const { return transfers_.at(id).info; }
  const CollectivePlan& plan(TransferId id) const { return transfers_.at(id).plan; }
  // The caller is done with a completed transfer: forget it, so that memory holds what is in
  // flight, not every transfer of the run (millions at 1,024 represented GPUs).
  void release(TransferId id);
  size_t active_flows() const { return solver_.active_flows(); }
  size_t active_transfers() const { return active_transfers_; }
  NetworkCounters counters() const { return counters_; }

  std::vector<LinkStats> link_stats() const;
  // links.csv: link,kind,capacity_gbytes_per_s,bytes,busy_s,utilisation (links that carried
  // nothing are left out unless all_links).
  void write_links_csv(std::ostream& out, bool all_links = false) const;

 private:
  struct Flow {
    TransferId transfer = 0;
    double remaining = 0;  // wire bytes left at `updated`
    double rate = 0;       // bytes/s
    SimTime updated;
    SimTime finish;
    uint32_t version = 0;
    bool live = false;
  };
  struct Transfer {
    TransferInfo info;
    CollectivePlan plan;
    size_t open_flows = 0;
  };
  struct Event {
    SimTime at;
    uint64_t id;       // flow id, or transfer id for a completion
    uint32_t version;  // flows only
    bool operator>(const Event& o) const { return at > o.at || (at == o.at && id > o.id); }
  };
  using MinHeap = std::priority_queue<Event, std::vector<Event>, std::greater<>>;

  void run_until(SimTime t);
  void resolve();
  void settle(FlowId f);
  void finish_flow(FlowId f);
  void schedule_completion(TransferId id, SimTime at);
  void link_flow_added(LinkId l);
  void link_flow_removed(LinkId l);

  Topology topo_;
  MaxMinSolver solver_;
  SimTime now_ = SimTime::zero();
  std::vector<Flow> flows_;  // indexed by solver FlowId
  std::unordered_map<TransferId, Transfer> transfers_;
  TransferId next_transfer_ = 0;
  size_t active_transfers_ = 0;
  NetworkCounters counters_;
  MinHeap flow_events_;
  MinHeap done_events_;
  std::vector<Completion> completed_;  // reported by the next advance_to
  // Per-link counters.
  std::vector<double> link_bytes_;
  std::vector<uint32_t> link_flows_;
  std::vector<SimTime> link_busy_;
  std::vector<SimTime> link_busy_since_;
};

}  // namespace phantora::net
