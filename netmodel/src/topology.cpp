// Topology construction (link table) and routing.
#include "phantora/netmodel/topology.hpp"

#include <fmt/format.h>

namespace phantora::net {

namespace {

// splitmix64's finaliser: callers may pass sequential hashes and still spread over spines.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::string_view to_string(IntraFabric f) {
  return f == IntraFabric::NvSwitch ? "nvswitch" : "pcie";
}

std::string_view to_string(LeafKind k) {
  return k == LeafKind::Rail ? "rail" : "host";
}

std::string_view to_string(NcclArch a) {
  switch (a) {
    case NcclArch::Volta:
      return "volta";
    case NcclArch::Ampere:
      return "ampere";
    case NcclArch::Hopper:
      return "hopper";
  }
  return "?";
}

std::string_view to_string(LinkKind k) {
  switch (k) {
    case LinkKind::GpuToSwitch:
      return "gpu-to-switch";
    case LinkKind::SwitchToGpu:
      return "switch-to-gpu";
    case LinkKind::NicToLeaf:
      return "nic-to-leaf";
    case LinkKind::LeafToNic:
      return "leaf-to-nic";
    case LinkKind::LeafToSpine:
      return "leaf-to-spine";
    case LinkKind::SpineToLeaf:
      return "spine-to-leaf";
  }
  return "?";
}

Topology::Topology(TopologySpec spec) : spec_(std::move(spec)) {
  const auto& s = spec_;
  auto bad = [&](std::string_view what) {
    throw TopologyError(fmt::format("{}: {}", s.source.empty() ? s.name : s.source, what));
  };
  if (s.hosts < 1 || s.gpus_per_host < 1) bad("hosts and gpus_per_host must be >= 1");
  if (static_cast<int64_t>(s.hosts) * s.gpus_per_host > (1 << 24)) bad("too many GPUs");
  if (s.nics_per_host < 1) bad("nic.per_host must be >= 1");
  if (static_cast<int>(s.rails.size()) != s.nics_per_host)
    bad(fmt::format("nic.rails has {} entries for {} NICs", s.rails.size(), s.nics_per_host));
  nic_of_local_.assign(s.gpus_per_host, -1);
  rails_first_.assign(s.nics_per_host, -1);
  for (int n = 0; n < s.nics_per_host; ++n) {
    if (s.rails[n].empty())
      bad(fmt::format("NIC {} serves no GPU (more NICs than GPUs per host?)", n));
    for (int g : s.rails[n]) {
      if (g < 0 || g >= s.gpus_per_host || nic_of_local_[g] >= 0)
        bad(fmt::format("nic.rails: GPU {} is out of range or on two rails", g));
      nic_of_local_[g] = n;
    }
    rails_first_[n] = s.rails[n].front();
  }
  for (int g = 0; g < s.gpus_per_host; ++g)
    if (nic_of_local_[g] < 0) bad(fmt::format("nic.rails: GPU {} is on no rail", g));
  if (!(s.intra_bandwidth.as_bytes_per_s() > 0) || !(s.nic_bandwidth.as_bytes_per_s() > 0))
    bad("bandwidths must be > 0");
  if (s.hosts_per_leaf < 1) bad("leaf.hosts_per_leaf must be >= 1");
  if (!(s.oversubscription >= 1.0)) bad("spine.oversubscription must be >= 1");
  if (s.nvls && s.intra_fabric != IntraFabric::NvSwitch) bad("NVLS needs an NVSwitch fabric");
  if (s.domain_gpus != 0) {
    if (s.intra_fabric != IntraFabric::NvSwitch)
      bad("intra.domain_gpus: only an NVSwitch fabric spans hosts");
    if (s.domain_gpus < s.gpus_per_host || s.domain_gpus % s.gpus_per_host != 0)
      bad(
          fmt::format("intra.domain_gpus = {} must be a multiple of gpus_per_host = {} (whole "
                      "hosts share an NVLink domain)",
                      s.domain_gpus, s.gpus_per_host));
  }
  if (s.nccl_channels < 1 || s.nccl_nvls_channels < 1) bad("nccl channels must be >= 1");
  const int groups = (s.hosts + s.hosts_per_leaf - 1) / s.hosts_per_leaf;
  num_leaves_ = s.leaf_kind == LeafKind::Rail ? groups * s.nics_per_host : groups;
  if (num_leaves_ > 1 && s.spines < 1)
    bad(fmt::format("{} leaf switches need at least one spine (spine.count)", num_leaves_));
  build_links();
}

int Topology::leaf_of(int host, int nic) const {
  const int group = host / spec_.hosts_per_leaf;
  return spec_.leaf_kind == LeafKind::Rail ? group * spec_.nics_per_host + nic : group;
}

LinkId Topology::nic_tx(int host, int nic) const {
  return nic_base_ + 2 * static_cast<LinkId>(host * spec_.nics_per_host + nic);
}
LinkId Topology::nic_rx(int host, int nic) const {
  return nic_tx(host, nic) + 1;
}
LinkId Topology::leaf_to_spine(int leaf, int spine) const {
  return leaf_up_base_ + static_cast<LinkId>(leaf * spec_.spines + spine);
}
LinkId Topology::spine_to_leaf(int spine, int leaf) const {
  return spine_down_base_ + static_cast<LinkId>(spine * num_leaves_ + leaf);
}

void Topology::build_links() {
  const auto& s = spec_;
  const int G = num_gpus();
  links_.clear();
  links_.reserve(2 * G + 2 * s.hosts * s.nics_per_host + 2 * num_leaves_ * s.spines);
  for (GpuId g = 0; g < G; ++g)
    links_.push_back({LinkKind::GpuToSwitch,
                      fmt::format("h{}/gpu{}->nvsw", host_of(g), local_index(g)), s.intra_bandwidth,
                      s.intra_latency});
  for (GpuId g = 0; g < G; ++g)
    links_.push_back({LinkKind::SwitchToGpu,
                      fmt::format("h{}/nvsw->gpu{}", host_of(g), local_index(g)), s.intra_bandwidth,
                      s.intra_latency});
  nic_base_ = static_cast<LinkId>(links_.size());
  for (int h = 0; h < s.hosts; ++h) {
    for (int n = 0; n < s.nics_per_host; ++n) {
      const int leaf = leaf_of(h, n);
      links_.push_back({LinkKind::NicToLeaf, fmt::format("h{}/nic{}->leaf{}", h, n, leaf),
                        s.nic_bandwidth, s.nic_latency});
      // Latency of a link = forwarding latency of the device it leaves; the last hop also
      // pays the receiving NIC.
      links_.push_back({LinkKind::LeafToNic, fmt::format("leaf{}->h{}/nic{}", leaf, h, n),
                        s.nic_bandwidth, s.leaf_latency + s.nic_latency});
    }
  }
  // A leaf's uplinks carry what its downlinks can, divided by the oversubscription ratio.
  const int nics_per_leaf =
      s.leaf_kind == LeafKind::Rail ? s.hosts_per_leaf : s.hosts_per_leaf * s.nics_per_host;
  const double up_bps = s.spines > 0 ? nics_per_leaf * s.nic_bandwidth.as_bytes_per_s() /
                                           (s.spines * s.oversubscription)
                                     : 0;
  const Bandwidth up = Bandwidth::bytes_per_s(up_bps);
  leaf_up_base_ = static_cast<LinkId>(links_.size());
  for (int l = 0; l < num_leaves_; ++l)
    for (int sp = 0; sp < s.spines; ++sp)
      links_.push_back(
          {LinkKind::LeafToSpine, fmt::format("leaf{}->spine{}", l, sp), up, s.leaf_latency});
  spine_down_base_ = static_cast<LinkId>(links_.size());
  for (int sp = 0; sp < s.spines; ++sp)
    for (int l = 0; l < num_leaves_; ++l)
      links_.push_back(
          {LinkKind::SpineToLeaf, fmt::format("spine{}->leaf{}", sp, l), up, s.spine_latency});
}

void Topology::check_gpu(GpuId g) const {
  if (g < 0 || g >= num_gpus())
    throw std::out_of_range(fmt::format("GPU {} is not in this {}-GPU topology", g, num_gpus()));
}

void Topology::append_route(GpuId src, GpuId dst, uint64_t flow_hash,
                            std::vector<LinkId>& out) const {
  check_gpu(src);
  check_gpu(dst);
  if (src == dst) return;
  if (domain_of(src) == domain_of(dst)) {
    out.push_back(gpu_tx(src));
    out.push_back(gpu_rx(dst));
    return;
  }
  const int hs = host_of(src), hd = host_of(dst);
  const int ns = nic_of(src), nd = nic_of(dst);
  const int ls = leaf_of(hs, ns), ld = leaf_of(hd, nd);
  out.push_back(nic_tx(hs, ns));
  if (ls != ld) {
    const int spine = spec_.ecmp ? static_cast<int>(mix(flow_hash) % spec_.spines) : 0;
    out.push_back(leaf_to_spine(ls, spine));
    out.push_back(spine_to_leaf(spine, ld));
  }
  out.push_back(nic_rx(hd, nd));
}

std::vector<LinkId> Topology::route(GpuId src, GpuId dst, uint64_t flow_hash) const {
  std::vector<LinkId> out;
  append_route(src, dst, flow_hash, out);
  return out;
}

SimTime Topology::path_latency(const std::vector<LinkId>& path) const {
  SimTime t = SimTime::zero();
  for (LinkId l : path) t += links_[l].latency;
  return t;
}

}  // namespace phantora::net
