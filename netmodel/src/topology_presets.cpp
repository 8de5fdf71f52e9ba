// Named presets (embedded from netmodel/data/) and the --hosts/--gpus-per-host/--gpu shortcut.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
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
  return Topology(std::move(spec));
}

Topology Topology::for_cluster(int hosts, int gpus_per_host, std::string_view gpu_model) {
  const std::string model = lower(gpu_model);
  std::string preset_name = "ethernet-2tier";
  if (model == "a100") preset_name = "dgx-a100";
  if (model == "h100") preset_name = "dgx-h100";
  if (model == "h200") preset_name = "dgx-h200";
  TopologySpec spec = preset_spec(preset_name);
  spec.hosts = hosts;
  spec.gpu_model = model;
  if (gpus_per_host != spec.gpus_per_host) {
    // Keep the preset's NIC-to-GPU ratio (one per GPU on the DGX presets), at least one NIC.
    const int nics = std::max(1, spec.nics_per_host * gpus_per_host / spec.gpus_per_host);
    spec.gpus_per_host = gpus_per_host;
    spec.nics_per_host = std::min(nics, gpus_per_host);
    spec.rails = TopologySpec::default_rails(spec.gpus_per_host, spec.nics_per_host);
    spec.name += fmt::format("-{}gpu", gpus_per_host);
  }
  return Topology(std::move(spec));
}

}  // namespace phantora::net
