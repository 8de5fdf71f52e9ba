// Named presets (embedded from netmodel/data/) and the --hosts/--gpus-per-host/--gpu shortcut:
// the network of the system the GPU ships in (gpu_systems.cpp).
#include <fmt/format.h>

#include "phantora/netmodel/gpu_systems.hpp"
#include "phantora/netmodel/topology.hpp"
#include "topology_presets_data.hpp"

namespace phantora::net {

namespace {

TopologySpec preset_spec(std::string_view name) {
  for (const auto& p : detail::embedded_presets())
    if (p.name == name) return Topology::parse_spec(p.toml, fmt::format("preset:{}", p.name));
  throw TopologyError(fmt::format("no topology preset named '{}' (have: {})", name,
                                  fmt::join(Topology::preset_names(), ", ")));
}

}  // namespace

std::vector<std::string> Topology::preset_names() {
  std::vector<std::string> names;
  for (const auto& p : detail::embedded_presets()) names.emplace_back(p.name);
  return names;
}

Topology Topology::preset(std::string_view name, int hosts) {
  TopologySpec spec = preset_spec(name);
  spec.hosts = hosts;
  spec.sources["cluster.hosts"] = "--hosts";
  return Topology(std::move(spec));
}

Topology Topology::for_cluster(int hosts, int gpus_per_host, std::string_view gpu_model) {
  const GpuSystem* system = system_of_gpu(gpu_model);
  TopologySpec spec = preset_spec(system != nullptr ? system->topology : "ethernet-2tier");
  spec.hosts = hosts;
  spec.sources["cluster.hosts"] = "--hosts";
  if (system == nullptr) {
    spec.gpu_model = gpu_model;
    spec.sources["cluster.gpu_model"] = fmt::format(
        "--gpu {}: no system of its own in gpu_systems.cpp, so a generic cluster", gpu_model);
  }
  if (gpus_per_host != spec.gpus_per_host) {
    spec.set_gpus_per_host(gpus_per_host,
                           "--gpus-per-host, with the preset's NICs per GPU and default rails");
    spec.name += fmt::format("-{}gpu", gpus_per_host);
  }
  return Topology(std::move(spec));
}

}  // namespace phantora::net
