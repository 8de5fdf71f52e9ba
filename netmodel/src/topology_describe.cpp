// Human-readable summary of a topology (for `phantora run` banners and debugging).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "phantora/netmodel/topology.hpp"

namespace phantora::net {

std::string Topology::describe() const {
  const auto& s = spec_;
  std::string out = fmt::format("topology {} ({}): {} hosts x {} {} GPUs = {} GPUs\n", s.name,
                                s.source, s.hosts, s.gpus_per_host, s.gpu_model, num_gpus());
  if (!s.description.empty()) out += fmt::format("  {}\n", s.description);
  out += fmt::format(
      "  intra-host: {} {:.1f} GB/s per GPU per direction, {:.0f} ns, NVLS {}, {} GPUs per "
      "NVLink domain\n",
      to_string(s.intra_fabric), s.intra_bandwidth.as_gbytes_per_s(), s.intra_latency.as_ns(),
      s.nvls ? "yes" : "no", s.gpus_per_domain());
  out += fmt::format("  NICs: {} per host, {:.1f} GB/s each, {:.0f} ns; rails:", s.nics_per_host,
                     s.nic_bandwidth.as_gbytes_per_s(), s.nic_latency.as_ns());
  for (size_t n = 0; n < s.rails.size(); ++n)
    out += fmt::format(" nic{}=[{}]", n, fmt::join(s.rails[n], ","));
  out += "\n";
  out += fmt::format("  leaves: {} ({}, {} hosts per leaf, {:.0f} ns)\n", num_leaves_,
                     s.leaf_kind == LeafKind::Rail ? "rail-optimised" : "per host group",
                     s.hosts_per_leaf, s.leaf_latency.as_ns());
  if (s.spines > 0)
    out += fmt::format(
        "  spines: {} ({:.0f} ns), oversubscription {}:1, {} , leaf uplink {:.1f} GB/s\n", s.spines,
        s.spine_latency.as_ns(), s.oversubscription,
        s.ecmp ? "ECMP by flow hash" : "no ECMP (first spine)",
        links_[leaf_up_base_].capacity.as_gbytes_per_s());
  else
    out += "  spines: none\n";
  out += fmt::format("  NCCL: arch {}, {} channels, {} NVLS channels\n", to_string(s.nccl_arch),
                     s.nccl_channels, s.nccl_nvls_channels);
  out += fmt::format("  links: {} directional\n", links_.size());
  return out;
}

}  // namespace phantora::net
