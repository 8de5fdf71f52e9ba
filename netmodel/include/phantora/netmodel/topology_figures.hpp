// The figures of a topology, each named by its key in the TOML format
// ("nic.bandwidth_gbytes_per_s"), with its value and where it came from. One vocabulary for the
// [sources] table of a topology file, report.json's `topology.figures` and the run's summary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "phantora/netmodel/topology.hpp"

namespace phantora::net {

// Counts are integers, bandwidths, latencies and ratios numbers, the rest words.
using FigureValue = std::variant<int64_t, double, bool, std::string>;

struct TopologyFigure {
  std::string key;     // "section.key", as in the TOML format (docs/topology.md)
  FigureValue value;   // numbers in the format's units (GB/s, ns, counts)
  std::string source;  // the [sources] entry, the flag that set it, or "<file>: no source given"
};

// Every figure of `spec`, in the format's order.
std::vector<TopologyFigure> figures(const TopologySpec& spec);

// Whether `key` names a figure (what a [sources] entry may name).
bool is_figure_key(std::string_view key);

std::string format_value(const FigureValue& v);

}  // namespace phantora::net
