#include "phantora/simcore/collectives.hpp"

#include "phantora/netmodel/hbm_traffic.hpp"
#include "phantora/simcore/payload.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace phantora::sim {
namespace {

using wire::dtype_size;

const char* kind_name(wire::CollKind k) {
  switch (k) {
    case wire::CollKind::kAllReduce:
      return "ncclAllReduce";
    case wire::CollKind::kBroadcast:
      return "ncclBroadcast";
    case wire::CollKind::kReduce:
      return "ncclReduce";
    case wire::CollKind::kAllGather:
      return "ncclAllGather";
    case wire::CollKind::kReduceScatter:
      return "ncclReduceScatter";
    case wire::CollKind::kAllToAll:
      return "ncclAlltoAll";
    case wire::CollKind::kSend:
      return "ncclSend";
    case wire::CollKind::kRecv:
      return "ncclRecv";
    case wire::CollKind::kGather:
      return "ncclGather";
    case wire::CollKind::kScatter:
      return "ncclScatter";
  }
  return "?";
}

bool is_p2p(wire::CollKind k) {
  return k == wire::CollKind::kSend || k == wire::CollKind::kRecv;
}
bool has_root(wire::CollKind k) {
  return k == wire::CollKind::kBroadcast || k == wire::CollKind::kReduce ||
         k == wire::CollKind::kGather || k == wire::CollKind::kScatter;
}

std::optional<net::CollOp> net_op(wire::CollKind k) {
  switch (k) {
    case wire::CollKind::kAllReduce:
      return net::CollOp::AllReduce;
    case wire::CollKind::kBroadcast:
      return net::CollOp::Broadcast;
    case wire::CollKind::kReduce:
      return net::CollOp::Reduce;
    case wire::CollKind::kAllGather:
      return net::CollOp::AllGather;
    case wire::CollKind::kReduceScatter:
      return net::CollOp::ReduceScatter;
    case wire::CollKind::kAllToAll:
      return net::CollOp::AllToAll;
    default:
      return std::nullopt;  // send/recv, gather, scatter: point-to-point transfers
  }
}

std::string c_string(const char* s, size_t n) {
  return std::string(s, strnlen(s, n));
}

}  // namespace

Collectives::Collectives(Engine& engine, net::NetworkSimulator& network, int max_ranks, Hooks hooks,
                         Replicas replicas)
    : engine_(engine),
      network_(network),
      max_ranks_(max_ranks),
      hooks_(std::move(hooks)),
      replicas_(std::move(replicas)) {}

std::pair<Collectives::Comm*, int> Collectives::lookup(ClientId client, uint64_t handle) {
  auto it = handles_.find({client, handle});
  if (it == handles_.end()) {
    throw CollectiveError(
        fmt::format("{} used NCCL communicator handle {} that was never initialised",
                    hooks_.describe(client), handle));
  }
  return it->second;
}

void Collectives::join(Comm& comm, int rank, ClientId client, uint64_t handle, int device,
                       uint64_t request, SimTime host_time) {
  Member& m = comm.members[rank];
  if (m.joined) {
    throw CollectiveError(fmt::format("rank {} of communicator {} joined twice ({} and {})", rank,
                                      comm.id, hooks_.describe(m.client), hooks_.describe(client)));
  }
  m = Member{client, handle, device, hooks_.global_gpu(client, device), true};
  handles_[{client, handle}] = {&comm, rank};
  comm.init_waiters.push_back(PendingInit{client, request, host_time});
  comm.latest_join = std::max(comm.latest_join, host_time);
  if (comm.init_waiters.size() == static_cast<size_t>(comm.nranks)) {
    // ncclCommInitRank returns once every rank has joined. Its own setup time is not modelled
    // (docs/nccl.md): it does not recur in training steps.
    for (const PendingInit& w : comm.init_waiters)
      hooks_.reply(w.client, w.request, comm.latest_join, 0, 0);
    comm.init_waiters.clear();
  }
}

void Collectives::comm_init(ClientId client, uint64_t request, SimTime host_time,
                            const wire::CommInit& init) {
  std::array<uint8_t, wire::kUniqueIdBytes> uid;
  std::memcpy(uid.data(), init.unique_id, uid.size());
  if (init.nranks < 1 || init.nranks > max_ranks_ || init.rank < 0 || init.rank >= init.nranks) {
    throw CollectiveError(
        fmt::format("{} called ncclCommInitRank with rank {} of {} (the cluster has {} GPUs)",
                    hooks_.describe(client), init.rank, init.nranks, max_ranks_));
  }
  auto& slot = comms_by_uid_[uid];
  if (!slot) {
    slot = std::make_unique<Comm>();
    slot->id = next_comm_++;
    slot->nranks = init.nranks;
    slot->spans = replicas_.spans(init.nranks);
    slot->members.resize(init.nranks);
    slot->next_seq.assign(init.nranks, 0);
    slot->split_calls.assign(init.nranks, 0);
    slot->tuning = net::TuningOverrides{c_string(init.algo, sizeof(init.algo)),
                                        c_string(init.proto, sizeof(init.proto)), init.min_channels,
                                        init.max_channels};
  } else if (slot->nranks != init.nranks) {
    throw CollectiveError(fmt::format("communicator {}: {} says it has {} ranks, others said {}",
                                      slot->id, hooks_.describe(client), init.nranks,
                                      slot->nranks));
  }
  join(*slot, init.rank, client, init.comm, init.device, request, host_time);
}

void Collectives::comm_split(ClientId client, uint64_t request, SimTime host_time,
                             const wire::CommSplit& split) {
  auto [parent, rank] = lookup(client, split.parent);
  const uint64_t ordinal = parent->split_calls[rank]++;
  auto& calls = parent->splits[ordinal];
  calls.resize(parent->nranks);
  calls[rank] = std::make_pair(split, PendingInit{client, request, host_time});
  if (std::any_of(calls.begin(), calls.end(), [](const auto& c) { return !c.has_value(); })) return;

  // Every rank has called: form one communicator per colour, ranks ordered by (key, old rank).
  SimTime latest;
  std::map<int32_t, std::vector<int>> by_color;
  for (int r = 0; r < parent->nranks; ++r) {
    latest = std::max(latest, calls[r]->second.host_time);
    if (calls[r]->first.color >= 0) by_color[calls[r]->first.color].push_back(r);
  }
  for (auto& [color, ranks] : by_color) {
    std::stable_sort(ranks.begin(), ranks.end(),
                     [&](int a, int b) { return calls[a]->first.key < calls[b]->first.key; });
    auto comm = std::make_unique<Comm>();
    comm->id = next_comm_++;
    comm->nranks = static_cast<int>(ranks.size());
    comm->spans = replicas_.spans(comm->nranks);
    comm->members.resize(ranks.size());
    comm->next_seq.assign(ranks.size(), 0);
    comm->split_calls.assign(ranks.size(), 0);
    comm->tuning = parent->tuning;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const Member& old = parent->members[ranks[i]];
      comm->members[i] = Member{old.client, calls[ranks[i]]->first.comm, old.device, old.gpu, true};
      handles_[{old.client, calls[ranks[i]]->first.comm}] = {comm.get(), static_cast<int>(i)};
    }
    split_comms_.push_back(std::move(comm));
  }
  for (int r = 0; r < parent->nranks; ++r) {
    const auto& [s, w] = *calls[r];
    int32_t new_rank = -1, size = 0;
    if (s.color >= 0) {
      const auto& ranks = by_color[s.color];
      new_rank = static_cast<int32_t>(std::find(ranks.begin(), ranks.end(), r) - ranks.begin());
      size = static_cast<int32_t>(ranks.size());
    }
    hooks_.reply(w.client, w.request, latest, new_rank, size);
  }
  parent->splits.erase(ordinal);
}

void Collectives::comm_destroy(ClientId client, const wire::CommRef& ref) {
  // Destroying does not wait for peers; outstanding operations keep their communicator.
  lookup(client, ref.comm);
}

std::string Collectives::describe_op(const Comm& comm, const wire::CollectiveOp& op,
                                     uint64_t seq) const {
  std::string s = fmt::format("{}(count={}, dtype={}", kind_name(op.kind), op.count,
                              static_cast<int>(op.dtype));
  if (has_root(op.kind)) s += fmt::format(", root={}", op.peer);
  if (is_p2p(op.kind)) s += fmt::format(", peer={}", op.peer);
  if (op.kind == wire::CollKind::kAllReduce || op.kind == wire::CollKind::kReduce ||
      op.kind == wire::CollKind::kReduceScatter) {
    s += fmt::format(", op={}", op.redop);
  }
  s += fmt::format(") on communicator {}", comm.id);
  if (!is_p2p(op.kind)) s += fmt::format(", collective #{}", seq);
  return s;
}

void Collectives::submit(ClientId client, SimTime host_time, const wire::CollectiveHeader& header,
                         std::span<const wire::CollectiveOp> ops,
                         std::vector<std::vector<std::byte>> payloads) {
  auto group = std::make_unique<Group>();
  Group& g = *group;
  g.token = next_token_++;
  g.client = client;
  g.stream = header.stream;
  for (const wire::CollectiveOp& op : ops) {
    auto [comm, rank] = lookup(client, op.comm);
    auto part = std::make_unique<Part>();
    part->group = &g;
    part->op = op;
    part->rank = rank;
    part->payload = std::move(payloads[&op - ops.data()]);
    if (dtype_size(op.dtype) == 0) {
      throw CollectiveError(fmt::format("{} called {} with an unknown data type",
                                        hooks_.describe(client), kind_name(op.kind)));
    }
    if ((has_root(op.kind) || is_p2p(op.kind)) && (op.peer < 0 || op.peer >= comm->nranks)) {
      throw CollectiveError(
          fmt::format("{} called {}: rank {} is outside the communicator of {} ranks",
                      hooks_.describe(client), kind_name(op.kind), op.peer, comm->nranks));
    }
    // A small operation's result is computed from the bytes its members send: check them as
    // they arrive, not when the operation starts (which may be when the run is finishing).
    const int n = is_p2p(op.kind) ? 2 : comm->nranks;
    if (hooks_.deliver &&
        wire::op_carries_payload(op.kind, op.count, op.dtype, is_p2p(op.kind) ? 1 : n)) {
      const uint64_t expected =
          wire::op_send_bytes(op.kind, op.count, op.dtype, n, !is_p2p(op.kind) && rank == op.peer);
      if (part->payload.size() != expected) {
        throw CollectiveError(fmt::format("{} sent {} payload bytes for {}, expected {}",
                                          hooks_.describe(client), part->payload.size(),
                                          kind_name(op.kind), expected));
      }
    }
    g.parts.push_back(std::move(part));
  }
  g.name =
      ops.size() == 1 ? kind_name(ops[0].kind) : fmt::format("nccl group ({} ops)", ops.size());
  groups_[g.token] = std::move(group);
  for (auto& part : g.parts) match(g, *part);
  if (hooks_.submitted) hooks_.submitted(g.token, client, header.device);
  engine_.submit_deferred(client, header.stream, host_time, g.token);
}

void Collectives::check_agreement(const Matched& m, const Part& part) const {
  for (const Part* other : m.parts) {
    if (other == nullptr) continue;
    const wire::CollectiveOp& a = other->op;
    const wire::CollectiveOp& b = part.op;
    const bool same = a.kind == b.kind && a.count == b.count && a.dtype == b.dtype &&
                      a.redop == b.redop && (!has_root(a.kind) || a.peer == b.peer);
    if (!same) {
      throw CollectiveError(fmt::format(
          "ranks disagree on {} collective #{}: rank {} ({}) called {}, but rank {} ({}) called {}",
          fmt::format("communicator {}'s", m.comm->id), m.seq, other->rank,
          hooks_.describe(other->group->client), describe_op(*m.comm, a, m.seq), part.rank,
          hooks_.describe(part.group->client), describe_op(*m.comm, b, m.seq)));
    }
    return;
  }
}

void Collectives::match(Group& g, Part& part) {
  auto [comm, rank] = lookup(g.client, part.op.comm);
  Matched* m = nullptr;
  if (is_p2p(part.op.kind)) {
    const bool send = part.op.kind == wire::CollKind::kSend;
    const auto key = send ? std::make_pair(rank, part.op.peer) : std::make_pair(part.op.peer, rank);
    auto& queue = comm->p2p[key];
    const size_t side = send ? 0 : 1;
    for (auto& candidate : queue) {
      if (candidate->parts[side] == nullptr) {
        m = candidate.get();
        break;
      }
    }
    if (m == nullptr) {
      queue.push_back(std::make_unique<Matched>());
      m = queue.back().get();
      m->comm = comm;
      m->parts.assign(2, nullptr);
    }
    const Part* other = m->parts[1 - side];
    if (other != nullptr && other->op.count * dtype_size(other->op.dtype) !=
                                part.op.count * dtype_size(part.op.dtype)) {
      throw CollectiveError(fmt::format(
          "send/recv sizes disagree on communicator {}: rank {} ({}) {} {} bytes, rank {} ({}) {} "
          "{} bytes",
          comm->id, other->rank, hooks_.describe(other->group->client), kind_name(other->op.kind),
          other->op.count * dtype_size(other->op.dtype), part.rank, hooks_.describe(g.client),
          kind_name(part.op.kind), part.op.count * dtype_size(part.op.dtype)));
    }
    m->parts[side] = &part;
  } else {
    const uint64_t seq = comm->next_seq[rank]++;
    auto& slot = comm->pending[seq];
    if (!slot) {
      slot = std::make_unique<Matched>();
      slot->comm = comm;
      slot->seq = seq;
      slot->parts.assign(comm->nranks, nullptr);
    }
    m = slot.get();
    check_agreement(*m, part);
    m->parts[rank] = &part;
  }
  m->arrived++;
  g.matched.push_back(m);
  g.open++;
}

void Collectives::ready(ClientId, StreamId, uint64_t token, SimTime at) {
  auto it = groups_.find(token);
  if (it == groups_.end()) return;
  Group& g = *it->second;
  g.ready = true;
  g.ready_at = at;
  g.end = at;
  if (g.matched.empty()) return finish_group(g);
  const std::vector<Matched*> matched = g.matched;
  for (Matched* m : matched) try_start(*m);
}

void Collectives::try_start(Matched& m) {
  if (m.started || m.arrived < m.parts.size()) return;
  SimTime start;
  for (const Part* p : m.parts) {
    if (!p->group->ready) return;
    start = std::max(start, p->group->ready_at);
  }
  m.started = true;
  if (start < network_.now()) {
    // A member's stream reached the operation at a time the network has already simulated
    // past (a rank that was not bounding the simulation, e.g. one that had been idle).
    start = network_.now();
    late_starts_++;
  }
  m.start = start;
  // The network may only take the operation once it has simulated everything before `start`
  // (Simulation::progress calls start_due in time order).
  scheduled_.emplace(start, &m);
}

SimTime Collectives::next_start() const {
  return scheduled_.empty() ? SimTime::infinite() : scheduled_.begin()->first;
}

void Collectives::start_due(SimTime now) {
  while (!scheduled_.empty() && scheduled_.begin()->first <= now) {
    Matched& m = *scheduled_.begin()->second;
    scheduled_.erase(scheduled_.begin());
    launch(m);
  }
}

std::vector<net::CollectiveRequest> Collectives::live_requests(const Comm& comm,
                                                               const wire::CollectiveOp& op,
                                                               int src, int dst) const {
  const Bytes bytes(op.count * dtype_size(op.dtype));
  std::vector<net::CollectiveRequest> requests;
  if (is_p2p(op.kind)) {
    const int from = comm.members[src].gpu;
    const int to = comm.members[dst].gpu;
    if (from != to && bytes.count() > 0)
      requests.push_back({net::CollOp::SendRecv, {from, to}, bytes, 0, comm.tuning});
  } else if (auto nop = net_op(op.kind)) {
    if (replicas_.represented_ranks(comm.nranks, comm.spans) > 1 && bytes.count() > 0) {
      net::CollectiveRequest r{*nop, {}, bytes, op.peer, comm.tuning};
      for (const Member& mem : comm.members) r.ranks.push_back(mem.gpu);
      requests.push_back(std::move(r));
    }
  } else {
    // Gather and scatter: every non-root rank exchanges its share with the root.
    const int root = comm.members[op.peer].gpu;
    for (int r = 0; r < comm.nranks; ++r) {
      const int gpu = comm.members[r].gpu;
      if (r == op.peer || bytes.count() == 0) continue;
      requests.push_back({net::CollOp::SendRecv,
                          op.kind == wire::CollKind::kGather ? std::vector<int>{gpu, root}
                                                             : std::vector<int>{root, gpu},
                          bytes, 0, comm.tuning});
    }
  }
  return requests;
}

int Collectives::channels(uint64_t token) {
  auto it = groups_.find(token);
  if (it == groups_.end()) return 0;
  int most = 0;
  for (const auto& part : it->second->parts) {
    const wire::CollectiveOp& op = part->op;
    Comm* comm = nullptr;
    try {
      comm = lookup(it->second->client, op.comm).first;
    } catch (const CollectiveError&) {
      continue;  // the communicator has gone: nothing to plan
    }
    const auto& members = comm->members;
    if (!std::all_of(members.begin(), members.end(), [](const Member& m) { return m.joined; }))
      continue;  // not every rank has joined yet: its GPUs are not all known
    const bool send = op.kind == wire::CollKind::kSend;
    const int src = is_p2p(op.kind) ? (send ? part->rank : op.peer) : 0;
    const int dst = is_p2p(op.kind) ? (send ? op.peer : part->rank) : 0;
    const auto key = std::make_tuple(comm->id, op.kind, op.count * dtype_size(op.dtype), src, dst);
    auto [slot, fresh] = channels_.try_emplace(key, 0);
    if (fresh) {
      // Planned as the network will plan it (replicas included), without starting it.
      for (const auto& live : live_requests(*comm, op, src, dst)) {
        for (const auto& r : replicas_.expand(live, comm->spans))
          slot->second =
              std::max(slot->second, net::plan_collective(network_.topology(), r).channels);
      }
    }
    most = std::max(most, slot->second);
  }
  return most;
}

void Collectives::launch(Matched& m) {
  const SimTime start = m.start;
  const Part& first = *m.parts.front();
  const wire::CollectiveOp& op = first.op;
  const std::vector<net::CollectiveRequest> requests =
      live_requests(*m.comm, op, m.parts[0]->rank, is_p2p(op.kind) ? m.parts[1]->rank : 0);
  if (requests.empty()) return finish(m, start);
  for (const auto& live : requests) {
    for (const auto& r : replicas_.expand(live, m.comm->spans)) {
      net::CollectivePlan plan = network_.plan_next(r);
      note_moving(m, plan, start);
      const net::TransferId id = network_.start(std::move(plan), start);
      m.transfers.push_back(id);
      transfers_[id] = &m;
    }
  }
  m.transfers_left = m.transfers.size();
  m.live_transfers = requests.size();
}

// Each member's GPU serves its share of the plan's data from its HBM while the plan moves it
// at the speed NCCL's model gives alone (plan.predicted, from the start): a network that runs
// slower spreads the same bytes over longer, which this does not follow.
void Collectives::note_moving(const Matched& m, const net::CollectivePlan& plan, SimTime start) {
  if (!hooks_.moving || plan.predicted <= SimTime::zero()) return;
  std::vector<net::GpuId> gpus;
  for (const Part* p : m.parts) gpus.push_back(m.comm->members[p->rank].gpu);
  const std::vector<double> bytes = net::hbm_traffic_bytes(plan, gpus);
  for (size_t i = 0; i < m.parts.size(); ++i) {
    if (bytes[i] > 0) {
      hooks_.moving(m.parts[i]->group->token, start, start + plan.predicted,
                    bytes[i] / plan.predicted.as_seconds());
    }
  }
}

void Collectives::completed(const std::vector<net::Completion>& done) {
  for (const net::Completion& c : done) {
    auto it = transfers_.find(c.id);
    if (it == transfers_.end()) continue;
    Matched& m = *it->second;
    transfers_.erase(it);
    if (--m.transfers_left == 0) finish(m, c.end);
  }
}

void Collectives::finish(Matched& m, SimTime end) {
  const wire::CollectiveOp op = m.parts.front()->op;
  nlohmann::json args = {{"op", kind_name(op.kind)},
                         {"count", op.count},
                         {"bytes", op.count * dtype_size(op.dtype)},
                         {"communicator", m.comm->id},
                         {"ranks", m.comm->nranks}};
  if (!is_p2p(op.kind)) args["seq"] = m.seq;
  if (replicas_.active()) {
    // The whole communicator this operation stands for, and how many copies of it ran.
    args["represented_ranks"] = replicas_.represented_ranks(m.comm->nranks, m.comm->spans);
    args["replica_copies"] = m.comm->spans ? 1 : replicas_.copies();
  }
  if (m.live_transfers == 1) {  // one plan (in each replica): its algorithm and bandwidth
    const net::TransferInfo& info = network_.transfer(m.transfers.front());
    args["algorithm"] = std::string(net::to_string(info.algorithm));
    args["protocol"] = std::string(net::to_string(info.protocol));
    args["channels"] = info.channels;
    args["algbw_GBps"] = info.algbw_gbs();
    args["busbw_GBps"] = info.busbw_gbs();
  }
  deliver_payloads(m);
  for (const net::TransferId id : m.transfers) network_.release(id);
  tally(*m.comm, op);
  std::vector<Group*> groups;
  for (Part* p : m.parts) {
    Group& g = *p->group;
    g.end = std::max(g.end, end);
    if (g.parts.size() == 1) {
      g.args = args;
    } else {
      // A group span lists its operations as they finish, each from this rank's side (a
      // send's or a receive's peer), so that an all-to-all's per-peer sizes are in the trace.
      nlohmann::json one = {{"op", kind_name(p->op.kind)},
                            {"bytes", p->op.count * dtype_size(p->op.dtype)},
                            {"communicator", m.comm->id}};
      if (is_p2p(p->op.kind)) one["peer"] = p->op.peer;
      g.args["ops"].push_back(std::move(one));
    }
    groups.push_back(&g);
  }
  // The operation is done with: take it out of its communicator's queues, keeping it alive
  // (`m` is part of it) until its groups have finished.
  Comm& comm = *m.comm;
  std::unique_ptr<Matched> done;
  if (is_p2p(op.kind)) {
    auto& queue = comm.p2p[{m.parts[0]->rank, m.parts[1]->rank}];
    auto it =
        std::find_if(queue.begin(), queue.end(), [&](const auto& q) { return q.get() == &m; });
    done = std::move(*it);
    queue.erase(it);
  } else {
    done = std::move(comm.pending.extract(m.seq).mapped());
  }
  for (Group* g : groups) {
    if (--g->open == 0) finish_group(*g);
  }
}

// Small operations carry their members' send buffers; each receiver gets the bytes NCCL would
// have written into its receive buffer (wire::op_carries_payload decides which operations do,
// identically in every rank and here).
void Collectives::tally(const Comm& comm, const wire::CollectiveOp& op) {
  const double bytes = static_cast<double>(op.count * dtype_size(op.dtype));
  OpTally& kind = stats_.by_kind[kind_name(op.kind)];
  ++kind.count;
  kind.bytes += bytes;
  CommunicatorStats& c = stats_.by_communicator[comm.id];
  if (c.gpus.empty()) {
    for (const Member& member : comm.members) c.gpus.push_back(member.gpu);
  }
  OpTally& on_comm = c.operations[kind_name(op.kind)];
  ++on_comm.count;
  on_comm.bytes += bytes;
}

void Collectives::deliver_payloads(const Matched& m) {
  const wire::CollectiveOp& op = m.parts.front()->op;
  const int n = is_p2p(op.kind) ? 2 : m.comm->nranks;
  if (!hooks_.deliver ||
      !wire::op_carries_payload(op.kind, op.count, op.dtype, is_p2p(op.kind) ? 1 : n))
    return;
  std::vector<std::span<const std::byte>> sends;
  for (const Part* p : m.parts) sends.emplace_back(p->payload);  // sizes checked in submit()
  // Send/recv pairs: parts are {sender, receiver}; the receiver gets the sender's bytes.
  const auto results = collective_result(op.kind, op.dtype, op.redop, op.count, op.peer, sends);
  if (is_p2p(op.kind)) {
    const Part* recv = m.parts[1];
    if (!results.at(1).empty()) hooks_.deliver(recv->group->client, recv->op.recvbuff, results[1]);
    return;
  }
  for (const Part* p : m.parts) {
    const auto& bytes = results.at(static_cast<size_t>(p->rank));
    if (!bytes.empty()) hooks_.deliver(p->group->client, p->op.recvbuff, bytes);
  }
}

void Collectives::finish_group(Group& g) {
  const uint64_t token = g.token;
  const ClientId client = g.client;
  const StreamId stream = g.stream;
  const SimTime start = g.ready_at, end = g.end;
  const std::string name = g.name;
  const nlohmann::json args = g.args;
  groups_.erase(token);
  stats_.collectives++;
  stats_.time += end - start;
  if (hooks_.span) hooks_.span(client, stream, name, start, end, args);
  engine_.complete_deferred(client, stream, token, start, end,
                            OpDesc{OpKind::kCollective, end - start, std::nullopt, 0, 0});
}

std::vector<int> Collectives::absent_ranks(const Matched& m) const {
  std::vector<int> absent;
  const Part* any = nullptr;
  for (const Part* p : m.parts) {
    if (p != nullptr) any = p;
  }
  for (size_t r = 0; r < m.parts.size(); ++r) {
    if (m.parts[r] != nullptr) continue;
    // Point-to-point parts are {send, recv}: the missing side is the present one's peer.
    absent.push_back(any != nullptr && is_p2p(any->op.kind) ? any->op.peer : static_cast<int>(r));
  }
  return absent;
}

std::optional<std::string> Collectives::first_incomplete(
    const std::function<std::optional<std::string>(const Matched&)>& verdict) const {
  auto each = [&](const Comm& comm) -> std::optional<std::string> {
    for (const auto& [seq, m] : comm.pending) {
      if (m->started || m->arrived == m->parts.size()) continue;
      if (auto msg = verdict(*m)) return msg;
    }
    for (const auto& [key, queue] : comm.p2p) {
      for (const auto& m : queue) {
        if (m->started || m->arrived == m->parts.size()) continue;
        if (auto msg = verdict(*m)) return msg;
      }
    }
    return std::nullopt;
  };
  for (const auto& [uid, comm] : comms_by_uid_) {
    if (auto msg = each(*comm)) return msg;
  }
  for (const auto& comm : split_comms_) {
    if (auto msg = each(*comm)) return msg;
  }
  return std::nullopt;
}

std::optional<std::string> Collectives::overdue(std::chrono::steady_clock::time_point now,
                                                std::chrono::seconds timeout) const {
  return first_incomplete([&](const Matched& m) -> std::optional<std::string> {
    if (now - m.first_arrival < timeout) return std::nullopt;
    const Part* any = nullptr;
    std::vector<std::string> present, absent;
    for (size_t r = 0; r < m.parts.size(); ++r) {
      if (m.parts[r] != nullptr) {
        any = m.parts[r];
        present.push_back(fmt::format("rank {} ({})", m.parts[r]->rank,
                                      hooks_.describe(m.parts[r]->group->client)));
      } else {
        absent.push_back(is_p2p(any ? any->op.kind : wire::CollKind::kAllReduce)
                             ? (r == 0 ? "the sender" : "the receiver")
                             : fmt::format("rank {}", r));
      }
    }
    if (any == nullptr) return std::nullopt;
    return fmt::format("{}: {} waited, {} never arrived", describe_op(*m.comm, any->op, m.seq),
                       fmt::join(present, ", "), fmt::join(absent, ", "));
  });
}

std::optional<Collectives::Stranded> Collectives::stranded() const {
  if (!hooks_.gone) return std::nullopt;
  std::optional<Stranded> found;
  first_incomplete([&](const Matched& m) -> std::optional<std::string> {
    const Part* any = nullptr;
    for (const Part* p : m.parts) {
      if (p != nullptr) any = p;
    }
    if (any == nullptr) return std::nullopt;
    for (int rank : absent_ranks(m)) {
      if (rank < 0 || rank >= static_cast<int>(m.comm->members.size())) continue;
      const Member& member = m.comm->members[static_cast<size_t>(rank)];
      if (!member.joined || !hooks_.gone(member.client)) continue;
      found = Stranded{member.client, rank, describe_op(*m.comm, any->op, m.seq)};
      return found->op;
    }
    return std::nullopt;
  });
  return found;
}

std::vector<std::string> Collectives::waiting() const {
  std::vector<std::string> lines;
  auto describe_missing = [&](const Matched& m, const wire::CollectiveOp& op) {
    std::vector<std::string> absent, not_ready;
    for (size_t r = 0; r < m.parts.size(); ++r) {
      if (m.parts[r] == nullptr) {
        absent.push_back(is_p2p(op.kind) ? (r == 0 ? "the sender" : "the receiver")
                                         : fmt::format("rank {}", r));
      } else if (!m.parts[r]->group->ready) {
        not_ready.push_back(fmt::format("rank {} ({})", m.parts[r]->rank,
                                        hooks_.describe(m.parts[r]->group->client)));
      }
    }
    std::string line = describe_op(*m.comm, op, m.seq);
    if (!absent.empty()) line += fmt::format(": never called by {}", fmt::join(absent, ", "));
    if (!not_ready.empty())
      line += fmt::format("; queued behind earlier work on {}", fmt::join(not_ready, ", "));
    lines.push_back(line);
  };
  auto each_comm = [&](const Comm& comm) {
    for (const auto& [seq, m] : comm.pending) {
      const Part* any = nullptr;
      for (const Part* p : m->parts) any = any ? any : p;
      if (any != nullptr && !m->started) describe_missing(*m, any->op);
    }
    for (const auto& [key, queue] : comm.p2p) {
      for (const auto& m : queue) {
        const Part* any = m->parts[0] ? m->parts[0] : m->parts[1];
        if (any != nullptr && !m->started) describe_missing(*m, any->op);
      }
    }
    if (!comm.init_waiters.empty()) {
      lines.push_back(fmt::format("communicator {}: {} of {} ranks have called ncclCommInitRank",
                                  comm.id, comm.init_waiters.size(), comm.nranks));
    }
  };
  for (const auto& [uid, comm] : comms_by_uid_) each_comm(*comm);
  for (const auto& comm : split_comms_) each_comm(*comm);
  return lines;
}

}  // namespace phantora::sim
