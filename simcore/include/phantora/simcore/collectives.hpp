// NCCL communicators and collectives in the daemon: membership agreed from the unique id,
// operations matched in order per communicator (and send/recv in FIFO order per peer pair),
// checked for agreement, started when every member's stream reaches them, and timed by the
// network model.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "phantora/netmodel/network_sim.hpp"
#include "phantora/protocol.hpp"
#include "phantora/simcore/engine.hpp"
#include "phantora/simcore/replicas.hpp"

namespace phantora::sim {

// Members of a collective disagree, or a call names something that does not exist. The run
// cannot continue; the message names the ranks and the operation.
class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Operations of one kind, each counted once (not once per member).
struct OpTally {
  uint64_t count = 0;
  double bytes = 0;  // nccl-tests S, summed
};

// What ran on one communicator: which GPUs it joins tells a tensor-parallel group from a
// data-parallel one, and its operations what each group was used for.
struct CommunicatorStats {
  std::vector<int> gpus;  // global GPU of each member, by rank
  std::map<std::string, OpTally> operations;
};

struct CommStats {
  uint64_t collectives = 0;  // per rank, counted once per member
  SimTime time;              // summed over members of time on stream
  std::map<std::string, OpTally> by_kind;
  std::map<uint64_t, CommunicatorStats> by_communicator;  // by communicator id
};

class Collectives {
 public:
  struct Hooks {
    // Answers a client's request (comm init, split).
    std::function<void(ClientId, uint64_t request, SimTime, int32_t, int32_t)> reply;
    // Global GPU of a client's device.
    std::function<int(ClientId, int device)> global_gpu;
    // Describes a client for messages: "host 1 pid 4242 (rank 3)".
    std::function<std::string(ClientId)> describe;
    // A span for the trace of rank `client` on `stream`.
    std::function<void(ClientId, StreamId, const std::string& name, SimTime start, SimTime end,
                       const nlohmann::json& args)>
        span;
    // Writes a small collective's result into a client's receive buffer.
    std::function<void(ClientId, uint64_t recvbuff, const std::vector<std::byte>& bytes)> deliver;
    // Whether a client has gone (said goodbye or disconnected).
    std::function<bool(ClientId)> gone;
    // A group was taken, before the engine can make it ready: its token, client and device.
    std::function<void(uint64_t token, ClientId, int device)> submitted;
    // A group's data moves through its member GPU's HBM at `bytes_per_s` from `from` to `to`
    // (netmodel's hbm_traffic.hpp); once per transfer that touches the GPU. May be empty.
    std::function<void(uint64_t token, SimTime from, SimTime to, double bytes_per_s)> moving;
  };

  // `max_ranks`: the live cluster's GPUs; no communicator can be larger. `replicas`: the
  // copies of the live slice whose traffic is simulated too (replicas.hpp).
  Collectives(Engine& engine, net::NetworkSimulator& network, int max_ranks, Hooks hooks,
              Replicas replicas = {});

  void comm_init(ClientId client, uint64_t request, SimTime host_time, const wire::CommInit& init);
  void comm_split(ClientId client, uint64_t request, SimTime host_time,
                  const wire::CommSplit& split);
  void comm_destroy(ClientId client, const wire::CommRef& ref);
  // `payloads[i]` are the send-buffer bytes attached to ops[i] (empty: none).
  void submit(ClientId client, SimTime host_time, const wire::CollectiveHeader& header,
              std::span<const wire::CollectiveOp> ops,
              std::vector<std::vector<std::byte>> payloads);

  // From the engine: a group reached the head of its stream.
  void ready(ClientId client, StreamId stream, uint64_t token, SimTime at);
  // The CTAs (one per channel) NCCL launches for a group on its member's GPU: the most any of
  // its operations is planned with (NCCL runs a group as one kernel). 0 for an unknown token.
  int channels(uint64_t token);
  // The earliest time an operation whose members are all ready is due to start on the network
  // (infinite: none). The caller advances the network to it first, then calls start_due.
  SimTime next_start() const;
  void start_due(SimTime now);
  // Network transfers that completed (from NetworkSimulator::advance_to).
  void completed(const std::vector<net::Completion>& done);

  // Human-readable lines for every operation still waiting for members; for deadlock and
  // timeout messages.
  std::vector<std::string> waiting() const;
  // The first operation that some members reached more than `timeout` ago (wall clock) while
  // others never arrived, described for an error message.
  std::optional<std::string> overdue(std::chrono::steady_clock::time_point now,
                                     std::chrono::seconds timeout) const;
  // The first operation that waits for a member whose process has ended: it can never
  // complete. `op` describes it; `rank` is the missing member's rank in its communicator.
  struct Stranded {
    ClientId client = 0;
    int rank = 0;
    std::string op;
  };
  std::optional<Stranded> stranded() const;
  const CommStats& stats() const { return stats_; }
  uint64_t late_starts() const { return late_starts_; }

 private:
  struct Member {
    ClientId client = 0;
    uint64_t handle = 0;
    int device = 0;
    int gpu = 0;
    bool joined = false;
  };
  struct PendingInit {
    ClientId client;
    uint64_t request;
    SimTime host_time;
  };
  struct Comm;
  struct Group;
  struct Part {
    Group* group = nullptr;
    wire::CollectiveOp op{};
    int rank = 0;
    std::vector<std::byte> payload;
  };
  // One operation matched across its members.
  struct Matched {
    Comm* comm = nullptr;
    uint64_t seq = 0;          // collectives: sequence number; p2p: 0
    std::vector<Part*> parts;  // by rank (collective) or {send, recv}
    size_t arrived = 0;
    bool started = false;
    std::vector<net::TransferId> transfers;
    size_t transfers_left = 0;
    size_t live_transfers = 0;  // before replicas were added (each then has a copy per replica)
    SimTime start;
    std::chrono::steady_clock::time_point first_arrival = std::chrono::steady_clock::now();
  };
  struct Comm {
    uint64_t id = 0;
    int nranks = 0;
    bool spans = false;  // data-parallel: stands for its members in every replica too
    std::vector<Member> members;
    std::vector<uint64_t> next_seq;                                           // per rank
    std::map<uint64_t, std::unique_ptr<Matched>> pending;                     // by seq
    std::map<std::pair<int, int>, std::deque<std::unique_ptr<Matched>>> p2p;  // (src, dst)
    net::TuningOverrides tuning;
    std::vector<PendingInit> init_waiters;
    SimTime latest_join;
    // Splits in progress, by the ordinal of the split call on this communicator.
    std::vector<uint64_t> split_calls;  // per rank: how many splits it has called
    std::map<uint64_t, std::vector<std::optional<std::pair<wire::CommSplit, PendingInit>>>> splits;
  };
  struct Group {
    uint64_t token = 0;
    ClientId client = 0;
    StreamId stream = 0;
    std::vector<std::unique_ptr<Part>> parts;
    std::vector<Matched*> matched;
    size_t open = 0;  // matched operations not yet finished
    bool ready = false;
    SimTime ready_at;
    SimTime end;
    std::string name;
    nlohmann::json args = nlohmann::json::object();
  };

  // Tells hooks_.moving what each member's GPU serves of `plan`, started at `start`.
  void note_moving(const Matched& m, const net::CollectivePlan& plan, SimTime start);
  std::pair<Comm*, int> lookup(ClientId client, uint64_t handle);
  void join(Comm& comm, int rank, ClientId client, uint64_t handle, int device, uint64_t request,
            SimTime host_time);
  void match(Group& g, Part& part);
  void check_agreement(const Matched& m, const Part& part) const;
  void try_start(Matched& m);
  void launch(Matched& m);
  // The network requests of an operation as the live ranks see it (before replicas); for a
  // send/receive pair, `src` and `dst` are the communicator ranks of the sender and receiver.
  std::vector<net::CollectiveRequest> live_requests(const Comm& comm, const wire::CollectiveOp& op,
                                                    int src, int dst) const;
  void finish(Matched& m, SimTime end);
  void tally(const Comm& comm, const wire::CollectiveOp& op);
  void finish_group(Group& g);
  void deliver_payloads(const Matched& m);
  std::string describe_op(const Comm& comm, const wire::CollectiveOp& op, uint64_t seq) const;
  // The first unstarted operation, over every communicator, for which `verdict` has something
  // to say.
  std::optional<std::string> first_incomplete(
      const std::function<std::optional<std::string>(const Matched&)>& verdict) const;
  // Communicator ranks of the members an operation still waits for.
  std::vector<int> absent_ranks(const Matched& m) const;

  Engine& engine_;
  net::NetworkSimulator& network_;
  int max_ranks_;
  Hooks hooks_;
  Replicas replicas_;
  uint64_t next_comm_ = 1;
  uint64_t next_token_ = 1;
  // Channels planned per (communicator, kind, bytes, sender, receiver): what channels() asks.
  std::map<std::tuple<uint64_t, wire::CollKind, uint64_t, int, int>, int> channels_;
  std::map<std::array<uint8_t, wire::kUniqueIdBytes>, std::unique_ptr<Comm>> comms_by_uid_;
  std::vector<std::unique_ptr<Comm>> split_comms_;
  std::map<std::pair<ClientId, uint64_t>, std::pair<Comm*, int>> handles_;
  std::map<uint64_t, std::unique_ptr<Group>> groups_;  // by token
  std::map<net::TransferId, Matched*> transfers_;
  std::multimap<SimTime, Matched*> scheduled_;  // ready operations not yet on the network
  CommStats stats_;
  uint64_t late_starts_ = 0;
};

}  // namespace phantora::sim
