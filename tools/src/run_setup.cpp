#include "run_setup.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "phantora/kernels/analytical_model.hpp"
#include "phantora/kernels/cost_model.hpp"
#include "report_compare.hpp"

namespace phantora::tools {
namespace {

wire::CpuTimeMode parse_cpu_time(const std::string& s) {
  if (const std::optional<wire::CpuTimeMode> m = wire::parse_cpu_time(s)) return *m;
  throw std::invalid_argument(
      fmt::format("--cpu-time must be measured, model or zero (got '{}')", s));
}

std::shared_ptr<const net::Topology> load_topology(const std::string& name_or_file, int hosts) {
  if (std::filesystem::exists(name_or_file)) {
    return std::make_shared<const net::Topology>(net::Topology::from_file(name_or_file));
  }
  const std::vector<std::string> presets = net::Topology::preset_names();
  if (std::find(presets.begin(), presets.end(), name_or_file) == presets.end()) {
    throw std::invalid_argument(fmt::format("--topology {}: no such file, and not a preset ({})",
                                            name_or_file, fmt::join(presets, ", ")));
  }
  return std::make_shared<const net::Topology>(net::Topology::preset(name_or_file, hosts));
}

// The GPU catalog's key for a --gpu value (aliases and case allowed); DataError lists the names.
std::string gpu_key(const std::string& name) {
  return kernels::GpuCatalog::builtin().find(name).key;
}

// A preset's own GPU where the catalog knows it (dgx-a100: a100-80gb); ethernet-2tier names
// none and gets the default.
std::string preset_gpu(const net::TopologySpec& spec) {
  const kernels::GpuPreset* p = kernels::GpuCatalog::builtin().try_find(spec.gpu_model);
  return p != nullptr ? p->key : std::string(kDefaultGpu);
}

}  // namespace

// With --represent-dp N the topology describes the whole simulated cluster (N x the live hosts);
// `hosts` stays the live count, the hosts the job's command runs on. The topology is always
// resolved here, so report.json can name it and its figures' sources.
Cluster resolve_cluster(const RunOptions& o) {
  Cluster c;
  const int replicas = o.represent_dp;
  if (replicas < 1) throw std::invalid_argument("--represent-dp must be at least 1");
  const bool is_file = o.topology && std::filesystem::exists(*o.topology);
  net::TopologySpec spec;
  if (o.topology && is_file) {
    auto topo = load_topology(*o.topology, 0);
    auto agree = [&](const char* flag, auto given, auto in_file) {
      if (given && *given != in_file) {
        throw std::invalid_argument(fmt::format("{} {} contradicts the topology file {} ({})", flag,
                                                *given, *o.topology, in_file));
      }
    };
    if (topo->hosts() % replicas != 0) {
      throw std::invalid_argument(
          fmt::format("--represent-dp {}: the topology file {} has {} hosts, not a multiple of it",
                      replicas, o.topology->c_str(), topo->hosts()));
    }
    agree(replicas > 1 ? "--hosts (live hosts: the file's hosts / --represent-dp)" : "--hosts",
          o.hosts, topo->hosts() / replicas);
    agree("--gpus-per-host", o.gpus_per_host, topo->gpus_per_host());
    c.hosts = topo->hosts() / replicas;
    c.gpus_per_host = topo->gpus_per_host();
    c.gpu = gpu_key(o.gpu.value_or(topo->gpu_model()));
    spec = topo->spec();
  } else if (o.topology) {
    // A preset: its fabric with the flags' counts; its host size and GPU unless they are given.
    c.hosts = o.hosts.value_or(1);
    spec = load_topology(*o.topology, c.hosts * replicas)->spec();
    c.gpus_per_host = o.gpus_per_host.value_or(spec.gpus_per_host);
    c.gpu = o.gpu ? gpu_key(*o.gpu) : preset_gpu(spec);
    if (c.gpus_per_host >= 1)
      spec.set_gpus_per_host(c.gpus_per_host,
                             "--gpus-per-host, with the preset's NICs per GPU and default rails");
  } else {
    // The network of the system the GPU ships in (netmodel/src/gpu_systems.cpp).
    c.hosts = o.hosts.value_or(1);
    c.gpus_per_host = o.gpus_per_host.value_or(8);
    c.gpu = gpu_key(o.gpu.value_or(std::string(kDefaultGpu)));
    if (c.hosts >= 1 && c.gpus_per_host >= 1)
      spec = net::Topology::for_cluster(c.hosts * replicas, c.gpus_per_host, c.gpu).spec();
  }
  if (c.hosts < 1) throw std::invalid_argument("--hosts must be at least 1");
  if (c.gpus_per_host < 1 || c.gpus_per_host > wire::kMaxDevicesPerHost - 1) {
    throw std::invalid_argument(
        fmt::format("--gpus-per-host must be between 1 and {}", wire::kMaxDevicesPerHost - 1));
  }
  if (spec.gpu_model != c.gpu) {
    spec.gpu_model = c.gpu;
    if (o.gpu) spec.sources["cluster.gpu_model"] = "--gpu";
  }
  if (o.nic_gbytes_per_s) {
    if (!(*o.nic_gbytes_per_s > 0))
      throw std::invalid_argument("--nic-gbytes-per-s must be positive");
    spec.nic_bandwidth = Bandwidth::gbytes_per_s(*o.nic_gbytes_per_s);
    spec.sources["nic.bandwidth_gbytes_per_s"] = "--nic-gbytes-per-s";
  }
  if (o.oversubscription) {
    if (!(*o.oversubscription >= 1))
      throw std::invalid_argument("--oversubscription must be at least 1");
    spec.oversubscription = *o.oversubscription;
    spec.sources["spine.oversubscription"] = "--oversubscription";
  }
  c.topology = std::make_shared<const net::Topology>(std::move(spec));
  return c;
}

PreparedRun prepare_run(const RunOptions& o) {
  PreparedRun p{.cluster = resolve_cluster(o), .scanner = StepTimeScanner(o.step_time_regex)};
  const sim::DpCommRule dp_comms = sim::DpCommRule::parse(o.dp_comms);
  if (o.launch_latency_us.value_or(0) < 0 || o.call_cost_us < 0) {
    throw std::invalid_argument("--launch-latency-us and --call-cost-us must not be negative");
  }
  p.gpu = &kernels::GpuCatalog::builtin().find(p.cluster.gpu);
  if (o.max_memory_growth && !o.baseline) {
    throw std::invalid_argument(
        "--max-memory-growth goes with --baseline (the report to compare peak memory with)");
  }
  if (o.baseline) p.baseline = load_report(*o.baseline);
  kernels::KernelTimes pinned;
  if (o.kernel_times) pinned = kernels::KernelTimes::from_csv(*o.kernel_times);
  kernels::CostModel cost_model(kernels::CostParams::builtin(), std::move(pinned));
  // The launch latency: the option, else the database's measured round trip for this GPU.
  double launch_latency_us = o.launch_latency_us.value_or(kDefaultLaunchLatencyUs);
  std::string launch_latency_from = o.launch_latency_us ? "--launch-latency-us" : "default";
  if (o.kernel_db) {
    auto db = kernels::load_kernel_db(*o.kernel_db, p.gpu->key);
    if (!o.launch_latency_us && db->launch_round_trip_us()) {
      launch_latency_us = *db->launch_round_trip_us();
      launch_latency_from = "kernel database (measured launch round trip)";
    }
    cost_model.set_database(std::move(db));
  }
  p.costs = std::make_unique<sim::KernelsCostProvider>(std::move(cost_model), *p.gpu);

  sim::SimulationConfig& config = p.config;
  config.hosts = p.cluster.hosts;
  config.gpus_per_host = p.cluster.gpus_per_host;
  config.gpu_name = p.gpu->key;
  config.device = kernels::to_device_spec(*p.gpu);
  config.hbm_bytes_per_s =
      kernels::hbm_plateau_bytes_per_s(*p.gpu, kernels::ModelParams::builtin());
  config.cpu_time = parse_cpu_time(o.cpu_time);
  if (o.host_speed != 1 && config.cpu_time != wire::CpuTimeMode::kMeasured) {
    throw std::invalid_argument(fmt::format(
        "--host-speed {} scales measured CPU time; it has no effect with --cpu-time {} (use "
        "--call-cost-us to set model mode's cost per call)",
        o.host_speed, o.cpu_time));
  }
  config.host_speed = o.host_speed;
  config.per_call_cost = SimTime::us(o.call_cost_us);
  config.launch_latency = SimTime::us(launch_latency_us);
  config.launch_latency_from = launch_latency_from;
  config.trace_path = o.out / "trace.json";
  config.topology = p.cluster.topology;
  config.collective_timeout = std::chrono::seconds(o.collective_timeout_s);
  config.replicas = o.represent_dp;
  config.dp_comms = dp_comms;
  return p;
}

}  // namespace phantora::tools
