// What a run's options resolve to — the cluster, the GPU, the cost model, the simulation's
// configuration — checked before anything is written or started. Shared by `phantora run`
// (every launcher) and `phantora serve`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/netmodel/topology.hpp"
#include "phantora/simcore/kernels_cost_provider.hpp"
#include "phantora/simcore/simulation.hpp"
#include "run_command.hpp"
#include "step_times.hpp"

namespace phantora::tools {

inline constexpr std::string_view kDefaultGpu = "h100";

// The cluster: from the topology file where one is given (flags may repeat its figures but not
// contradict them), else from the flags on a preset: the one named by --topology, or the network
// of the system the GPU ships in (netmodel/src/gpu_systems.cpp).
struct Cluster {
  int hosts = 1;
  int gpus_per_host = 8;
  std::string gpu{kDefaultGpu};                   // the GPU catalog's key
  std::shared_ptr<const net::Topology> topology;  // never null once resolved
};

struct PreparedRun {
  Cluster cluster;
  const kernels::GpuPreset* gpu = nullptr;
  sim::SimulationConfig config{};  // everything but the token
  std::unique_ptr<sim::KernelsCostProvider> costs{};
  StepTimeScanner scanner{""};
  std::optional<nlohmann::json> baseline{};
};

// Throws std::invalid_argument (or the inputs' own errors) for anything wrong with the options;
// reads the inputs but writes nothing.
PreparedRun prepare_run(const RunOptions& options);

// Checks the cluster options alone (what `--launcher k8s` hands on to the daemon).
Cluster resolve_cluster(const RunOptions& options);

}  // namespace phantora::tools
