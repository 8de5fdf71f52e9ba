#include "torch_mem_efficient_attention.hpp"

#include <cmath>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "byte_reads.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {
namespace {

// Where a release's Params keeps the fields that give the shape (byte offsets; the structs are
// plain C++ on x86-64). The 2.15 and 2.8 layouts were read from those releases' installed
// headers (torch/include/ATen/native/transformers/cuda/mem_eff_attention/kernel_forward.h and
// kernel_backward.h), 2.4.1's from the bytes its SDPA calls pass (its wheel ships no headers).
// tests/pytorch runs real calls through 2.15 and 2.8; the unit tests hold each layout's bytes
// (docs/kernels.md).
struct ParamsLayout {
  std::string_view releases;
  size_t scale;                                            // float: the softmax scale
  size_t head_dim, head_dim_value, num_queries, num_keys;  // int32
  size_t mask;                                             // uint8: 0 none, 1 and 2 causal
  size_t heads;                                            // int32
  int heads_per_kv;  // int32 q_heads_per_kv (grouped-query attention); -1: not in the struct
  size_t strides_m;  // the query, key and value row strides, one after the other
  int stride_bytes;  // their width
};

// Newest first: a struct is read with the first layout whose values agree with the launch.
constexpr ParamsLayout kForward[] = {
    {"2.15", 92, 96, 100, 104, 108, 116, 204, 208, 120, 4},
    {"2.4.1 to 2.8", 92, 96, 100, 104, 108, 116, 196, -1, 120, 4},
};
constexpr ParamsLayout kBackward[] = {
    {"2.15", 140, 144, 148, 152, 156, 168, 160, 164, 176, 8},
    {"2.8", 140, 144, 148, 152, 156, 164, 160, -1, 168, 8},
    {"2.4.1", 140, 144, 148, 152, 156, 164, 160, -1, 168, 4},  // int32 row strides
};

int parse_int(std::string_view text) {
  return std::atoi(std::string(text).c_str());
}

std::optional<wire::DataType> scalar_type(std::string_view cutlass_type) {
  if (cutlass_type == "cutlass::bfloat16_t") return wire::DataType::kBF16;
  if (cutlass_type == "cutlass::half_t") return wire::DataType::kF16;
  if (cutlass_type == "float") return wire::DataType::kF32;
  return std::nullopt;
}

std::optional<wire::AttentionShape> read_layout(const MemEfficientKernel& k, const ParamsLayout& l,
                                                const uint8_t* p,
                                                const std::array<uint32_t, 3>& grid) {
  const float scale = load<float>(p, l.scale);
  const int32_t d = load<int32_t>(p, l.head_dim), dv = load<int32_t>(p, l.head_dim_value);
  const int32_t sq = load<int32_t>(p, l.num_queries), sk = load<int32_t>(p, l.num_keys);
  const uint8_t mask = load<uint8_t>(p, l.mask);
  const int32_t heads = load<int32_t>(p, l.heads);
  const int32_t per_kv = l.heads_per_kv < 0 ? 1 : load<int32_t>(p, l.heads_per_kv);
  if (!std::isnormal(scale) || scale <= 0 || d < 1 || d > k.max_head_dim || dv < 1 ||
      dv > k.max_head_dim || sq < 1 || sk < 1 || mask > 2 || heads < 1 || per_kv < 1 ||
      heads % per_kv != 0) {
    return std::nullopt;
  }
  // A row of Q, K or V holds at least one head.
  for (int i = 0; i < 3; ++i) {
    const size_t at = l.strides_m + static_cast<size_t>(i * l.stride_bytes);
    const int64_t stride = l.stride_bytes == 8 ? load<int64_t>(p, at) : load<int32_t>(p, at);
    if (stride < (i == 2 ? dv : d)) return std::nullopt;
  }
  // Forward: one CTA per query block of each (head, batch); backward: grid x is the number of
  // key splits, at most one per key block.
  const int64_t key_blocks = (int64_t{sk} + k.block_k - 1) / k.block_k;
  const bool grid_x_agrees = k.backward
                                 ? grid[0] >= 1 && int64_t{grid[0]} <= key_blocks
                                 : int64_t{grid[0]} == (int64_t{sq} + k.block_q - 1) / k.block_q;
  if (!grid_x_agrees || grid[1] != static_cast<uint32_t>(heads) || grid[2] < 1) {
    return std::nullopt;
  }
  wire::AttentionShape a;
  a.batch = grid[2];
  a.heads_q = static_cast<uint32_t>(heads);
  a.heads_kv = static_cast<uint32_t>(heads / per_kv);
  a.seq_q = static_cast<uint32_t>(sq);
  a.seq_k = static_cast<uint32_t>(sk);
  // The products are 2·sq·sk·d (Q·Kᵀ) and 2·sq·sk·dv (P·V) per head: the model's 4·sq·sk·head_dim
  // with their mean.
  a.head_dim = static_cast<uint32_t>((d + dv) / 2);
  a.dtype = k.dtype;
  a.impl = wire::AttentionImpl::kMemEfficient;
  a.causal = mask != 0 ? 1 : 0;
  return a;
}

}  // namespace

std::optional<MemEfficientKernel> classify_mem_efficient(std::string_view base,
                                                         std::string_view demangled) {
  constexpr std::string_view kForwardName = "fmha_cutlassF_", kBackwardName = "fmha_cutlassB_";
  MemEfficientKernel k;
  if (base.starts_with(kBackwardName)) {
    k.backward = true;
  } else if (!base.starts_with(kForwardName)) {
    return std::nullopt;
  }
  const std::vector<std::string_view> params = parameter_types(demangled);
  if (params.size() != 1) return std::nullopt;
  const std::vector<std::string_view> t = template_args(params[0]);
  // Forward <scalar, arch, aligned, Q, K, kMaxK, dropout, bias>; backward <arch, scalar,
  // aligned, dropout, preload, I, J, kMaxK, seqaligned>.
  if (t.size() != (k.backward ? 9u : 8u)) return std::nullopt;
  const std::optional<wire::DataType> dtype = scalar_type(t[k.backward ? 1 : 0]);
  if (!dtype) return std::nullopt;
  k.dtype = *dtype;
  k.block_q = parse_int(t[k.backward ? 5 : 3]);
  k.block_k = parse_int(t[k.backward ? 6 : 4]);
  k.max_head_dim = parse_int(t[k.backward ? 7 : 5]);
  if (k.block_q <= 0 || k.block_k <= 0 || k.max_head_dim <= 0) return std::nullopt;
  return k;
}

std::optional<wire::AttentionShape> read_mem_efficient(const MemEfficientKernel& k,
                                                       const void* params,
                                                       const std::array<uint32_t, 3>& grid) {
  if (params == nullptr) return std::nullopt;
  const auto* p = static_cast<const uint8_t*>(params);
  const std::span<const ParamsLayout> layouts = k.backward
                                                    ? std::span<const ParamsLayout>(kBackward)
                                                    : std::span<const ParamsLayout>(kForward);
  for (const ParamsLayout& l : layouts) {
    if (auto a = read_layout(k, l, p, grid)) return a;
  }
  return std::nullopt;
}

}  // namespace phantora::shim
