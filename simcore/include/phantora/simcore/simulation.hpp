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
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "phantora/protocol.hpp"
#include "phantora/simcore/cost_provider.hpp"
#include "phantora/simcore/engine.hpp"
#include "phantora/simcore/run_stats.hpp"
#include "phantora/simcore/trace_writer.hpp"

namespace phantora::sim {

// A malformed or unexpected message. The connection that sent it is closed; the daemon lives on.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SimulationConfig {
  int hosts = 1;
  int gpus_per_host = 1;
  std::string gpu_name;
  wire::DeviceSpec device{};
  wire::CpuTimeMode cpu_time = wire::CpuTimeMode::kMeasured;
  SimTime per_call_cost = SimTime::us(1);
  SimTime launch_latency = SimTime::us(2);
  std::string token;
  std::filesystem::path trace_path;  // empty: no trace
};

class Simulation {
 public:
  Simulation(SimulationConfig config, CostProvider& costs);
  ~Simulation();

  // A client introduced itself; returns the welcome to send back. Throws ProtocolError on a bad
  // token or host index.
  wire::Welcome hello(const wire::Hello& hello);
  // Decodes and applies one batch of records; requests that can be answered append a reply.
  void batch(ClientId client, std::span<const std::byte> payload,
             std::vector<wire::Reply>& replies);
  void bye(ClientId client, SimTime host_time);
  void disconnected(ClientId client, std::string_view why);

  // Ends the run: closes the trace and returns the figures for the report.
  const RunStats& finish();
  const RunStats& stats() const { return stats_; }
  const SimulationConfig& config() const { return config_; }
  size_t connected_clients() const;

 private:
  struct GraphNodeCost {
    SimTime cost;
    std::vector<uint32_t> deps;
  };
  struct Client {
    ClientInfo info;
    std::map<uint32_t, std::string> kernels;
    std::map<std::string, uint32_t> synthetic_labels;  // GEMM shapes and other library calls
    std::map<uint64_t, std::vector<wire::GraphNode>> graphs;
    std::map<uint64_t, std::pair<int, uint64_t>> allocations;  // address -> (device, bytes)
    std::map<StreamId, int> stream_device;
    std::map<StreamId, bool> stream_announced;
    bool connected = true;
  };
  class TraceObserver;

  Client& client(ClientId id);
  void apply(ClientId id, Client& c, const wire::RecordHeader& h, std::span<const std::byte> body,
             std::vector<wire::Reply>& replies);
  StreamId stream_for(ClientId id, Client& c, uint64_t stream, int device);
  void check_device(const Client& c, int device) const;
  SimTime graph_cost(Client& c, uint64_t graph);
  uint32_t gemm_label(Client& c, const wire::Gemm& g);
  void blocking(ClientId id, const wire::RecordHeader& h, SimTime done, std::string_view what,
                std::vector<wire::Reply>& replies);
  void note_host_time(Client& c, SimTime t);
  int global_gpu(const Client& c, int device) const;

  SimulationConfig config_;
  CostProvider& costs_;
  std::unique_ptr<TraceWriter> trace_;
  std::unique_ptr<TraceObserver> observer_;
  Engine engine_;
  std::vector<Client> clients_;
  RunStats stats_;
  bool finished_ = false;
};

}  // namespace phantora::sim
