// PyTorch's memory-efficient attention kernels: their names classified, and the shape read from
// Params structs laid out as each release lays them out (the offsets written out by hand from
// the releases' kernel_forward.h / kernel_backward.h, not taken from the decoder's table).
#include "torch_mem_efficient_attention.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <optional>

#include "torch_kernel_args.hpp"
#include "torch_kernel_name.hpp"

namespace {

using phantora::shim::classify_torch_kernel;
using phantora::shim::launch_work;
using phantora::shim::TorchFamily;
using phantora::shim::TorchKernel;
namespace wire = phantora::wire;

// As the demangler prints the PyTorch 2.15 symbols.
constexpr const char* kForwardBf16 =
    "fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::"
    "bfloat16_t, cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)";
constexpr const char* kForwardF32 =
    "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
    "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)";
constexpr const char* kBackwardBf16 =
    "fmha_cutlassB_bf16_aligned_128x128_k128_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<"
    "cutlass::arch::Sm80, cutlass::bfloat16_t, true, false, true, 128, 128, 128, false>::Params)";

struct Shape {
  int32_t heads, heads_per_kv, sq, sk, d, dv;
  uint8_t mask;
};

using Params = std::array<uint8_t, 512>;
template <typename T>
void put(Params& p, size_t at, T v) {
  std::memcpy(p.data() + at, &v, sizeof(T));
}

// Forward Params, PyTorch 2.15: seven pointers, causal_diagonal_offset, three output pointers,
// window_size (88), scale (92), head_dim, head_dim_value, num_queries, num_keys,
// num_keys_absolute, custom_mask_type (116), int32 strides from 120 (q, k, v, bias, o by row;
// q, k, v by head), int64 strides, then num_batches (192), batch_offset, head_offset,
// num_heads (204), q_heads_per_kv (208). PyTorch 2.8: num_heads right after num_batches (196),
// no q_heads_per_kv.
Params forward_params(const Shape& s, int32_t batches, bool release_2_8 = false) {
  Params p{};
  put(p, 92, 0.125f);
  put(p, 96, s.d), put(p, 100, s.dv), put(p, 104, s.sq), put(p, 108, s.sk), put(p, 112, s.sk);
  put(p, 116, s.mask);
  put(p, 120, s.heads * s.d), put(p, 124, s.heads / s.heads_per_kv * s.d);
  put(p, 128, s.heads / s.heads_per_kv * s.dv);
  put(p, 192, batches);
  if (release_2_8) {
    put(p, 196, s.heads);
  } else {
    put(p, 204, s.heads), put(p, 208, s.heads_per_kv);
  }
  return p;
}

// Backward Params, PyTorch 2.15: seventeen pointers, window_size (136), scale (140), head_dim,
// head_dim_value, num_queries, num_keys, num_heads (160), q_heads_per_kv (164),
// custom_mask_type (168), int64 row strides from 176. PyTorch 2.8: custom_mask_type at 164,
// int64 strides from 168. PyTorch 2.4.1: the same with int32 strides.
enum class Backward { k2_15, k2_8, k2_4_1 };
Params backward_params(const Shape& s, Backward release = Backward::k2_15) {
  Params p{};
  put(p, 140, 0.125f);
  put(p, 144, s.d), put(p, 148, s.dv), put(p, 152, s.sq), put(p, 156, s.sk), put(p, 160, s.heads);
  if (release == Backward::k2_15) {
    put(p, 164, s.heads_per_kv), put(p, 168, s.mask);
  } else {
    put(p, 164, s.mask);
  }
  const int64_t kv_heads = s.heads / s.heads_per_kv;
  const int64_t rows[] = {int64_t{s.heads} * s.d, kv_heads * s.d, kv_heads * s.dv};
  for (int i = 0; i < 3; ++i) {
    if (release == Backward::k2_4_1) {
      put(p, 168 + 4 * i, static_cast<int32_t>(rows[i]));
    } else {
      put(p, (release == Backward::k2_15 ? 176 : 168) + 8 * i, rows[i]);
    }
  }
  return p;
}

// The record a launch of `s` over `batch` sequences makes: every field read from the struct,
// the batch from the grid.
void expect_shape(const std::optional<phantora::shim::LaunchWork>& w, wire::WorkKind kind,
                  uint32_t batch, const Shape& s) {
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, kind);
  const wire::AttentionShape& a = w->attention;
  EXPECT_EQ(a.batch, batch);
  EXPECT_EQ(a.heads_q, static_cast<uint32_t>(s.heads));
  EXPECT_EQ(a.heads_kv, static_cast<uint32_t>(s.heads / s.heads_per_kv));
  EXPECT_EQ(a.seq_q, static_cast<uint32_t>(s.sq));
  EXPECT_EQ(a.seq_k, static_cast<uint32_t>(s.sk));
  EXPECT_EQ(a.head_dim, static_cast<uint32_t>(s.d));
  EXPECT_EQ(a.causal, s.mask != 0 ? 1 : 0);
  EXPECT_EQ(a.impl, wire::AttentionImpl::kMemEfficient);
}

TEST(MemEfficientAttention, NamesGiveThePassTypeAndTiles) {
  const TorchKernel fwd = classify_torch_kernel(kForwardBf16);
  ASSERT_EQ(fwd.family, TorchFamily::kMemEfficientAttention);
  EXPECT_FALSE(fwd.mem_efficient.backward);
  EXPECT_EQ(fwd.mem_efficient.dtype, wire::DataType::kBF16);
  EXPECT_EQ(fwd.mem_efficient.block_q, 64);
  EXPECT_EQ(fwd.mem_efficient.block_k, 128);
  EXPECT_EQ(fwd.mem_efficient.max_head_dim, 128);
  const TorchKernel f32 = classify_torch_kernel(kForwardF32);
  ASSERT_EQ(f32.family, TorchFamily::kMemEfficientAttention);
  EXPECT_EQ(f32.mem_efficient.dtype, wire::DataType::kF32);
  EXPECT_EQ(f32.mem_efficient.max_head_dim, 64);
  // Backward: <arch, scalar, aligned, dropout, preload, I, J, kMaxK, seqaligned>.
  const TorchKernel bwd = classify_torch_kernel(kBackwardBf16);
  ASSERT_EQ(bwd.family, TorchFamily::kMemEfficientAttention);
  EXPECT_TRUE(bwd.mem_efficient.backward);
  EXPECT_EQ(bwd.mem_efficient.block_q, 128);
  EXPECT_EQ(bwd.mem_efficient.block_k, 128);
  EXPECT_EQ(bwd.mem_efficient.max_head_dim, 128);
  // Another function of the same prefix with a parameter list it cannot read is not taken.
  EXPECT_EQ(classify_torch_kernel("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(int, int)").family,
            TorchFamily::kUnknown);
}

TEST(MemEfficientAttention, ForwardShapeFromEachReleasesParams) {
  const TorchKernel fwd = classify_torch_kernel(kForwardBf16);
  // Grouped-query cross-attention: 2,000 queries over 560 keys, 16 query heads over 4 key/value
  // heads, head dim 128, causal from the top left; grid (ceil(2000 / 64), 16, batch 3).
  const Shape s{16, 4, 2000, 560, 128, 128, 1};
  Params p = forward_params(s, 3);
  void* args[] = {p.data()};
  auto w = launch_work(fwd, args, {32, 16, 3});
  expect_shape(w, wire::WorkKind::kAttentionForward, 3, s);
  EXPECT_EQ(w->attention.dtype, wire::DataType::kBF16);

  // PyTorch 2.8's layout (no grouped heads): every head its own keys; value head dim 64 with
  // query/key head dim 128 is priced at their mean (the two products' FLOPs).
  p = forward_params({16, 1, 2000, 560, 128, 64, 0}, 3, /*release_2_8=*/true);
  w = launch_work(fwd, args, {32, 16, 3});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->attention.heads_kv, 16u);
  EXPECT_EQ(w->attention.head_dim, 96u);
  EXPECT_EQ(w->attention.causal, 0);
}

TEST(MemEfficientAttention, BackwardShapeFromEachReleasesParams) {
  const TorchKernel bwd = classify_torch_kernel(kBackwardBf16);
  // Grid (key splits, heads, batch): 3 splits of ceil(560 / 128) = 5 key blocks.
  const Shape s{16, 4, 2000, 560, 128, 128, 2};
  Params p = backward_params(s);
  void* args[] = {p.data()};
  auto w = launch_work(bwd, args, {3, 16, 2});
  expect_shape(w, wire::WorkKind::kAttentionBackward, 2, s);
  // PyTorch 2.8, causal from the top left. Read with 2.15's layout its mask byte and padding
  // would pass for q_heads_per_kv = 1, but the next field (the low byte of a row stride) is not
  // a mask and the strides after it are not rows: only 2.8's layout agrees.
  const Shape top_left{16, 1, 2000, 560, 128, 128, 1};
  p = backward_params(top_left, Backward::k2_8);
  expect_shape(launch_work(bwd, args, {3, 16, 2}), wire::WorkKind::kAttentionBackward, 2, top_left);
  // PyTorch 2.4.1, with the fields after V's stride as its SDPA call sets them (bias_strideM 0,
  // gO_strideM 1024, gB_strideM -1): read as 2.8's int64 strides the third is negative, so only
  // its own layout agrees.
  const Shape v2_4{16, 1, 1000, 300, 64, 64, 0};
  p = backward_params(v2_4, Backward::k2_4_1);
  put(p, 184, int32_t{1024}), put(p, 188, int32_t{-1});
  expect_shape(launch_work(bwd, args, {2, 16, 2}), wire::WorkKind::kAttentionBackward, 2, v2_4);
}

TEST(MemEfficientAttention, ParamsThatDisagreeWithTheLaunchAreNotBelieved) {
  const TorchKernel fwd = classify_torch_kernel(kForwardBf16);
  const Shape s{16, 1, 2000, 560, 128, 128, 0};
  Params p = forward_params(s, 3);
  void* args[] = {p.data()};
  // Query blocks that do not cover num_queries, heads the grid does not have.
  EXPECT_FALSE(launch_work(fwd, args, {31, 16, 3}).has_value());
  EXPECT_FALSE(launch_work(fwd, args, {32, 12, 3}).has_value());
  // A head dim above the kernel's bound (kMaxK 128).
  p = forward_params({16, 1, 2000, 560, 256, 256, 0}, 3);
  EXPECT_FALSE(launch_work(fwd, args, {32, 16, 3}).has_value());
  // All zero: no layout reads a scale.
  p = Params{};
  EXPECT_FALSE(launch_work(fwd, args, {32, 16, 3}).has_value());
  // Backward: more key splits than key blocks.
  const TorchKernel bwd = classify_torch_kernel(kBackwardBf16);
  p = backward_params(s);
  EXPECT_FALSE(launch_work(bwd, args, {6, 16, 2}).has_value());
}

}  // namespace
