#include "phantora/simcore/replicas.hpp"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace phantora::sim {

DpCommRule DpCommRule::parse(std::string_view text) {
  auto bad = [&text] {
    return std::invalid_argument(fmt::format(
        "--dp-comms '{}': expected 'all' or 'size:K[,K...]' (the rank counts of the job's "
        "data-parallel communicators, e.g. size:2 for a job launched with data-parallel size 2 "
        "inside other parallelism; docs/scale.md)",
        text));
  };
  if (text == "all") return DpCommRule{};
  constexpr std::string_view prefix = "size:";
  if (!text.starts_with(prefix)) throw bad();
  DpCommRule rule{Kind::kSizes, {}};
  std::string_view rest = text.substr(prefix.size());
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    int k = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), k);
    if (ec != std::errc() || end != item.data() + item.size() || k < 1) throw bad();
    rule.sizes.push_back(k);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return rule;
}

bool DpCommRule::matches(int nranks) const {
  if (kind == Kind::kAll) return true;
  for (int k : sizes) {
    if (k == nranks) return true;
  }
  return false;
}

std::string DpCommRule::describe() const {
  return kind == Kind::kAll ? "all" : fmt::format("size:{}", fmt::join(sizes, ","));
}

Replicas::Replicas(int copies, int gpus_per_slice, DpCommRule rule)
    : copies_(copies), gpus_per_slice_(gpus_per_slice), rule_(std::move(rule)) {
  if (copies < 1) throw std::invalid_argument("--represent-dp must be at least 1");
  if (gpus_per_slice < 1) throw std::invalid_argument("a slice needs at least one GPU");
}

std::vector<net::CollectiveRequest> Replicas::expand(const net::CollectiveRequest& live,
                                                     bool spanning) const {
  if (!active()) return {live};
  auto shifted = [this](net::GpuId g, int copy) { return g + copy * gpus_per_slice_; };
  if (spanning && live.op != net::CollOp::SendRecv) {
    net::CollectiveRequest r = live;
    r.ranks.clear();
    // Copy-major order: the represented communicator's ranks are host-major, as a launcher
    // numbers them when the slices are consecutive groups of hosts.
    for (int c = 0; c < copies_; ++c) {
      for (net::GpuId g : live.ranks) r.ranks.push_back(shifted(g, c));
    }
    // NCCL's per-rank counts (collective.hpp): an all-gather's contribution, a reduce-scatter's
    // share and an all-to-all's per-peer block shrink with the communicator; the whole array is
    // the live one. All-reduce, broadcast and reduce name the whole buffer already.
    if (live.op == net::CollOp::AllGather || live.op == net::CollOp::ReduceScatter ||
        live.op == net::CollOp::AllToAll) {
      r.bytes = Bytes(live.bytes.count() / static_cast<uint64_t>(copies_));
    }
    return {std::move(r)};
  }
  std::vector<net::CollectiveRequest> out;
  out.reserve(static_cast<size_t>(copies_));
  for (int c = 0; c < copies_; ++c) {
    net::CollectiveRequest r = live;
    for (net::GpuId& g : r.ranks) g = shifted(g, c);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace phantora::sim
