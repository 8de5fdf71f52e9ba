#include "nccl_tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

#include "phantora/netmodel/nccl_constants.hpp"

namespace phantora::net::detail {

namespace {

int log2i(uint64_t n) {  // floor(log2(n)), 0 for 0 (as NCCL's log2i)
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// NCCL's list syntax: "a,b" enables those only, "^a,b" enables all but those.
template <class T>
std::vector<T> parse_list(std::string_view text, const char* what,
                          std::initializer_list<std::pair<const char*, T>> names,
                          const std::vector<T>& all) {
  if (text.empty()) return all;
  bool exclude = text.front() == '^';
  if (exclude) text.remove_prefix(1);
  std::vector<T> named;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string token = lower(text.substr(start, end - start));
    start = end + 1;
    if (token.empty()) continue;
    bool found = false;
    for (const auto& [name, value] : names) {
      if (token == lower(name)) {
        named.push_back(value);
        found = true;
      }
    }
    if (!found) throw std::invalid_argument(fmt::format("{}: unknown value '{}'", what, token));
  }
  std::vector<T> out;
  for (T v : all) {
    const bool in = std::find(named.begin(), named.end(), v) != named.end();
    if (in != exclude) out.push_back(v);
  }
  return out;
}

const std::vector<Algorithm> kAllAlgos = {
    Algorithm::Tree,         Algorithm::Ring, Algorithm::CollNetDirect,
    Algorithm::CollNetChain, Algorithm::Nvls, Algorithm::NvlsTree,
    Algorithm::Pat};
const std::vector<Protocol> kAllProtos = {Protocol::LL, Protocol::LL128, Protocol::Simple};

int arch_index(const Topology& t) {
  return static_cast<int>(t.spec().nccl_arch);
}
int node_class(const CommShape& s) {
  return s.n_nodes <= 2 ? s.n_nodes - 1 : 2;
}
HwLink intra_hw(const Topology& t) {
  return t.spec().intra_fabric == IntraFabric::NvSwitch ? HwLink::NvLink : HwLink::Pci;
}
double hw_lat(HwLink h, Algorithm a, Protocol p) {
  return nccl_constants()
      .hw_latency_us[static_cast<int>(h)][static_cast<int>(a)][static_cast<int>(p)];
}

// Whether we model `a` for this operation on this communicator (NCCL's per-collective
// restrictions in ncclTopoTuneModel, and NVLS only within one NVSwitch domain).
bool modelled(const TuneContext& ctx, Algorithm a) {
  switch (a) {
    case Algorithm::Ring:
      return true;
    case Algorithm::Tree:
      return ctx.op == CollOp::AllReduce;
    case Algorithm::Nvls:
      return ctx.op == CollOp::AllReduce && ctx.topo.has_nvls() && ctx.shape.n_nodes == 1;
    // NVLSTree and CollNet need multi-node NVLS / SHARP switches we do not model; PAT (NCCL
    // 2.23+) serves AllGather/ReduceScatter with one rank per node only, which none of our
    // presets has: both are documented in docs/netmodel.md as not modelled.
    default:
      return false;
  }
}

}  // namespace

std::vector<Algorithm> candidate_algorithms(const TuneContext& ctx, const TuningOverrides& o) {
  const auto enabled = parse_list<Algorithm>(o.algo, "NCCL_ALGO",
                                             {{"Tree", Algorithm::Tree},
                                              {"Ring", Algorithm::Ring},
                                              {"CollnetDirect", Algorithm::CollNetDirect},
                                              {"CollnetChain", Algorithm::CollNetChain},
                                              {"Collnet", Algorithm::CollNetDirect},
                                              {"NVLS", Algorithm::Nvls},
                                              {"NVLSTree", Algorithm::NvlsTree},
                                              {"PAT", Algorithm::Pat}},
                                             kAllAlgos);
  std::vector<Algorithm> out;
  for (Algorithm a : enabled)
    if (modelled(ctx, a)) out.push_back(a);
  if (out.empty()) out.push_back(Algorithm::Ring);  // NCCL keeps Ring as the fallback
  return out;
}

std::vector<Protocol> candidate_protocols(const TuneContext& ctx, Algorithm a,
                                          const TuningOverrides& o) {
  const auto enabled = parse_list<Protocol>(
      o.proto, "NCCL_PROTO",
      {{"LL", Protocol::LL}, {"LL128", Protocol::LL128}, {"Simple", Protocol::Simple}}, kAllProtos);
  std::vector<Protocol> out;
  for (Protocol p : enabled) {
    if (a == Algorithm::Nvls && p != Protocol::Simple) continue;  // NVLS is Simple only
    // LL128 is on by default only over NVLink on Volta/Ampere/Hopper (tuning.cc); all our
    // architectures qualify, so the fabric decides.
    if (p == Protocol::LL128 && ctx.topo.spec().intra_fabric != IntraFabric::NvSwitch) continue;
    out.push_back(p);
  }
  return out;  // may be empty: the planner then falls back to Ring, as NCCL does
}

int comm_channels(const Topology& topo, Algorithm a, const TuningOverrides& o) {
  int c = a == Algorithm::Nvls ? topo.spec().nccl_nvls_channels : topo.spec().nccl_channels;
  if (o.min_channels > 0) c = std::max(c, o.min_channels);
  if (o.max_channels > 0) c = std::min(c, o.max_channels);
  return std::clamp(c, 1, 64);  // MAXCHANNELS
}

int channels_for_size(const TuneContext& ctx, Algorithm a, Protocol p) {
  if (a != Algorithm::Ring && a != Algorithm::Tree) return ctx.channels;
  const auto& k = nccl_constants();
  const int pi = static_cast<int>(p);
  double threshold = k.thread_threshold[pi];
  if (a == Algorithm::Ring && p == Protocol::LL)
    threshold *= static_cast<double>(ctx.shape.ranks.size());
  int nc = ctx.channels;
  while (nc >= 2 && ctx.nbytes < nc * k.max_threads[pi] * threshold) --nc;
  return nc;
}

double bus_ratio(const TuneContext& ctx, Algorithm a) {
  const double n = static_cast<double>(ctx.shape.ranks.size());
  if (a == Algorithm::Ring) {
    double nsteps = n;  // Broadcast, Reduce
    if (ctx.op == CollOp::AllReduce) nsteps = 2 * (n - 1);
    if (ctx.op == CollOp::AllGather || ctx.op == CollOp::ReduceScatter) nsteps = n - 1;
    return n / nsteps;
  }
  if (a == Algorithm::Tree) return 0.5;
  return 1.0;
}

double efficiency(const TuneContext& ctx, Algorithm a, Protocol p, double raw) {
  const auto& k = nccl_constants();
  const int arch = arch_index(ctx.topo), nc = node_class(ctx.shape);
  const double ll_max = k.ll_max_bw[ctx.shape.n_nodes == 1 ? arch : 0][nc];
  const double ch = ctx.channels;
  double bw = raw;
  if (a == Algorithm::Ring) {
    if (p == Protocol::LL) bw = std::min(ll_max, raw * k.ring_ll_factor);
    if (p == Protocol::LL128) {
      const double f = ctx.shape.ppn < 2 ? k.ring_ll128_factor_one_ppn : k.ring_ll128_factor;
      bw = std::min(raw * f, ch * k.per_channel_max_ring_ll128_bw[arch][nc]);
    }
  } else if (a == Algorithm::Tree) {
    bw = std::min(raw * k.tree_factor, ch * k.per_channel_max_tree_bw[arch][nc]);
    if (p == Protocol::LL) bw = std::min(bw * k.tree_ll_factor, ll_max);
    if (p == Protocol::LL128) {
      const double f =
          ctx.shape.n_nodes == 1 ? k.tree_ll128_factor_one_node : k.tree_ll128_factor_multi_node;
      bw = std::min(bw * f, ch * k.per_channel_max_tree_ll128_bw[arch][nc]);
    }
    const int log_size = log2i(static_cast<uint64_t>(ctx.nbytes) >> 6);
    if (log_size < kTreeCorrectionSizes) bw *= k.tree_correction[static_cast<int>(p)][log_size];
  } else if (a == Algorithm::Nvls) {
    bw = raw * k.nvls_efficiency;
  }
  return bw / raw;
}

double latency_us(const TuneContext& ctx, Algorithm a, Protocol p) {
  const auto& k = nccl_constants();
  const int n = static_cast<int>(ctx.shape.ranks.size());
  const int nodes = ctx.shape.n_nodes;
  const int ai = static_cast<int>(a), pi = static_cast<int>(p);
  const HwLink intra = intra_hw(ctx.topo);
  double intra_lat = hw_lat(intra, a, p);
  // NCCL adds the network's own latency (ncclNet properties) to each inter step; the IB
  // transport reports 0, so inter-step latency is the table's.
  const double inter_lat = hw_lat(HwLink::Net, a, p);
  double lat = k.base_latency_us[ai][pi];
  if (a == Algorithm::Ring) {
    if (ctx.op == CollOp::Broadcast || ctx.op == CollOp::Reduce) {
      // Channels do not all follow the same ring, so NCCL charges every step; for Simple it
      // uses the Tree row "waiting for proper chunk modeling" (tuning.cc).
      const HwLink hw = nodes == 1 ? intra : HwLink::Net;
      const double step = hw_lat(hw, p == Protocol::Simple ? Algorithm::Tree : a, p);
      return lat + n * step;
    }
    const int steps = ctx.op == CollOp::AllReduce ? 2 * (n - 1) : n - 1;
    const int inter_steps = ctx.op == CollOp::AllReduce ? 2 * (nodes - 1) : nodes - 1;
    if (nodes > 1) {
      // Inter-node rings still pay a network post per step on every step (tuning.cc).
      const double overhead = k.net_overhead_us * (p == Protocol::Simple ? 3 : 1);
      intra_lat = std::max(intra_lat, overhead);
    }
    lat += (steps - inter_steps) * intra_lat + inter_steps * inter_lat;
    // Plateau effect of the ring (ncclTopoGetAlgoTime), once each rank's share is >= 64 B.
    if (p == Protocol::Simple && nodes > 1 && ctx.op == CollOp::AllReduce &&
        ctx.nbytes / (static_cast<double>(ctx.channels) * n) >= 64)
      lat *= k.ring_plateau_factor;
    return lat;
  }
  if (a == Algorithm::Tree)
    return lat + 2 * ((ctx.shape.ppn - 1) * intra_lat + log2i(nodes) * inter_lat);
  if (a == Algorithm::Nvls) return intra_lat + (nodes > 1 ? inter_lat : 0);
  return lat;
}

}  // namespace phantora::net::detail
