// Per-link counters for links.csv.
#include <fmt/format.h>

#include <ostream>

#include "phantora/netmodel/network_sim.hpp"

namespace phantora::net {

std::vector<LinkStats> NetworkSimulator::link_stats() const {
  std::vector<LinkStats> out;
  out.reserve(topo_.links().size());
  const double elapsed = now_.as_seconds();
  for (LinkId l = 0; l < topo_.links().size(); ++l) {
    const Link& link = topo_.link(l);
    LinkStats s{.name = link.name,
                .kind = link.kind,
                .capacity = link.capacity,
                .bytes = link_bytes_[l],
                .busy = link_busy_[l],
                .utilisation = 0};
    if (link_flows_[l] > 0) s.busy += now_ - link_busy_since_[l];
    if (elapsed > 0) s.utilisation = s.bytes / (link.capacity.as_bytes_per_s() * elapsed);
    out.push_back(std::move(s));
  }
  return out;
}

void NetworkSimulator::write_links_csv(std::ostream& out, bool all_links) const {
  out << "link,kind,capacity_gbytes_per_s,bytes,busy_s,utilisation\n";
  for (const LinkStats& s : link_stats()) {
    if (!all_links && s.bytes == 0) continue;
    out << fmt::format("{},{},{:.3f},{:.0f},{:.9f},{:.6f}\n", s.name, to_string(s.kind),
                       s.capacity.as_gbytes_per_s(), s.bytes, s.busy.as_seconds(), s.utilisation);
  }
}

}  // namespace phantora::net
