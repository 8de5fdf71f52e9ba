// plan_collective: validate, pick (algorithm, protocol, channels) with NCCL's tuner, and keep
// the chosen algorithm's flows. Also the printable form of a plan.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "nccl_flows.hpp"
#include "nccl_tuning.hpp"
#include "phantora/netmodel/nccl_constants.hpp"
#include "phantora/netmodel/nccl_model.hpp"

namespace phantora::net {

namespace {

using detail::CommShape;
using detail::FlowJob;
using detail::TuneContext;

SimTime from_us(double us) {
  return SimTime::ps(static_cast<int64_t>(std::llround(us * 1e6)));
}
// Transfer times round up to the picosecond, as the simulator's flows do.
SimTime transfer_time(double seconds) {
  return SimTime::ps(static_cast<int64_t>(std::ceil(seconds * 1e12)));
}

void validate(const Topology& topo, const CollectiveRequest& req) {
  if (req.ranks.empty()) throw std::invalid_argument("collective with no member GPUs");
  if (req.op == CollOp::SendRecv && req.ranks.size() != 2)
    throw std::invalid_argument("SendRecv takes exactly two GPUs: {sender, receiver}");
  if ((req.op == CollOp::Broadcast || req.op == CollOp::Reduce) &&
      (req.root < 0 || req.root >= static_cast<int>(req.ranks.size())))
    throw std::invalid_argument(
        fmt::format("root rank {} is not in a {}-rank communicator", req.root, req.ranks.size()));
  for (GpuId g : req.ranks)
    if (g < 0 || g >= topo.num_gpus())
      throw std::invalid_argument(
          fmt::format("GPU {} is not in the {}-GPU topology", g, topo.num_gpus()));
}

// Send/recv and all-to-all: no tuner in NCCL. Protocol by size (NCCL_P2P_LL_THRESHOLD); the
// latency is one NCCL step of the slowest link type crossed, plus the base latency and the
// path's propagation latency (our choice: NCCL runs a group's sends concurrently over channels).
void plan_p2p(const Topology& topo, const CommShape& shape, const CollectiveRequest& req,
              uint64_t seed, CollectivePlan& plan) {
  const auto& k = nccl_constants();
  plan.algorithm = Algorithm::P2p;
  plan.protocol = static_cast<double>(req.bytes.count()) <= k.p2p_ll_threshold_bytes
                      ? Protocol::LL
                      : Protocol::Simple;
  plan.channels = 1;
  FlowJob job{topo, shape, req.op, Algorithm::P2p, 1, 0, static_cast<double>(req.bytes.count()),
              0,    seed};
  detail::build_flows(job, plan.flows);
  const int pi = static_cast<int>(plan.protocol);
  const int ring = static_cast<int>(Algorithm::Ring);
  const int hw =
      static_cast<int>(shape.n_nodes > 1                                   ? HwLink::Net
                       : topo.spec().intra_fabric == IntraFabric::NvSwitch ? HwLink::NvLink
                                                                           : HwLink::Pci);
  SimTime propagation = SimTime::zero();
  for (const auto& f : plan.flows) propagation = std::max(propagation, topo.path_latency(f.path));
  plan.latency = from_us(k.base_latency_us[ring][pi] + k.hw_latency_us[hw][ring][pi]) + propagation;
  // LL moves 8 bytes of data per 16-byte line (flag + data).
  plan.efficiency = plan.protocol == Protocol::LL ? 0.5 : 1.0;
}

void plan_tuned(const Topology& topo, const CommShape& shape, const CollectiveRequest& req,
                uint64_t seed, CollectivePlan& plan) {
  const double nbytes = static_cast<double>(plan.tuning_bytes.count());
  TuneContext base{topo, shape, req.op, nbytes, 0};
  double best = std::numeric_limits<double>::infinity();
  double best_raw_seconds = 0;
  std::vector<PlannedFlow> flows;
  for (Algorithm a : detail::candidate_algorithms(base, req.tuning)) {
    TuneContext ctx = base;
    ctx.channels = detail::comm_channels(topo, a, req.tuning);
    detail::build_flows(FlowJob{topo, shape, req.op, a, ctx.channels, nbytes, 0, req.root, seed},
                        flows);
    const double raw_seconds = detail::bottleneck_seconds(topo, flows);
    // The plan's bandwidth in NCCL's busBw units (GB/s), before NCCL's refinements.
    const double raw_bus = nbytes / raw_seconds / 1e9 / detail::bus_ratio(ctx, a);
    bool won = false;
    for (Protocol p : detail::candidate_protocols(ctx, a, req.tuning)) {
      const double eff = detail::efficiency(ctx, a, p, raw_bus);
      AlgoCost cost{a, p, detail::latency_us(ctx, a, p), raw_seconds / eff * 1e6};
      plan.candidates.push_back(cost);
      if (cost.total_us() < best) {
        best = cost.total_us();
        best_raw_seconds = raw_seconds;
        plan.algorithm = a;
        plan.protocol = p;
        plan.channels = ctx.channels;
        plan.efficiency = eff;
        plan.latency = from_us(cost.latency_us);
        won = true;
      }
    }
    if (won) plan.flows.swap(flows);
  }
  if (plan.candidates.empty()) {
    // The overrides left nothing (e.g. NCCL_PROTO=LL with only NVLS allowed): NCCL falls back
    // to Ring with its protocols.
    CollectiveRequest fallback = req;
    fallback.tuning.algo = "Ring";
    fallback.tuning.proto.clear();
    plan_tuned(topo, shape, fallback, seed, plan);
    return;
  }
  // Small operations run on fewer channels than the communicator has (enqueue.cc); selection
  // above used the full count, as NCCL's does.
  TuneContext ctx = base;
  ctx.channels = plan.channels;
  const int nc = detail::channels_for_size(ctx, plan.algorithm, plan.protocol);
  if (nc != plan.channels) {
    plan.channels = nc;
    detail::build_flows(FlowJob{topo, shape, req.op, plan.algorithm, nc, nbytes, 0, req.root, seed},
                        plan.flows);
    best_raw_seconds = detail::bottleneck_seconds(topo, plan.flows);
    // Fewer channels may cross fewer NICs; NCCL's caps are per channel or per operation, so
    // the refinements are re-applied to the smaller plan.
    const double raw_bus = nbytes / best_raw_seconds / 1e9 / detail::bus_ratio(ctx, plan.algorithm);
    ctx.channels = nc;
    plan.efficiency = detail::efficiency(ctx, plan.algorithm, plan.protocol, raw_bus);
  }
  plan.predicted = plan.latency + transfer_time(best_raw_seconds / plan.efficiency);
}

}  // namespace

CollectivePlan plan_collective(const Topology& topo, const CollectiveRequest& req,
                               uint64_t flow_seed) {
  validate(topo, req);
  const CommShape shape = detail::make_shape(topo, req.ranks);
  CollectivePlan plan;
  plan.op = req.op;
  plan.n_ranks = static_cast<int>(req.ranks.size());
  plan.n_nodes = shape.n_nodes;
  plan.request_bytes = req.bytes;
  plan.tuning_bytes = nccl_tuning_bytes(req.op, req.bytes, plan.n_ranks);
  plan.algbw_bytes = algbw_bytes(req.op, req.bytes, plan.n_ranks);
  plan.latency = SimTime::zero();
  plan.predicted = SimTime::zero();
  // Nothing to move: NCCL returns without launching anything that costs time on the network.
  if (plan.n_ranks == 1 || req.bytes.count() == 0) return plan;
  if (req.op == CollOp::SendRecv || req.op == CollOp::AllToAll) {
    plan_p2p(topo, shape, req, flow_seed, plan);
    const double raw = detail::bottleneck_seconds(topo, plan.flows);
    plan.predicted = plan.latency + transfer_time(raw / plan.efficiency);
    return plan;
  }
  plan_tuned(topo, shape, req, flow_seed, plan);
  return plan;
}

std::string CollectivePlan::describe(const Topology& topo, size_t max_flows) const {
  std::string out = fmt::format(
      "{} {} B over {} ranks on {} node(s): {} / {} / {} channels, latency {:.2f} us, "
      "efficiency {:.3f}, predicted {:.2f} us, {} flows\n",
      to_string(op), request_bytes.count(), n_ranks, n_nodes, to_string(algorithm),
      to_string(protocol), channels, latency.as_us(), efficiency, predicted.as_us(), flows.size());
  if (!candidates.empty()) {
    out += "  tuner (latency + bytes/bw = total, us):\n";
    for (const auto& c : candidates)
      out +=
          fmt::format("    {:6s} {:6s} {:10.2f} + {:12.2f} = {:12.2f}{}\n", to_string(c.algorithm),
                      to_string(c.protocol), c.latency_us, c.bandwidth_us, c.total_us(),
                      c.algorithm == algorithm && c.protocol == protocol ? "  <- chosen" : "");
  }
  auto endpoint = [&](GpuId g) {
    return g == kSwitch ? std::string("nvswitch")
                        : fmt::format("gpu{}(h{}/{})", g, topo.host_of(g), topo.local_index(g));
  };
  for (size_t i = 0; i < flows.size() && i < max_flows; ++i) {
    const auto& f = flows[i];
    std::string path;
    for (LinkId l : f.path) path += (path.empty() ? "" : " ") + topo.link(l).name;
    out += fmt::format("  ch{:<2d} {} -> {}: {:.0f} B [{}]\n", f.channel, endpoint(f.src),
                       endpoint(f.dst), f.bytes, path);
  }
  if (flows.size() > max_flows) out += fmt::format("  ... and {} more\n", flows.size() - max_flows);
  return out;
}

}  // namespace phantora::net
