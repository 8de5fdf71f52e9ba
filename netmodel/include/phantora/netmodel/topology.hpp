// The simulated cluster: hosts of GPUs joined by an NVLink/NVSwitch (or PCIe) fabric, NICs on
// rails, leaf and spine switches. Built from a TOML description (docs/topology.md) or a preset.
//
// Every link is directional (full duplex = two links) and has an id, a kind, a capacity and a
// latency. route() turns a GPU pair into the list of links a flow crosses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "phantora/units.hpp"

namespace phantora::net {

using GpuId = int;  // global: host * gpus_per_host + local index
using LinkId = uint32_t;

// Malformed or inconsistent topology. The message names the file, line and key when it came
// from TOML: "dgx.toml:12:1: key 'nic.per_host': expected an integer".
class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class IntraFabric { NvSwitch, Pcie };      // selects NCCL's NVLink or PCI latency row
enum class LeafKind { Rail, Host };             // rail-optimised, or all NICs of a host on one leaf
enum class NcclArch { Volta, Ampere, Hopper };  // row of NCCL's per-architecture tables
// As the TOML format spells them: "nvswitch", "rail", "hopper".
std::string_view to_string(IntraFabric f);
std::string_view to_string(LeafKind k);
std::string_view to_string(NcclArch a);

// The parsed description. Public so that callers can adjust a preset before building.
struct TopologySpec {
  std::string name;
  std::string description;
  std::string source;  // file or preset it came from
  int hosts = 1;
  int gpus_per_host = 8;
  std::string gpu_model;
  // Intra-host fabric: per-GPU bandwidth in each direction.
  IntraFabric intra_fabric = IntraFabric::NvSwitch;
  Bandwidth intra_bandwidth;
  SimTime intra_latency;
  bool nvls = false;
  // GPUs on one NVLink fabric: 0 = one host's (DGX); a multiple of gpus_per_host when the
  // fabric spans hosts (GB200 NVL72: 18 trays of 4 GPUs). NCCL treats such a domain as one node.
  int domain_gpus = 0;
  // NICs: rails[n] lists the local GPUs that use NIC n.
  int nics_per_host = 1;
  Bandwidth nic_bandwidth;
  SimTime nic_latency;
  std::vector<std::vector<int>> rails;
  // Switches.
  LeafKind leaf_kind = LeafKind::Rail;
  int hosts_per_leaf = 1;
  SimTime leaf_latency;
  int spines = 0;
  double oversubscription = 1.0;
  SimTime spine_latency;
  bool ecmp = true;
  // What NCCL's topology search would find on this system.
  NcclArch nccl_arch = NcclArch::Hopper;
  int nccl_channels = 16;
  int nccl_nvls_channels = 16;
  // Where figures came from, by figure key ("nic.bandwidth_gbytes_per_s"; topology_figures.hpp
  // lists the keys): the [sources] table of the file, or the flag that changed the figure.
  std::map<std::string, std::string> sources;

  int gpus_per_domain() const { return domain_gpus > 0 ? domain_gpus : gpus_per_host; }

  // Another host size: keeps the NICs per GPU (at least one NIC), takes the default rails and
  // records `why` as those figures' source. The NVLink domain stays as large (one host when it
  // was one host); the Topology constructor says if the new size does not divide it.
  void set_gpus_per_host(int gpus, const std::string& why);

  // The default rail assignment: GPU g uses NIC g * nics / gpus.
  static std::vector<std::vector<int>> default_rails(int gpus_per_host, int nics_per_host);
};

enum class LinkKind { GpuToSwitch, SwitchToGpu, NicToLeaf, LeafToNic, LeafToSpine, SpineToLeaf };
std::string_view to_string(LinkKind k);

struct Link {
  LinkKind kind;
  std::string name;
  Bandwidth capacity;
  SimTime latency;
};

class Topology {
 public:
  explicit Topology(TopologySpec spec);  // validates; throws TopologyError

  static Topology from_file(const std::filesystem::path& path);
  static Topology from_toml_string(std::string_view text, std::string source_name);
  static TopologySpec parse_spec(std::string_view text, std::string source_name);
  // A named preset (netmodel/data/<name>.toml, embedded) with `hosts` hosts.
  static Topology preset(std::string_view name, int hosts);
  static std::vector<std::string> preset_names();
  // The network of the system `gpu_model` (a GPU catalog key) ships in (gpu_systems.hpp) with
  // the given counts; a plain Ethernet cluster (preset ethernet-2tier) carrying that model name
  // for a GPU the table does not know.
  static Topology for_cluster(int hosts, int gpus_per_host, std::string_view gpu_model);

  const TopologySpec& spec() const { return spec_; }
  int hosts() const { return spec_.hosts; }
  int gpus_per_host() const { return spec_.gpus_per_host; }
  int num_gpus() const { return spec_.hosts * spec_.gpus_per_host; }
  const std::string& gpu_model() const { return spec_.gpu_model; }
  bool has_nvls() const { return spec_.nvls; }
  int nics_per_host() const { return spec_.nics_per_host; }
  int num_leaves() const { return num_leaves_; }

  int host_of(GpuId g) const { return g / spec_.gpus_per_host; }
  // The NVLink domain of a GPU: its host, unless the fabric spans hosts (intra.domain_gpus).
  int domain_of(GpuId g) const { return g / spec_.gpus_per_domain(); }
  int local_index(GpuId g) const { return g % spec_.gpus_per_host; }
  GpuId gpu(int host, int local) const { return host * spec_.gpus_per_host + local; }
  int nic_of(GpuId g) const { return nic_of_local_[local_index(g)]; }  // NIC index in host
  int leaf_of(int host, int nic) const;
  // A local GPU of `host` that uses NIC `nic` (the first one on that rail).
  GpuId gpu_on_rail(int host, int nic) const { return gpu(host, rails_first_[nic]); }

  const std::vector<Link>& links() const { return links_; }
  const Link& link(LinkId id) const { return links_[id]; }
  LinkId gpu_tx(GpuId g) const { return static_cast<LinkId>(g); }
  LinkId gpu_rx(GpuId g) const { return static_cast<LinkId>(num_gpus() + g); }
  LinkId nic_tx(int host, int nic) const;
  LinkId nic_rx(int host, int nic) const;
  LinkId leaf_to_spine(int leaf, int spine) const;
  LinkId spine_to_leaf(int spine, int leaf) const;

  // Links crossed by a flow from src to dst. Same GPU: none. Same NVLink domain (host):
  // GPU -> NVSwitch -> GPU. Different domains: src's rail NIC -> leaf -> (a spine picked by
  // flow_hash when the leaves differ, or spine 0 without ECMP) -> leaf -> dst's rail NIC.
  std::vector<LinkId> route(GpuId src, GpuId dst, uint64_t flow_hash) const;
  void append_route(GpuId src, GpuId dst, uint64_t flow_hash, std::vector<LinkId>& out) const;
  SimTime path_latency(const std::vector<LinkId>& path) const;

  std::string describe() const;

 private:
  void build_links();
  void check_gpu(GpuId g) const;

  TopologySpec spec_;
  std::vector<int> nic_of_local_;
  std::vector<int> rails_first_;
  int num_leaves_ = 0;
  LinkId nic_base_ = 0, leaf_up_base_ = 0, spine_down_base_ = 0;
  std::vector<Link> links_;
};

}  // namespace phantora::net
