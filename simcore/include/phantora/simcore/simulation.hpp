// One simulated run: the clients (processes of the job), their GPUs, the engine, the cost
// provider, the trace and the report. Transport-agnostic: the server feeds it decoded frames;
// tests can drive it directly.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "phantora/netmodel/network_sim.hpp"
#include "phantora/netmodel/topology.hpp"
#include "phantora/protocol.hpp"
#include "phantora/simcore/collectives.hpp"
#include "phantora/simcore/cost_provider.hpp"
#include "phantora/simcore/engine.hpp"
#include "phantora/simcore/gpu_sharing.hpp"
#include "phantora/simcore/interval_union.hpp"
#include "phantora/simcore/protocol_error.hpp"
#include "phantora/simcore/run_stats.hpp"
#include "phantora/simcore/trace_writer.hpp"
#include "phantora/simcore/work_pricing.hpp"

namespace phantora::sim {

class RunAccounting;
class OpTrace;

struct SimulationConfig {
  int hosts = 1;
  int gpus_per_host = 1;
  std::string gpu_name;
  wire::DeviceSpec device{};
  // The HBM bandwidth kernels reach (kernels-db's memory-bound plateau), which they share with
  // NCCL's copies (gpu_sharing.hpp); 0: HBM never slows a kernel beside a collective.
  double hbm_bytes_per_s = 0;
  wire::CpuTimeMode cpu_time = wire::CpuTimeMode::kMeasured;
  double host_speed = 1;  // measured mode: CPU time is divided by it (the shim applies it)
  SimTime per_call_cost = SimTime::us(1);
  SimTime launch_latency = SimTime::us(2);
  std::string launch_latency_from = "default";  // where launch_latency came from (the report)
  std::string token;
  std::filesystem::path trace_path;  // empty: no trace
  // A collective whose members have not all arrived after this much wall-clock time ends the
  // run (0: never).
  std::chrono::seconds collective_timeout{300};
  // The cluster's network; null: the preset matching hosts, GPUs per host and GPU model. With
  // replicas, it has replicas x hosts hosts.
  std::shared_ptr<const net::Topology> topology;
  // `--represent-dp`: the job runs on `hosts` hosts, one of `replicas` data-parallel slices of
  // the simulated cluster (replicas.hpp); 1: everything is live.
  int replicas = 1;
  DpCommRule dp_comms;
  int represented_hosts() const { return hosts * replicas; }
};

using ReplySink = std::function<void(ClientId, const wire::Reply&)>;
using PayloadSink = std::function<void(ClientId, uint64_t recvbuff, const std::vector<std::byte>&)>;
using ProgressSink = std::function<void(ClientId, const wire::Progress&)>;

class Simulation {
 public:
  Simulation(SimulationConfig config, CostProvider& costs);
  ~Simulation();

  // A client introduced itself; returns the welcome to send back. Throws ProtocolError on a bad
  // token or host index.
  wire::Welcome hello(const wire::Hello& hello);
  // Where replies go that are answered later than the batch that asked (a sync waiting for a
  // collective, say). Replies known while a batch is applied go into that batch's vector.
  void set_reply_sink(ReplySink sink) { sink_ = std::move(sink); }
  // Where the results of small collectives go (frames of their own, sent at once).
  void set_payload_sink(PayloadSink sink) { payload_sink_ = std::move(sink); }
  // Where a client is told that the simulation waits at its own bound while it waits for
  // answers (wire::Progress), each time that time moves or it has read requests since.
  void set_progress_sink(ProgressSink sink) { progress_sink_ = std::move(sink); }
  // Told when the job cannot go on: a rank vanished, a collective timed out.
  void set_failure_sink(std::function<void(const std::string&)> sink) {
    failure_sink_ = std::move(sink);
  }
  // Called periodically by the server with the wall clock.
  void check_timeouts(std::chrono::steady_clock::time_point now);
  // Decodes and applies one batch of records; requests that can be answered append a reply.
  void batch(ClientId client, std::span<const std::byte> payload,
             std::vector<wire::Reply>& replies);
  // `how`: "exited" (status 0), "exited with status N", "killed by SIGABRT"... (docs/report.md)
  void bye(ClientId client, SimTime host_time, std::string how = "exited",
           uint64_t lapsed_handoffs = 0);
  void disconnected(ClientId client, std::string_view why);

  // Ends the run: closes the trace and returns the figures for the report.
  const RunStats& finish();
  const RunStats& stats() const;
  const net::NetworkSimulator& network() const { return network_; }
  const Collectives& collectives() const { return collectives_; }
  // Lines describing what is still waiting (collectives missing members, blocked ranks).
  std::vector<std::string> waiting() const;
  // For a run stopped from outside (its wall-clock limit): where the network stands, how far
  // causality lets it run and which client holds it there, each client's state, and waiting().
  std::vector<std::string> stall_report() const;
  const SimulationConfig& config() const { return config_; }
  size_t connected_clients() const;

 private:
  struct Client {
    ClientInfo info;
    WorkPricing::KernelNames kernels;
    std::map<std::string, uint32_t> synthetic_labels;  // GEMM shapes and other library calls
    std::map<uint64_t, std::vector<wire::GraphNode>> graphs;
    std::map<uint64_t, std::pair<int, uint64_t>> allocations;  // address -> (device, bytes)
    std::map<StreamId, int> stream_device;
    std::map<StreamId, bool> stream_announced;
    bool connected = true;
    int outstanding = 0;    // requests not answered yet: a thread of the client is blocked in one
    bool idle = false;      // waiting outside CUDA (see wire::kHostIdle)
    std::string how_ended;  // for messages: "exited with status 3", "ended without saying..."
    // The earliest time the client can still submit work, as its last record said
    // (wire::RecordHeader::bound_ps), and the replies it has not yet said it took up: a
    // thread woken by one runs again from the reply's time (wire::kHostResumed).
    SimTime bound;
    std::map<uint64_t, SimTime> resuming;
    // Requests whose thread went on before their reply (a query, wire::kHostResumed first):
    // their replies bound nothing.
    std::set<uint64_t> gone_on;
    uint64_t last_request = 0;                    // the latest request id read from the client
    SimTime answers_from_sent = SimTime::zero();  // the last wire::Progress sent, and
    uint64_t through_sent = 0;                    // the requests it covered
  };
  class OpObserver;

  Client& client(ClientId id);
  void apply(ClientId id, Client& c, const wire::RecordHeader& h, std::span<const std::byte> body);
  StreamId stream_for(ClientId id, Client& c, uint64_t stream, int device);
  void check_device(const Client& c, int device) const;
  uint32_t gemm_label(Client& c, const wire::Gemm& g, const std::string& signature);
  void note_host_time(Client& c, SimTime t);
  void reply(ClientId client, uint64_t request, SimTime time, int32_t v0 = 0, int32_t v1 = 0);
  void await(ClientId id, const wire::RecordHeader& h, std::string what,
             const std::function<void(Engine::Callback)>& when);
  // The earliest time `c` can still submit work: its last-sent bound, lowered by the answers
  // it has not yet taken up (infinite: every thread waits).
  static SimTime client_bound(const Client& c);
  // Lets the network run as far as causality allows: no client can still submit anything that
  // starts before the returned time.
  SimTime safe_time() const;
  void check_stranded();
  std::string still_waiting() const;  // "; still waiting:\n  ..." or ""
  void progress();
  void run_network(bool drain);
  // Tells each client that holds the network at its own bound while it waits for answers how
  // far the network has got (wire::Progress).
  void tell_progress();
  // Submits a kernel: deferred while it shares its GPU with a collective (gpu_sharing.hpp).
  void submit_kernel(ClientId id, StreamId s, int device, SimTime at, const OpDesc& op,
                     uint32_t ctas, double hbm_bytes);
  std::string describe(ClientId id) const;
  int global_gpu(const Client& c, int device) const;

  SimulationConfig config_;
  // The parts a completed or submitted operation goes through: its price, the run's
  // statistics, its trace span (src/run_accounting.hpp, src/op_trace.hpp).
  WorkPricing pricing_;
  std::unique_ptr<TraceWriter> trace_;
  std::unique_ptr<RunAccounting> accounting_;
  std::unique_ptr<OpTrace> op_trace_;
  std::unique_ptr<OpObserver> observer_;
  Engine engine_;
  net::NetworkSimulator network_;
  GpuSharing sharing_;  // before collectives_, whose hooks reach it
  Collectives collectives_;
  std::vector<Client> clients_;
  ReplySink sink_;
  int expected_ranks_ = 0;    // WORLD_SIZE announced by the launcher, 0: unknown
  std::set<int> ranks_seen_;  // RANKs that have connected
  std::chrono::steady_clock::time_point last_rank_joined_ = std::chrono::steady_clock::now();
  PayloadSink payload_sink_;
  ProgressSink progress_sink_;
  std::function<void(const std::string&)> failure_sink_;
  ClientId batch_client_ = 0;
  std::vector<wire::Reply>* batch_replies_ = nullptr;
  bool finished_ = false;
  bool departed_ = false;           // some client has gone (said goodbye or disconnected)
  bool stranded_reported_ = false;  // the run was ended for an operation it can never finish
  // A rank that used its GPU and vanished, before anything was seen to wait for it.
  struct Vanished {
    ClientId client;
    std::chrono::steady_clock::time_point at;
  };
  std::optional<Vanished> vanished_;
};

}  // namespace phantora::sim
