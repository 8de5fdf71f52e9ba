// The convolution model by hand: the implicit GEMM of each pass (CUTLASS's mapping, docs/
// cost-model.md "Convolution"), priced as that GEMM's compute and the convolution's own
// tensors' memory; depthwise convolutions as direct kernels.
#include <gtest/gtest.h>

#include "phantora/kernels/analytical_model.hpp"

namespace phantora::kernels {
namespace {

const GpuPreset& h100() {
  return GpuCatalog::builtin().find("h100");
}
const ModelParams& params() {
  return ModelParams::builtin();
}

// x [n, c, h, w] * w [k, c / groups, r, s] -> y [n, k, p, q].
ConvDesc conv(wire::ConvPass pass, uint64_t n, uint64_t c, uint64_t hw, uint64_t k, uint64_t rs,
              uint64_t pq, uint64_t stride = 1, uint64_t groups = 1) {
  ConvDesc d;
  d.pass = pass;
  d.n = n, d.c = c, d.h = d.w = hw, d.k = k, d.r = d.s = rs, d.p = d.q = pq;
  d.stride_h = d.stride_w = stride, d.groups = groups;
  return d;
}

constexpr auto kFprop = wire::ConvPass::kForward;
constexpr auto kDgrad = wire::ConvPass::kBackwardData;
constexpr auto kWgrad = wire::ConvPass::kBackwardFilter;

TEST(ConvModel, ImplicitGemmOfEachPassByHand) {
  // ResNet-50's strided 3 x 3 (layer2's first): x [32, 128, 56, 56], w [128, 128, 3, 3],
  // stride 2, y [32, 128, 28, 28].
  GemmDesc g = conv_implicit_gemm(conv(kFprop, 32, 128, 56, 128, 3, 28, 2));
  EXPECT_EQ(g.m, 32u * 28 * 28);  // N·P·Q
  EXPECT_EQ(g.n, 128u);           // K
  EXPECT_EQ(g.k, 128u * 9);       // C·R·S
  EXPECT_EQ(g.batch, 1u);
  EXPECT_EQ(g.compute, DType::kF32);  // bf16 tensors accumulate in fp32
  g = conv_implicit_gemm(conv(kDgrad, 32, 128, 56, 128, 3, 28, 2));
  EXPECT_EQ(g.m, 32u * 56 * 56);  // N·H·W
  EXPECT_EQ(g.n, 128u);           // C
  EXPECT_EQ(g.k, 128u * 9 / 4);   // K·R·S over the 2 x 2 strides: 288 taps reach each pixel
  g = conv_implicit_gemm(conv(kWgrad, 32, 128, 56, 128, 3, 28, 2));
  EXPECT_EQ(g.m, 128u);           // K
  EXPECT_EQ(g.n, 128u * 9);       // C·R·S
  EXPECT_EQ(g.k, 32u * 28 * 28);  // N·P·Q
  // Every pass does the forward's multiply-adds: 2·N·K·P·Q·C·R·S, and the strided data
  // gradient's GEMM does as many.
  const double flops = 2.0 * 32 * 128 * 28 * 28 * 128 * 9;
  for (auto pass : {kFprop, kDgrad, kWgrad}) {
    const ConvDesc d = conv(pass, 32, 128, 56, 128, 3, 28, 2);
    EXPECT_DOUBLE_EQ(conv_flops(d), flops);
    EXPECT_DOUBLE_EQ(gemm_flops(conv_implicit_gemm(d)), flops);
  }
  // Groups: each group's GEMM, side by side; fp32 tensors compute as TF32.
  ConvDesc grouped = conv(kFprop, 8, 256, 14, 512, 3, 14, 1, 32);
  grouped.dtype = DType::kF32;
  g = conv_implicit_gemm(grouped);
  EXPECT_EQ(g.batch, 32u);
  EXPECT_EQ(g.n, 16u);
  EXPECT_EQ(g.k, 8u * 9);
  EXPECT_EQ(g.compute, DType::kTF32);
}

TEST(ConvModel, ComputeBoundForwardIsItsGemmsComputeByHand) {
  // x [64, 256, 56, 56] * w [256, 256, 3, 3], padding 1: a GEMM of 200,704 x 256 x 2,304;
  // 1,568 x 2 = 3,136 tiles of 128 x 128 on 132 SMs: 24 waves, each tile 2·128·128·(2,304 +
  // 207) FLOPs at one SM's share of H100's main-loop rate (analytical_model_test.cpp).
  const ConvDesc d = conv(kFprop, 64, 256, 56, 256, 3, 56);
  const Estimate e = conv_estimate(d, h100(), params());
  const double main_loop = 989.4e12 * 0.763 * (6144 + 207) / 6144;
  const double compute_us = 24.0 * 132 * 2 * 128 * 128 * (2304 + 207) / main_loop * 1e6;
  EXPECT_DOUBLE_EQ(e.waves, 24.0);
  EXPECT_NEAR(e.compute_us, compute_us, 1e-6);
  // Memory: the convolution's tensors, x and y 64·256·56·56 and w 256·256·9 bf16 elements,
  // not the GEMM's A (which would count every input pixel nine times).
  const double bytes = (2.0 * 64 * 256 * 56 * 56 + 256.0 * 256 * 9) * 2;
  EXPECT_DOUBLE_EQ(e.bytes, bytes);
  EXPECT_NEAR(e.memory_us, bytes / (3350e9 * 0.90) * 1e6, 1e-6);
  EXPECT_NEAR(e.duration.as_us(), 4.0 + compute_us, 1e-3);
  // The FLOPs behind it: 2·64·256·56·56·256·9, at 62 % of the bf16 peak.
  EXPECT_DOUBLE_EQ(e.flops, 2.0 * 64 * 256 * 56 * 56 * 256 * 9);
}

TEST(ConvModel, ChannelsFirstTensorsAreTransposedByHand) {
  // The same forward as above in NCHW: three transposes, each a memory-bound kernel reading and
  // writing x, w or y once: 3 floors of 3 us and twice the tensors' bytes at the HBM plateau,
  // after the channels-last price.
  ConvDesc d = conv(kFprop, 64, 256, 56, 256, 3, 56);
  const Estimate nhwc = conv_estimate(d, h100(), params());
  d.channels_first = true;
  const Estimate nchw = conv_estimate(d, h100(), params());
  const double bytes = (2.0 * 64 * 256 * 56 * 56 + 256.0 * 256 * 9) * 2;
  const double transposes_us = 3 * 3.0 + 2 * bytes / (3350e9 * 0.90) * 1e6;
  EXPECT_NEAR(nchw.layout_us, transposes_us, 1e-3);
  EXPECT_NEAR(nchw.duration.as_us(), nhwc.duration.as_us() + transposes_us, 1e-3);
  EXPECT_DOUBLE_EQ(nchw.bytes, 3 * bytes);
  EXPECT_DOUBLE_EQ(nhwc.layout_us, 0.0);
  // Direct (depthwise) kernels read either layout: no transposes.
  ConvDesc dw = conv(kFprop, 32, 128, 56, 128, 3, 56, 1, 128);
  const SimTime direct = conv_estimate(dw, h100(), params()).duration;
  dw.channels_first = true;
  EXPECT_EQ(conv_estimate(dw, h100(), params()).duration, direct);
}

TEST(ConvModel, DepthwiseRunsAsADirectKernelByHand) {
  // 128 channels, 128 groups, 3 x 3 over 56 x 56, batch 32: one channel per group fills no
  // tensor-core tile. FLOPs 2·32·128·56·56·9 at H100's FP32 peak (66.9 T at 1830 MHz, run at
  // the sustained 1575) take 3.8 µs; its tensors, 2 x 32·128·56·56 + 128·9 bf16 elements, 17 µs
  // at the HBM plateau: memory-bound, after the 3 µs floor of memory-bound kernels.
  const ConvDesc d = conv(kFprop, 32, 128, 56, 128, 3, 56, 1, 128);
  EXPECT_TRUE(conv_is_direct(d));
  EXPECT_FALSE(conv_is_direct(conv(kFprop, 32, 128, 56, 128, 3, 56, 1, 16)));  // 8 per group
  EXPECT_FALSE(conv_is_direct(conv(kFprop, 32, 3, 224, 64, 7, 112, 2)));       // ungrouped C = 3
  const Estimate e = conv_estimate(d, h100(), params());
  const double flops = 2.0 * 32 * 128 * 56 * 56 * 9;
  EXPECT_NEAR(e.compute_us, flops / (66.9e12 * 1575 / 1830) * 1e6, 1e-6);
  const double bytes = (2.0 * 32 * 128 * 56 * 56 + 128.0 * 9) * 2;
  EXPECT_NEAR(e.duration.as_us(), 3.0 + bytes / (3350e9 * 0.90) * 1e6, 1e-3);
}

TEST(ConvModel, TimeNeverFallsAsTheBatchOrChannelsGrow) {
  for (auto pass : {kFprop, kDgrad, kWgrad}) {
    SimTime previous;
    for (uint64_t n : {1, 2, 4, 8, 16, 32, 64, 128}) {
      const SimTime t = conv_estimate(conv(pass, n, 64, 56, 64, 3, 56), h100(), params()).duration;
      EXPECT_GE(t, previous) << "n " << n;
      previous = t;
    }
    previous = SimTime{};
    for (uint64_t c : {16, 32, 64, 128, 256, 512, 1024}) {
      const SimTime t = conv_estimate(conv(pass, 32, c, 28, c, 3, 28), h100(), params()).duration;
      EXPECT_GE(t, previous) << "c " << c;
      previous = t;
    }
  }
}

TEST(ConvModel, SignatureRoundTripsAndRejectsOtherSpellings) {
  ConvDesc d = conv(kDgrad, 32, 128, 56, 256, 3, 28, 2, 4);
  d.dtype = DType::kF16;
  const std::string sig = signature(d);
  EXPECT_EQ(sig,
            "conv:pass=dgrad,n=32,c=128,h=56,w=56,k=256,r=3,s=3,p=28,q=28,groups=4,stride=2x2,"
            "layout=nhwc,dtype=f16");
  const auto back = parse_conv_signature(sig);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(signature(*back), sig);
  EXPECT_EQ(signature_family(sig), "conv");
  EXPECT_TRUE(is_canonical_signature(sig));
  EXPECT_FALSE(parse_conv_signature(
      "conv:pass=back,n=32,c=128,h=56,w=56,k=256,r=3,s=3,p=28,q=28,groups=4,stride=2x2,"
      "layout=nhwc,dtype=f16"));
  EXPECT_FALSE(parse_conv_signature(
      "conv:pass=dgrad,n=032,c=128,h=56,w=56,k=256,r=3,s=3,p=28,q=28,groups=4,stride=2x2,"
      "layout=nhwc,dtype=f16"));
  EXPECT_FALSE(parse_conv_signature(
      "conv:pass=dgrad,n=32,c=128,h=56,w=56,k=256,r=3,s=3,p=28,q=28,groups=4,stride=2,"
      "layout=nhwc,dtype=f16"));
  EXPECT_FALSE(parse_conv_signature(
      "conv:pass=dgrad,n=32,c=128,h=56,w=56,k=256,r=3,s=3,p=28,q=28,groups=4,stride=2x2,"
      "layout=chwn,dtype=f16"));
}

TEST(ConvModel, LaunchWorkDecodesIntoTheDescription) {
  wire::KernelWork w;
  w.kind = wire::WorkKind::kConvolution;
  w.conv.n = 2, w.conv.c = 3, w.conv.h = 224, w.conv.w = 224, w.conv.k = 64;
  w.conv.r = w.conv.s = 7, w.conv.p = w.conv.q = 112, w.conv.stride_h = w.conv.stride_w = 2;
  w.conv.dtype = wire::DataType::kF32;
  w.conv.pass = wire::ConvPass::kBackwardFilter;
  const auto d = conv_desc(w);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(signature(*d),
            "conv:pass=wgrad,n=2,c=3,h=224,w=224,k=64,r=7,s=7,p=112,q=112,groups=1,stride=2x2,"
            "layout=nhwc,dtype=f32");
  w.conv.channels_first = 1;
  EXPECT_TRUE(conv_desc(w)->channels_first);
  w.kind = wire::WorkKind::kNorm;
  EXPECT_FALSE(conv_desc(w).has_value());
}

}  // namespace
}  // namespace phantora::kernels
