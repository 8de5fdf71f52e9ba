// NCCL's tuning constants. "ref" = NCCL's current src/graph/tuning.cc
// (https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc) as quoted for the figures
// below; "2.19" = the same file at commit b6475625 (the 2.19-era file), used for what ref does
// not list. Where they differ, ref wins and the 2.19 value is noted.
#include "phantora/netmodel/nccl_constants.hpp"

#include <fmt/format.h>

namespace phantora::net {

namespace {

constexpr NcclConstants kNccl = {
    // Base latency (us), [Ring, Tree, NVLS][LL, LL128, Simple]. ref: Ring 6.6/14.0/8.4,
    // Tree 6.8/14.0/8.4 (2.19 had Tree Simple 0); NVLS has none (its latency is the hw row).
    .base_latency_us = {{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}, {0, 0, 0}},
    // Per-step hardware latency (us), [NVLink, PCI, Net][Ring, Tree, NVLS][LL, LL128, Simple].
    .hw_latency_us =
        {
            // NVLink. ref: Ring .6/1.9/3.4, Tree .6/1.25/4.0 (2.19: 28), NVLS 25 (2.19: 23).
            {{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}, {0, 0, 25.0}},
            // PCI. 2.19 (not in ref): Ring 1.0/2.5/5.7, Tree 1.0/1.9/28; no NVLS over PCI.
            {{1.0, 2.5, 5.7}, {1.0, 1.9, 28.0}, {0, 0, 0}},
            // Net. ref: Ring 2.7/4.0/14.0, Tree 5.0/8.5/14 (2.19: 28), NVLS 18.
            {{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}, {0, 0, 18.0}},
        },
    // 2.19 getNetOverhead(): 1 us on Intel x86 hosts (2 on AMD); we assume Intel.
    .net_overhead_us = 1.0,
    // 2.19 ncclTopoGetAlgoTime: "plateau effect of ring", x1.4 on SM80+ (x1.9 before).
    .ring_plateau_factor = 1.4,
    // ref: "Ring LL x 0.5" (2.19: x1/4 for AllReduce or multi-node, x1/3 otherwise).
    .ring_ll_factor = 0.5,
    // ref: Ring LL128 x 0.92; 2.19: x0.7 when there are fewer than 2 ranks per node.
    .ring_ll128_factor = 0.92,
    .ring_ll128_factor_one_ppn = 0.7,
    // ref: Tree AllReduce x 0.92. 2.19: Tree LL x1/3.8, Tree LL128 x7/9 on one node, x120/128
    // on several.
    .tree_factor = 0.92,
    .tree_ll_factor = 1.0 / 3.8,
    .tree_ll128_factor_one_node = 7.0 / 9.0,
    .tree_ll128_factor_multi_node = 120.0 / 128.0,
    // ref: NVLS efficiency 0.85 on Hopper.
    .nvls_efficiency = 0.85,
    // 2.19 llMaxBws (GB/s), [Volta, Ampere, Hopper][1 node, 2 nodes, more]. NCCL picks the row
    // by GPU on one node and by CPU vendor on several (row 0 = Intel, which we assume).
    .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
    // 2.19 perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws (GB/s per channel).
    .per_channel_max_ring_ll128_bw = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}},
    .per_channel_max_tree_ll128_bw = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
    .per_channel_max_tree_bw = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
    // 2.19 treeCorrectionFactor, [LL, LL128, Simple][log2(bytes/64)], 64 B to 256 MB: "trees
    // are not perfectly sticking to the model for medium sizes".
    .tree_correction =
        {
            {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
             .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
            {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
             .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
            {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
             .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
        },
    // NCCL device.h: NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
    // NCCL_SIMPLE_MAX_NTHREADS 512.
    .max_threads = {512, 640, 512},
    // NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD = 8/8/64 (tuning.cc; NCCL INFO prints
    // "threadThresholds 8/8/64 | 64/8/64" for 8 ranks: Ring LL is multiplied by nRanks).
    .thread_threshold = {8, 8, 64},
    // NCCL_P2P_LL_THRESHOLD default 16384 (src/enqueue.cc).
    .p2p_ll_threshold_bytes = 16384,
};

}  // namespace

const NcclConstants& nccl_constants() {
  return kNccl;
}

std::string describe(const NcclConstants& c) {
  static constexpr const char* kAlgo[] = {"Ring", "Tree", "NVLS"};
  static constexpr const char* kHw[] = {"NVLink", "PCI", "Net"};
  std::string out = "NCCL tuning constants (us; LL / LL128 / Simple)\n";
  for (int a = 0; a < kTunedAlgos; ++a)
    out += fmt::format("  base {:5s}        {:5.2f} / {:5.2f} / {:5.2f}\n", kAlgo[a],
                       c.base_latency_us[a][0], c.base_latency_us[a][1], c.base_latency_us[a][2]);
  for (int h = 0; h < 3; ++h)
    for (int a = 0; a < kTunedAlgos; ++a)
      out +=
          fmt::format("  step {:6s} {:5s} {:5.2f} / {:5.2f} / {:5.2f}\n", kHw[h], kAlgo[a],
                      c.hw_latency_us[h][a][0], c.hw_latency_us[h][a][1], c.hw_latency_us[h][a][2]);
  out += fmt::format(
      "  factors: ring LL {:.3f}, ring LL128 {:.3f} ({:.2f} at 1 rank/node), tree {:.3f}, "
      "tree LL {:.3f}, tree LL128 {:.3f}/{:.3f}, NVLS {:.2f}\n",
      c.ring_ll_factor, c.ring_ll128_factor, c.ring_ll128_factor_one_ppn, c.tree_factor,
      c.tree_ll_factor, c.tree_ll128_factor_one_node, c.tree_ll128_factor_multi_node,
      c.nvls_efficiency);
  out += fmt::format("  net overhead {:.1f} us, ring plateau x{:.1f}\n", c.net_overhead_us,
                     c.ring_plateau_factor);
  return out;
}

}  // namespace phantora::net
