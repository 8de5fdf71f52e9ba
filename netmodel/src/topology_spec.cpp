// TOML -> TopologySpec. Every key is read through a Reader that remembers which keys it used,
// so a key we do not understand is an error naming its line, as is a missing or mistyped one.
#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "phantora/netmodel/topology.hpp"
#include "phantora/netmodel/topology_figures.hpp"

namespace phantora::net {

namespace {

std::string where(const std::string& file, const toml::source_region& r) {
  return fmt::format("{}:{}:{}", file, r.begin.line, r.begin.column);
}

class Reader {
 public:
  Reader(const toml::table& t, std::string prefix, const std::string& file)
      : t_(t), prefix_(std::move(prefix)), file_(file) {}

  [[noreturn]] void fail(const toml::source_region& r, std::string_view key,
                         std::string_view msg) const {
    throw TopologyError(fmt::format("{}: key '{}': {}", where(file_, r), full(key), msg));
  }
  std::string full(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  }

  const toml::node* find(std::string_view key) {
    used_.insert(std::string(key));
    return t_.get(key);
  }
  const toml::node& need(std::string_view key) {
    const toml::node* n = find(key);
    if (!n) fail(t_.source(), key, "missing");
    return *n;
  }

  int64_t integer(const toml::node& n, std::string_view key) const {
    if (!n.is_integer()) fail(n.source(), key, "expected an integer");
    return *n.value<int64_t>();
  }
  double number(const toml::node& n, std::string_view key) const {
    if (!n.is_number()) fail(n.source(), key, "expected a number");
    return *n.value<double>();
  }
  std::string string(const toml::node& n, std::string_view key) const {
    if (!n.is_string()) fail(n.source(), key, "expected a string");
    return *n.value<std::string>();
  }
  bool boolean(const toml::node& n, std::string_view key) const {
    if (!n.is_boolean()) fail(n.source(), key, "expected true or false");
    return *n.value<bool>();
  }

  int positive_int(std::string_view key) {
    const toml::node& n = need(key);
    const int64_t v = integer(n, key);
    if (v < 1 || v > 1'000'000) fail(n.source(), key, "must be between 1 and 1000000");
    return static_cast<int>(v);
  }
  int non_negative_int(std::string_view key) {
    const toml::node& n = need(key);
    const int64_t v = integer(n, key);
    if (v < 0 || v > 1'000'000) fail(n.source(), key, "must be between 0 and 1000000");
    return static_cast<int>(v);
  }
  double positive_number(std::string_view key) {
    const toml::node& n = need(key);
    const double v = number(n, key);
    if (!(v > 0) || v > 1e12) fail(n.source(), key, "must be a positive number");
    return v;
  }
  SimTime latency_ns(std::string_view key) {
    const toml::node& n = need(key);
    const double v = number(n, key);
    if (!(v >= 0) || v > 1e9) fail(n.source(), key, "must be a latency in ns, >= 0");
    return SimTime::ns(v);
  }
  Bandwidth gbytes(std::string_view key) { return Bandwidth::gbytes_per_s(positive_number(key)); }
  std::string str(std::string_view key) { return string(need(key), key); }
  bool flag(std::string_view key) { return boolean(need(key), key); }

  template <class Enum>
  Enum choice(std::string_view key, std::initializer_list<std::pair<std::string_view, Enum>> opts) {
    const toml::node& n = need(key);
    const std::string v = string(n, key);
    std::string names;
    for (const auto& [name, value] : opts) {
      if (v == name) return value;
      names += names.empty() ? "" : ", ";
      names += fmt::format("\"{}\"", name);
    }
    fail(n.source(), key, fmt::format("\"{}\" is not one of {}", v, names));
  }

  Reader sub(std::string_view key) {
    const toml::node& n = need(key);
    if (!n.is_table()) fail(n.source(), key, "expected a table");
    return Reader(*n.as_table(), full(key), file_);
  }

  // Rejects what we do not understand.
  void done() const {
    for (const auto& [k, v] : t_) {
      if (!used_.contains(std::string(k.str())))
        fail(v.source(), k.str(), "unknown key (see docs/topology.md for the format)");
    }
  }

  const toml::table& table() const { return t_; }

 private:
  const toml::table& t_;
  std::string prefix_;
  const std::string& file_;
  std::set<std::string> used_;
};

std::vector<std::vector<int>> read_rails(Reader& r, const toml::node& n, int nics, int gpus) {
  const auto* arr = n.as_array();
  if (!arr || static_cast<int>(arr->size()) != nics)
    r.fail(n.source(), "rails", fmt::format("expected an array of {} arrays (one per NIC)", nics));
  std::vector<std::vector<int>> rails;
  std::vector<int> owner(gpus, -1);
  for (size_t i = 0; i < arr->size(); ++i) {
    const auto* inner = (*arr)[i].as_array();
    if (!inner) r.fail((*arr)[i].source(), "rails", "each rail is an array of local GPU indices");
    rails.emplace_back();
    for (const auto& g : *inner) {
      const int64_t v = r.integer(g, "rails");
      if (v < 0 || v >= gpus)
        r.fail(g.source(), "rails", fmt::format("GPU {} is not a local index below {}", v, gpus));
      if (owner[v] >= 0)
        r.fail(g.source(), "rails",
               fmt::format("GPU {} is on two rails ({} and {})", v, owner[v], i));
      owner[v] = static_cast<int>(i);
      rails.back().push_back(static_cast<int>(v));
    }
  }
  for (int g = 0; g < gpus; ++g)
    if (owner[g] < 0) r.fail(n.source(), "rails", fmt::format("GPU {} is on no rail", g));
  return rails;
}

// [sources.<section>] <key> = "where the figure comes from", for any figure of the format.
void read_sources(Reader sources, TopologySpec& s) {
  for (const auto& entry : sources.table()) {
    const std::string_view section = entry.first.str();
    Reader sub = sources.sub(section);
    for (const auto& [key, value] : sub.table()) {
      const std::string figure = fmt::format("{}.{}", section, key.str());
      if (!is_figure_key(figure))
        sub.fail(value.source(), key.str(),
                 "names no figure of the format (see docs/topology.md for the keys)");
      s.sources[figure] = sub.string(*sub.find(key.str()), key.str());
    }
    sub.done();
  }
  sources.done();
}

}  // namespace

TopologySpec Topology::parse_spec(std::string_view text, std::string source_name) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw TopologyError(
        fmt::format("{}: TOML syntax error: {}", where(source_name, e.source()), e.description()));
  }
  TopologySpec s;
  s.source = source_name;
  Reader top(root, "", source_name);
  if (top.find("name")) s.name = top.str("name");
  if (top.find("description")) s.description = top.str("description");
  if (s.name.empty()) s.name = std::filesystem::path(source_name).stem().string();

  Reader cluster = top.sub("cluster");
  s.hosts = cluster.positive_int("hosts");
  s.gpus_per_host = cluster.positive_int("gpus_per_host");
  s.gpu_model = cluster.str("gpu_model");
  cluster.done();

  Reader intra = top.sub("intra");
  s.intra_fabric = intra.choice<IntraFabric>(
      "fabric", {{"nvswitch", IntraFabric::NvSwitch}, {"pcie", IntraFabric::Pcie}});
  s.intra_bandwidth = intra.gbytes("bandwidth_gbytes_per_s");
  s.intra_latency = intra.latency_ns("latency_ns");
  s.nvls = intra.flag("nvls");
  if (s.nvls && s.intra_fabric != IntraFabric::NvSwitch)
    intra.fail(intra.find("nvls")->source(), "nvls", "NVLS needs fabric = \"nvswitch\"");
  if (const toml::node* domain = intra.find("domain_gpus")) {
    const int64_t v = intra.integer(*domain, "domain_gpus");
    if (v < s.gpus_per_host || v % s.gpus_per_host != 0 || v > 1'000'000)
      intra.fail(domain->source(), "domain_gpus",
                 fmt::format("must be a multiple of cluster.gpus_per_host ({}): whole hosts "
                             "share an NVLink domain",
                             s.gpus_per_host));
    s.domain_gpus = static_cast<int>(v);
  }
  intra.done();

  Reader nic = top.sub("nic");
  s.nics_per_host = nic.positive_int("per_host");
  s.nic_bandwidth = nic.gbytes("bandwidth_gbytes_per_s");
  s.nic_latency = nic.latency_ns("latency_ns");
  if (const toml::node* rails = nic.find("rails"))
    s.rails = read_rails(nic, *rails, s.nics_per_host, s.gpus_per_host);
  else
    s.rails = TopologySpec::default_rails(s.gpus_per_host, s.nics_per_host);
  nic.done();

  Reader leaf = top.sub("leaf");
  s.leaf_kind = leaf.choice<LeafKind>("kind", {{"rail", LeafKind::Rail}, {"host", LeafKind::Host}});
  s.hosts_per_leaf = leaf.positive_int("hosts_per_leaf");
  s.leaf_latency = leaf.latency_ns("latency_ns");
  leaf.done();

  Reader spine = top.sub("spine");
  s.spines = spine.non_negative_int("count");
  s.oversubscription = spine.positive_number("oversubscription");
  if (s.oversubscription < 1.0)
    spine.fail(spine.find("oversubscription")->source(), "oversubscription",
               "must be >= 1 (1 = non-blocking)");
  s.spine_latency = spine.latency_ns("latency_ns");
  s.ecmp = spine.flag("ecmp");
  spine.done();

  Reader nccl = top.sub("nccl");
  s.nccl_arch = nccl.choice<NcclArch>(
      "arch",
      {{"volta", NcclArch::Volta}, {"ampere", NcclArch::Ampere}, {"hopper", NcclArch::Hopper}});
  s.nccl_channels = nccl.positive_int("channels");
  s.nccl_nvls_channels = nccl.positive_int("nvls_channels");
  nccl.done();

  if (top.find("sources")) read_sources(top.sub("sources"), s);
  top.done();
  return s;
}

Topology Topology::from_toml_string(std::string_view text, std::string source_name) {
  return Topology(parse_spec(text, std::move(source_name)));
}

Topology Topology::from_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TopologyError(fmt::format("{}: cannot open topology file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return from_toml_string(text.str(), path.string());
}

void TopologySpec::set_gpus_per_host(int gpus, const std::string& why) {
  if (gpus == gpus_per_host) return;
  const int nics = std::max(1, nics_per_host * gpus / gpus_per_host);
  gpus_per_host = gpus;
  nics_per_host = std::min(nics, gpus);
  rails = default_rails(gpus_per_host, nics_per_host);
  for (const char* key : {"cluster.gpus_per_host", "nic.per_host", "nic.rails"}) sources[key] = why;
}

std::vector<std::vector<int>> TopologySpec::default_rails(int gpus_per_host, int nics_per_host) {
  std::vector<std::vector<int>> rails(nics_per_host);
  for (int g = 0; g < gpus_per_host; ++g)
    rails[static_cast<size_t>(g) * nics_per_host / gpus_per_host].push_back(g);
  return rails;
}

}  // namespace phantora::net
