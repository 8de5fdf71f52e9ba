// PyTorch's memory-efficient attention: the CUTLASS kernels SDPA's EFFICIENT_ATTENTION backend
// runs (aten/src/ATen/native/transformers/cuda/mem_eff_attention, taken from xFormers), which
// PyTorch picks for fp32, for arbitrary masks and where flash does not apply. One kernel per
// pass, each taking its Params struct by value as its only parameter:
//   fmha_cutlassF_<dtype>_<aligned>_<Q>x<K>_<rf|gmem>_sm<N>(AttentionKernel<scalar, arch,
//       aligned, kQueriesPerBlock, kKeysPerBlock, kMaxK, dropout, bias>::Params)
//     grid (ceil(num_queries / kQueriesPerBlock), num_heads, num_batches);
//   fmha_cutlassB_<dtype>_<aligned>_<I>x<J>_k<K>[_dropout][_seqaligned]_sm<N>(
//       AttentionBackwardKernel<arch, scalar, aligned, dropout, preload, kBlockSizeI,
//       kBlockSizeJ, kMaxK, seqaligned>::Params)
//     grid (num_splits_key, num_heads, num_batches).
// The shim reads the call's shape from the Params (the layouts of the PyTorch releases in
// docs/kernels.md) and sends it as an attention record, priced by the attention model
// (AttentionImpl::kMemEfficient). Pure string and byte work.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "phantora/protocol.hpp"

namespace phantora::shim {

struct MemEfficientKernel {
  bool backward = false;
  wire::DataType dtype = wire::DataType::kBF16;
  int block_q = 0;       // queries per CTA (kQueriesPerBlock; kBlockSizeI backward)
  int block_k = 0;       // keys per loop step (kKeysPerBlock; kBlockSizeJ backward)
  int max_head_dim = 0;  // kMaxK: the largest head dim the kernel takes
};

// From a demangled name whose function is fmha_cutlassF_* or fmha_cutlassB_* (`base`: the name
// without its parameter list); nullopt for any other kernel or template arguments it cannot
// read.
std::optional<MemEfficientKernel> classify_mem_efficient(std::string_view base,
                                                         std::string_view demangled);

// The call's shape from the launch's Params (`params`: the pointer to its only argument) where
// one of the known layouts reads values that agree with the launch (grid, the kernel's blocks
// and head-dim bound) and with each other; nullopt otherwise (the kernel is then priced by the
// default model and listed by name).
std::optional<wire::AttentionShape> read_mem_efficient(const MemEfficientKernel& k,
                                                       const void* params,
                                                       const std::array<uint32_t, 3>& grid);

}  // namespace phantora::shim
