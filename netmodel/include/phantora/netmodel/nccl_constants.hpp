// NCCL's tuning constants as one typed table (values and sources in src/nccl_constants.cpp).
// Indexed by algorithm (Ring, Tree, NVLS), protocol (LL, LL128, Simple), link type and
// architecture exactly as NCCL's src/graph/tuning.cc indexes its own tables.
#pragma once

#include <string>

#include "phantora/netmodel/collective.hpp"

namespace phantora::net {

inline constexpr int kTunedAlgos = 3;   // Ring, Tree, NVLS: index = static_cast<int>(Algorithm)
inline constexpr int kProtos = 3;       // LL, LL128, Simple: index = static_cast<int>(Protocol)
inline constexpr int kArchs = 3;        // Volta, Ampere, Hopper
inline constexpr int kNodeClasses = 3;  // 1 node, 2 nodes, more (NCCL's "index2")
inline constexpr int kTreeCorrectionSizes = 23;

enum class HwLink { NvLink = 0, Pci = 1, Net = 2 };

struct NcclConstants {
  double base_latency_us[kTunedAlgos][kProtos];
  double hw_latency_us[3][kTunedAlgos][kProtos];  // [HwLink]
  double net_overhead_us;                         // per inter-node step, x3 for Simple
  double ring_plateau_factor;                     // multi-node Ring/Simple AllReduce latency
  // Bandwidth refinements: busBw = min(busBw x factor, channels x per-channel cap).
  double ring_ll_factor;
  double ring_ll128_factor;
  double ring_ll128_factor_one_ppn;
  double tree_factor;
  double tree_ll_factor;
  double tree_ll128_factor_one_node;
  double tree_ll128_factor_multi_node;
  double nvls_efficiency;
  double ll_max_bw[kArchs][kNodeClasses];
  double per_channel_max_ring_ll128_bw[kArchs][kNodeClasses];
  double per_channel_max_tree_ll128_bw[kArchs][kNodeClasses];
  double per_channel_max_tree_bw[kArchs][kNodeClasses];
  double tree_correction[kProtos][kTreeCorrectionSizes];  // by log2(bytes / 64)
  // Channel count reduction for small sizes (enqueue.cc): fewer channels while
  // bytes < channels x threads x threshold.
  int max_threads[kProtos];
  int thread_threshold[kProtos];
  // Point-to-point: LL below this size, Simple above.
  double p2p_ll_threshold_bytes;
};

const NcclConstants& nccl_constants();
std::string describe(const NcclConstants& c);

}  // namespace phantora::net
