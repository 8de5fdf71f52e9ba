// The figure table: key -> how to read the value from a TopologySpec. Parser, report and
// summary all go through it, so a figure has one name everywhere.
#include "phantora/netmodel/topology_figures.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace phantora::net {

namespace {

struct FigureDef {
  std::string_view key;
  FigureValue (*read)(const TopologySpec&);
};

std::string rails_text(const TopologySpec& s) {
  std::vector<std::string> rails;
  for (const auto& r : s.rails) rails.push_back(fmt::format("[{}]", fmt::join(r, ", ")));
  return fmt::format("[{}]", fmt::join(rails, ", "));
}

FigureValue count(int v) {
  return static_cast<int64_t>(v);
}

FigureValue num(double v) {
  return v;
}

// In the order of the TOML format (docs/topology.md).
constexpr FigureDef kFigures[] = {
    {"cluster.hosts", [](const TopologySpec& s) { return count(s.hosts); }},
    {"cluster.gpus_per_host", [](const TopologySpec& s) { return count(s.gpus_per_host); }},
    {"cluster.gpu_model", [](const TopologySpec& s) { return FigureValue(s.gpu_model); }},
    {"intra.fabric",
     [](const TopologySpec& s) { return FigureValue(std::string(to_string(s.intra_fabric))); }},
    {"intra.bandwidth_gbytes_per_s",
     [](const TopologySpec& s) { return num(s.intra_bandwidth.as_gbytes_per_s()); }},
    {"intra.latency_ns", [](const TopologySpec& s) { return num(s.intra_latency.as_ns()); }},
    {"intra.nvls", [](const TopologySpec& s) { return FigureValue(s.nvls); }},
    {"intra.domain_gpus", [](const TopologySpec& s) { return count(s.gpus_per_domain()); }},
    {"nic.per_host", [](const TopologySpec& s) { return count(s.nics_per_host); }},
    {"nic.bandwidth_gbytes_per_s",
     [](const TopologySpec& s) { return num(s.nic_bandwidth.as_gbytes_per_s()); }},
    {"nic.latency_ns", [](const TopologySpec& s) { return num(s.nic_latency.as_ns()); }},
    {"nic.rails", [](const TopologySpec& s) { return FigureValue(rails_text(s)); }},
    {"leaf.kind",
     [](const TopologySpec& s) { return FigureValue(std::string(to_string(s.leaf_kind))); }},
    {"leaf.hosts_per_leaf", [](const TopologySpec& s) { return count(s.hosts_per_leaf); }},
    {"leaf.latency_ns", [](const TopologySpec& s) { return num(s.leaf_latency.as_ns()); }},
    {"spine.count", [](const TopologySpec& s) { return count(s.spines); }},
    {"spine.oversubscription", [](const TopologySpec& s) { return num(s.oversubscription); }},
    {"spine.latency_ns", [](const TopologySpec& s) { return num(s.spine_latency.as_ns()); }},
    {"spine.ecmp", [](const TopologySpec& s) { return FigureValue(s.ecmp); }},
    {"nccl.arch",
     [](const TopologySpec& s) { return FigureValue(std::string(to_string(s.nccl_arch))); }},
    {"nccl.channels", [](const TopologySpec& s) { return count(s.nccl_channels); }},
    {"nccl.nvls_channels", [](const TopologySpec& s) { return count(s.nccl_nvls_channels); }},
};

}  // namespace

std::vector<TopologyFigure> figures(const TopologySpec& spec) {
  std::vector<TopologyFigure> out;
  for (const FigureDef& f : kFigures) {
    const auto it = spec.sources.find(std::string(f.key));
    out.push_back({.key = std::string(f.key),
                   .value = f.read(spec),
                   .source = it != spec.sources.end()
                                 ? it->second
                                 : fmt::format("{}: no source given", spec.source)});
  }
  return out;
}

bool is_figure_key(std::string_view key) {
  return std::any_of(std::begin(kFigures), std::end(kFigures),
                     [key](const FigureDef& f) { return f.key == key; });
}

std::string format_value(const FigureValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) return fmt::format("{:g}", *d);
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::get<std::string>(v);
}

}  // namespace phantora::net
