#include "phantora/kernels/analytical_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>

#include <fmt/format.h>

#include "phantora/kernels/data_error.hpp"

namespace phantora::kernels {
namespace {

const GpuPreset& gpu(std::string_view key) {
  return GpuCatalog::builtin().find(key);
}
const ModelParams& params() {
  return ModelParams::builtin();
}

GemmDesc cube(uint64_t s, DType t = DType::kBF16) {
  GemmDesc d;
  d.m = d.n = d.k = s;
  d.a = d.b = d.c = t;
  return d;
}

// The H100's GEMM efficiency (0.763, the H200's sustained rate, models.toml [msmf]) is a whole
// GEMM's rate at K = 6144, each tile's fixed cost of 207 of K (tile_cost_k, [h200-gemm])
// included: its main loop runs (6144 + 207) / 6144 times faster, and every tile's work is
// K + 207.
constexpr double kTileCostK = 207;
constexpr double kH100MainLoop = 989.4e12 * 0.763 * (6144 + kTileCostK) / 6144;

double efficiency(const GemmDesc& d, const GpuPreset& g) {
  const Estimate e = gemm_estimate(d, g, params());
  return e.flops / e.duration.as_seconds() / peak_flops(g.perf, d.a, d.compute);
}

// Each kind of copy crosses one link of the part (gpus.toml): PCIe between host and device,
// NVLink between peers, HBM within the device; a part without NVLink copies between peers over
// PCIe; a host-to-host copy crosses none of the GPU's links.
TEST(CopyLink, EachKindOfCopyCrossesItsLink) {
  const GpuPerf& h100 = gpu("h100").perf;
  EXPECT_DOUBLE_EQ(copy_link(wire::CopyKind::kHostToDevice, h100)->as_bytes_per_s(), 50e9);
  EXPECT_DOUBLE_EQ(copy_link(wire::CopyKind::kDeviceToHost, h100)->as_bytes_per_s(), 50e9);
  EXPECT_DOUBLE_EQ(copy_link(wire::CopyKind::kPeer, h100)->as_bytes_per_s(), 450e9);
  EXPECT_DOUBLE_EQ(copy_link(wire::CopyKind::kDeviceToDevice, h100)->as_bytes_per_s(), 3350e9);
  EXPECT_FALSE(copy_link(wire::CopyKind::kHostToHost, h100).has_value());

  GpuPerf no_nvlink = h100;
  no_nvlink.nvlink_links = 0;
  EXPECT_DOUBLE_EQ(copy_link(wire::CopyKind::kPeer, no_nvlink)->as_bytes_per_s(), 50e9);
  no_nvlink = h100;
  no_nvlink.nvlink = Bandwidth::bytes_per_s(0);
  EXPECT_DOUBLE_EQ(copy_link(wire::CopyKind::kPeer, no_nvlink)->as_bytes_per_s(), 50e9);
}

TEST(GemmModel, LargeBf16CubeOnH100ByHand) {
  // 4096³: 32 × 32 = 1024 tiles of 128×128 on 132 SMs = 7.76, i.e. 8 waves. One tile is
  // 2·128·128·(4096 + 207) FLOPs at one SM's share of the main loop's rate, 989.4 TFLOPS ×
  // 0.763 × 6351 / 6144; 8 waves × 132 SMs of them = 1056 tile-times = 190.8 µs (the 1024
  // useful tiles alone would take 185.0). Memory: 3 × 4096² × 2 B at 3350 GB/s × 0.90 =
  // 33.4 µs. Time = 4 µs overhead + 190.8 µs.
  const Estimate e = gemm_estimate(cube(4096), gpu("h100"), params());
  const double compute_us = 1056.0 * 2 * 128 * 128 * (4096 + kTileCostK) / kH100MainLoop * 1e6;
  EXPECT_DOUBLE_EQ(e.waves, 8.0);
  EXPECT_NEAR(e.compute_us, compute_us, 1e-6);
  EXPECT_NEAR(e.memory_us, 3.0 * 4096 * 4096 * 2 / (3350e9 * 0.90) * 1e6, 1e-6);
  EXPECT_NEAR(e.duration.as_us(), 4.0 + compute_us, 1e-3);
  EXPECT_NEAR(e.duration.as_us(), 194.8, 0.1);
  // 0.763 (models.toml [msmf], measured at the power limit) holds at the sustained clock this
  // preset carries: no rescaling.
  EXPECT_DOUBLE_EQ(e.clock_scale, 1.0);
}

GemmDesc gemm(uint64_t m, uint64_t n, uint64_t k) {
  GemmDesc d = cube(0);
  d.m = m;
  d.n = n;
  d.k = k;
  return d;
}

TEST(GemmModel, SustainedRatesOfEachPartAgainstTheirPublishedFigures) {
  // Each part's GEMM rate is what it sustains at its power limit on random data (models.toml
  // [thonking], [msmf]); the published figure is checked at the shape it was measured on, by
  // hand: 4 µs + whole waves of 128×128 tiles, each 2·128·128·K FLOPs at an SM's share of the
  // dense bf16 peak × the part's constant.
  struct Case {
    const char* gpu;
    GemmDesc shape;
    int sms;
    double waves;
    double efficiency;
    double published_tflops;
    double tolerance;  // of the published rate: the 4 µs overhead on a short GEMM, a last wave
  };
  for (const Case& c : {
           // A100, 8192³, torch.randn: 257 TFLOPS. 64 × 64 = 4096 tiles on 108 SMs = 37.9 → 38.
           Case{"a100-80gb", cube(8192), 108, 38, 0.824, 257.0, 0.01},
           // H200 MSMF: 755 at 1536×2816×6144; 12 × 22 = 264 tiles = 2 waves; 4 µs on 74 µs.
           Case{"h200", gemm(1536, 2816, 6144), 132, 2, 0.763, 755.0, 0.06},
           // B200 MSMF: 1439 at 3072×18944×4608; 24 × 148 = 3552 tiles = 24 waves.
           Case{"b200", gemm(3072, 18944, 4608), 148, 24, 0.640, 1439.0, 0.02},
       }) {
    SCOPED_TRACE(c.gpu);
    const GpuPreset& g = gpu(c.gpu);
    const Estimate e = gemm_estimate(c.shape, g, params());
    const double tile_us =
        2.0 * 128 * 128 * c.shape.k / (g.perf.bf16_tflops * 1e12 * c.efficiency / c.sms) * 1e6;
    EXPECT_DOUBLE_EQ(e.clock_scale, 1.0);  // measured at the part's own sustained clock
    EXPECT_DOUBLE_EQ(e.waves, c.waves);
    EXPECT_NEAR(e.duration.as_us(), 4.0 + c.waves * tile_us, 1e-3);
    const double tflops = e.flops / e.duration.as_seconds() / 1e12;
    EXPECT_LE(tflops, c.published_tflops);
    EXPECT_GE(tflops, c.published_tflops * (1 - c.tolerance));
  }
}

AttentionDesc gpt_attention();

// A part that differs from `full` in its sustained clock alone: GEMMs' and attention's compute
// terms take `slower` times as long, their bytes and memory-bound kernels the same time.
void ExpectOnlyComputeSlower(const GpuPreset& full, const GpuPreset& capped, double slower) {
  const Estimate g_full = gemm_estimate(cube(4096), full, params());
  const Estimate g_capped = gemm_estimate(cube(4096), capped, params());
  EXPECT_NEAR(g_capped.compute_us, g_full.compute_us * slower, 1e-6);
  EXPECT_DOUBLE_EQ(g_capped.memory_us, g_full.memory_us);
  const AttentionDesc a = gpt_attention();
  EXPECT_NEAR(attention_estimate(a, capped, params()).compute_us,
              attention_estimate(a, full, params()).compute_us * slower, 1e-6);
  MemoryOpDesc op;
  op.bytes_read = op.bytes_written = 1ull << 28;
  EXPECT_EQ(memory_op_estimate(op, capped, params()).duration,
            memory_op_estimate(op, full, params()).duration);
}

TEST(ClockModel, PowerLimitedH100ScalesComputeButNotMemory) {
  // h100-500w sustains 1410 MHz where the 700 W part, on which every H100 efficiency was
  // measured, sustains 1575 (GEMMs) or was locked at 1830 (attention): compute terms take
  // 1575 / 1410 = 1.117 and 1830 / 1410 = 1.298 times longer; bytes move at the same rate.
  const GpuPreset& full = gpu("h100");
  const GpuPreset& capped = gpu("h100-500w");
  EXPECT_DOUBLE_EQ(gemm_estimate(cube(4096), capped, params()).clock_scale, 1410.0 / 1575.0);
  EXPECT_DOUBLE_EQ(attention_estimate(gpt_attention(), capped, params()).clock_scale,
                   1410.0 / 1830.0);
  ExpectOnlyComputeSlower(full, capped, 1575.0 / 1410.0);
}

TEST(ClockModel, MetasA100BoardScalesComputeByItsSustainedClock) {
  // a100-80gb-330w sustains 1351 MHz where every A100 figure (H. He's GEMM rate, FA2's) was
  // taken at the 400 W part's 1410: GEMMs and attention take 1410 / 1351 = 1.044 times longer;
  // bytes move at the same rate.
  const GpuPreset& board = gpu("a100-80gb-330w");
  EXPECT_DOUBLE_EQ(gemm_estimate(cube(8192), board, params()).clock_scale, 1351.0 / 1410.0);
  EXPECT_DOUBLE_EQ(attention_estimate(gpt_attention(), board, params()).clock_scale,
                   1351.0 / 1410.0);
  ExpectOnlyComputeSlower(gpu("a100-80gb"), board, 1410.0 / 1351.0);
}

// Parts that differ from a sibling in their memory alone: compute terms are equal, a memory-bound
// kernel's byte term takes the bandwidths' ratio longer (the same efficiency on both), its floor
// not. h100-96gb-500w is h100-500w with 2.4 TB/s of HBM2e; a100-40gb is a100-80gb with 1,555 GB/s
// of HBM2.
TEST(ClockModel, PartsWithOtherMemoryMoveBytesAtTheirOwnBandwidth) {
  struct Case {
    const char* sibling;
    const char* part;
    double sibling_gb_per_s, part_gb_per_s, memory_efficiency;
  };
  for (const Case& c : {Case{"h100-500w", "h100-96gb-500w", 3350, 2400, 0.90},
                        Case{"a100-80gb", "a100-40gb", 2039, 1555, 0.88}}) {
    const GpuPreset& sibling = gpu(c.sibling);
    const GpuPreset& part = gpu(c.part);
    const Estimate g_sibling = gemm_estimate(cube(4096), sibling, params());
    const Estimate g_part = gemm_estimate(cube(4096), part, params());
    EXPECT_DOUBLE_EQ(g_part.compute_us, g_sibling.compute_us) << c.part;
    EXPECT_NEAR(g_part.memory_us, g_sibling.memory_us * c.sibling_gb_per_s / c.part_gb_per_s, 1e-9)
        << c.part;

    MemoryOpDesc op;
    op.bytes_read = op.bytes_written = 1ull << 28;                     // 512 MiB moved
    const double floor_us = params().memory_floor.as_seconds() * 1e6;  // 3 µs, models.toml
    const double by_hand_us =
        floor_us + 2.0 * (1ull << 28) / (c.part_gb_per_s * 1e9 * c.memory_efficiency) * 1e6;
    EXPECT_NEAR(memory_op_estimate(op, part, params()).duration.as_seconds() * 1e6, by_hand_us,
                1e-3)
        << c.part;
  }
}

TEST(GemmModel, Bf16Cube8192OnH100IsWithin1p15To1p35OfPeakTime) {
  // Issue 17's band. By hand: 4096 tiles = 31.03 waves → 32 (4224 tile-times), each of
  // 8192 + 207 of K at the main loop's rate (0.763 × 6351 / 6144 of peak):
  // 4224 / 4096 × 8399 / 8192 × 6144 / 6351 / 0.763 = 1.341, plus 4 µs over 1111 µs at peak
  // = 1.344.
  const GpuPreset& h100 = gpu("h100");
  const GemmDesc d = cube(8192);
  const double at_peak = 2.0 * 8192.0 * 8192.0 * 8192.0 / (h100.perf.bf16_tflops * 1e12);
  const double ratio = gemm_estimate(d, h100, params()).duration.as_seconds() / at_peak;
  EXPECT_NEAR(ratio,
              4224.0 / 4096.0 * (8192 + kTileCostK) / 8192 * 6144 / (6144 + kTileCostK) / 0.763 +
                  4e-6 / at_peak,
              1e-9);
  EXPECT_GE(ratio, 1.15);
  EXPECT_LE(ratio, 1.35);
}

TEST(GemmModel, OneTileMoreThanSmsTakesASecondWave) {
  // 12 × 11 = 132 tiles of 128×128 (m = 1536, n = 1408) fill H100's 132 SMs once; 7 × 19 = 133
  // tiles (m = 896, n = 2432) need a second wave for the last tile: twice the compute time for
  // 0.8 % more FLOPs. K = 4096 (no split: there are at least as many tiles as SMs). One wave is
  // 2·128·128·(4096 + 207) FLOPs at the main loop's rate / 132 = 23.85 µs; the memory terms
  // (28.3 and 31.6 MB at 3015 GB/s: 9.4 and 10.5 µs) stay below it.
  const GpuPreset& h100 = gpu("h100");
  GemmDesc full = cube(4096), over = cube(4096);
  full.m = 1536;
  full.n = 1408;
  over.m = 896;
  over.n = 2432;
  const Estimate one = gemm_estimate(full, h100, params());
  const Estimate two = gemm_estimate(over, h100, params());
  const double wave_us = 132.0 * 2 * 128 * 128 * (4096 + kTileCostK) / kH100MainLoop * 1e6;
  EXPECT_NEAR(wave_us, 23.85, 0.01);
  EXPECT_DOUBLE_EQ(one.waves, 1.0);
  EXPECT_DOUBLE_EQ(two.waves, 2.0);
  EXPECT_NEAR(one.compute_us, wave_us, 1e-6);
  EXPECT_NEAR(two.compute_us, 2 * wave_us, 1e-6);
  EXPECT_LT(one.memory_us, one.compute_us);
  EXPECT_LT(two.memory_us, two.compute_us);
  EXPECT_NEAR(one.duration.as_us(), 4.0 + wave_us, 1e-3);
  EXPECT_NEAR(two.duration.as_us(), 4.0 + 2 * wave_us, 1e-3);
  EXPECT_GT(two.duration.as_us() / one.duration.as_us(), 1.8);
  // Steps, not a slope: 264 tiles (two full waves) cost the same as 133.
  GemmDesc two_full = full;
  two_full.m = 2 * 1536;
  EXPECT_DOUBLE_EQ(gemm_estimate(two_full, h100, params()).compute_us, two.compute_us);
}

TEST(GemmModel, EveryTilePaysAFixedCostThatShortKFeels) {
  // At the K its efficiency was measured on (6144 for the H100), one full wave of tiles runs at
  // exactly that efficiency: 1536 × 1408 × 6144 on 132 SMs is 2·1536·1408·6144 FLOPs at
  // 989.4 TFLOPS × 0.763.
  const GpuPreset& h100 = gpu("h100");
  GemmDesc at_k = gemm(1536, 1408, 6144);
  EXPECT_NEAR(gemm_estimate(at_k, h100, params()).compute_us,
              2.0 * 1536 * 1408 * 6144 / (989.4e12 * 0.763) * 1e6, 1e-6);
  // Elsewhere a tile costs K + 207 of main loop: the example GPT's projections, 8192 tokens ×
  // 768 wide (384 tiles: 3 waves), take (3072 + 207) / (768 + 207) = 3.36 times longer with a
  // K of 3072 than of 768, not 4 times; so the short one runs at 768 / 975 of the long K's
  // per-FLOP rate.
  const Estimate short_k = gemm_estimate(gemm(8192, 768, 768), h100, params());
  const Estimate long_k = gemm_estimate(gemm(8192, 768, 3072), h100, params());
  EXPECT_DOUBLE_EQ(short_k.waves, 3.0);
  EXPECT_NEAR(long_k.compute_us / short_k.compute_us, (3072 + kTileCostK) / (768 + kTileCostK),
              1e-12);
  EXPECT_NEAR(short_k.compute_us,
              3 * 132 * 2.0 * 128 * 128 * (768 + kTileCostK) / kH100MainLoop * 1e6, 1e-6);
}

TEST(GemmModel, EfficiencyRisesWithSizeAndStaysBelowPeak) {
  // Efficiency rises with the cube's size except where a partial last wave wastes SMs: divided
  // by the wave fill (tiles / (waves × SMs), 1 below one wave, where split-K fills the SMs) it
  // never falls. Without that, an fp32 1024³ on A100 (64 tiles, K split 108/64 ways: full SMs,
  // 0.83 of peak) beats 2048³ (256 tiles in 3 waves of 108: 79 % fill, 0.68 of peak).
  for (const GpuPreset& g : GpuCatalog::builtin().presets()) {
    const double sms = g.device.multiprocessor_count;
    for (DType t : {DType::kBF16, DType::kF16, DType::kF8E4M3, DType::kF32}) {
      double previous = 0;
      for (uint64_t s = 16; s <= 32768; s *= 2) {
        const double eff = efficiency(cube(s, t), g);
        const double tiles = std::pow(std::ceil(static_cast<double>(s) / 128), 2);
        const double wave_fill = tiles < sms ? 1.0 : tiles / (std::ceil(tiles / sms) * sms);
        EXPECT_GT(eff, 0) << g.key << " " << s;
        EXPECT_LT(eff, 1.0) << g.key << " " << s;  // never faster than the peak
        EXPECT_GE(eff / wave_fill, previous) << g.key << " " << to_string(t) << " " << s;
        previous = eff / wave_fill;
      }
      // The largest reach the calibrated efficiency at this preset's sustained clock, the
      // smallest are far from it.
      const ModelParams::PerGpu& row = params().for_gpu(g.key);
      EXPECT_GT(efficiency(cube(32768, t), g),
                0.9 * row.gemm_efficiency * clock_scale(g, row.gemm_clock_mhz));
      EXPECT_LT(efficiency(cube(256, t), g), 0.2);
    }
  }
}

TEST(GemmModel, TimeNeverDecreasesAlongAnyDimension) {
  // From a cube, and from few-tile, long-K shapes whose K is split (the slice count changes
  // along every dimension: more tiles leave room for fewer slices, a longer K for more). The
  // sizes are multiples of 8, whose columns stay 16-byte aligned: between an unaligned size and a
  // larger aligned one the time can fall (MisalignedColumnsRunAtThePublishedRate).
  GemmDesc router = gemm(256, 8, 16384);
  router.a = router.b = router.c = router.compute = DType::kF32;
  const GpuPreset& h100 = gpu("h100");
  for (const GemmDesc& base : {cube(1000), gemm(768, 768, 8192), router}) {
    for (int dim = 0; dim < 4; ++dim) {
      SimTime previous = SimTime::zero();
      for (uint64_t v = 1; v <= 20000; v = v * 3 / 2 + 1) {
        GemmDesc d = base;
        uint64_t* field[] = {&d.m, &d.n, &d.k, &d.batch};
        *field[dim] = dim == 3 ? std::max<uint64_t>(1, v / 100) : (v + 7) / 8 * 8;
        const SimTime t = gemm_estimate(d, h100, params()).duration;
        EXPECT_GE(t, previous) << base.m << "x" << base.n << "x" << base.k << " dim " << dim
                               << " value " << v;
        EXPECT_GT(t, params().gemm_overhead);
        previous = t;
      }
    }
  }
}

TEST(GemmModel, ColumnAlignmentOfEachOperandByHand) {
  // Column-major, packed: A's columns are m long (k when transposed), B's k long (n), C's m.
  EXPECT_EQ(gemm_alignment_bytes(cube(4096)), 16u);
  // The [mleng-div] benchmark, torch.bmm of (4096 x d_ff) by (d_ff x 4096), row-major: cuBLAS
  // runs it as m = n = 4096, k = d_ff, and its B (the first matrix, transposed by the layout)
  // has columns d_ff long: 10,922 x 2 B = 21,844 B, a multiple of 4 and not of 8.
  EXPECT_EQ(gemm_alignment_bytes(gemm(4096, 4096, 10922)), 4u);
  EXPECT_EQ(gemm_alignment_bytes(gemm(4096, 4096, 10944)), 16u);
  // modded-nanogpt's 2024-10-10 output layer (65,536 tokens x 768 -> 50,257 logits) as
  // PyTorch's linear runs it: forward C^T = W x^T with C's columns 50,257 long (100,514 B: 2-byte
  // aligned); the input's gradient reads the logits' gradient as B (columns 50,257 long); the
  // weight's gradient reads it transposed (B stored n x k: columns n = 50,257 long).
  GemmDesc forward = gemm(50257, 65536, 768), dx = gemm(768, 65536, 50257),
           dw = gemm(768, 50257, 65536);
  forward.trans_a = true;
  dw.trans_b = true;
  EXPECT_EQ(gemm_alignment_bytes(forward), 2u);
  EXPECT_EQ(gemm_alignment_bytes(dx), 2u);
  EXPECT_EQ(gemm_alignment_bytes(dw), 2u);
  forward.m = dx.k = dw.n = 50304;  // padded to a multiple of 128 from 2024-10-14 on
  EXPECT_EQ(gemm_alignment_bytes(forward), 16u);
  EXPECT_EQ(gemm_alignment_bytes(dx), 16u);
  EXPECT_EQ(gemm_alignment_bytes(dw), 16u);
  // The element size counts: 12 fp8 elements are 12 B (4-byte aligned), 12 f32 ones 48 B.
  EXPECT_EQ(gemm_alignment_bytes(cube(12, DType::kF8E4M3)), 4u);
  EXPECT_EQ(gemm_alignment_bytes(cube(12, DType::kF32)), 16u);
  // A single row or column is contiguous, whatever its length: a one-token product's input and
  // output rows (m = 1), a GEMV's vectors (n = 1).
  EXPECT_EQ(gemm_alignment_bytes(gemm(1, 4095, 4096)), 16u);
  EXPECT_EQ(gemm_alignment_bytes(gemm(4096, 1, 4095)), 16u);
}

TEST(GemmModel, MisalignedColumnsRunAtThePublishedRate) {
  // [mleng-div]: batch 4 x 4096 x 4096 x d_ff in fp16 on H100. K = 10,922 and 10,944 pad to the
  // same 171 K tiles of 64 over the same 4 x 32 x 32 tiles: the model's compute terms differ by
  // the misaligned rate alone (0.686), which reproduces the published times' ratio,
  // (10,922 / 272.73) / (10,944 / 398.38) = 1.458, to 0.1 %.
  const GpuPreset& h100 = gpu("h100");
  GemmDesc slow = gemm(4096, 4096, 10922), fast = gemm(4096, 4096, 10944);
  slow.a = slow.b = slow.c = fast.a = fast.b = fast.c = DType::kF16;
  slow.batch = fast.batch = 4;
  const Estimate s = gemm_estimate(slow, h100, params());
  const Estimate f = gemm_estimate(fast, h100, params());
  EXPECT_DOUBLE_EQ(params().gemm_misaligned_rate, 0.686);
  EXPECT_DOUBLE_EQ(s.alignment_rate, 0.686);
  EXPECT_DOUBLE_EQ(f.alignment_rate, 1.0);
  EXPECT_DOUBLE_EQ(s.waves, f.waves);
  EXPECT_NEAR(s.compute_us * 0.686, f.compute_us, f.compute_us * 1e-12);
  EXPECT_NEAR(s.compute_us / f.compute_us, (10922 / 272.73) / (10944 / 398.38), 1.458 * 1e-3);
  // More FLOPs, less time: the time is not monotonic across an alignment step.
  EXPECT_LT(f.duration, s.duration);
  EXPECT_GT(gemm_flops(fast), gemm_flops(slow));
  // Only tensor-core GEMMs pay it: fp32 on the CUDA cores does not, fp32 with TF32 does.
  GemmDesc fp32 = gemm(4096, 4096, 4095);
  fp32.a = fp32.b = fp32.c = fp32.compute = DType::kF32;
  EXPECT_EQ(gemm_alignment_bytes(fp32), 4u);
  EXPECT_DOUBLE_EQ(gemm_estimate(fp32, h100, params()).alignment_rate, 1.0);
  fp32.compute = DType::kTF32;
  EXPECT_DOUBLE_EQ(gemm_estimate(fp32, h100, params()).alignment_rate, 0.686);
  // A memory-bound shape's time is its bytes whatever its alignment: 16 x 16384 x 16383 (B's
  // columns 16,383 long) stays memory-bound at the misaligned rate.
  GemmDesc skinny = gemm(16, 16384, 16383);
  const Estimate thin = gemm_estimate(skinny, h100, params());
  EXPECT_DOUBLE_EQ(thin.alignment_rate, 0.686);
  EXPECT_GT(thin.memory_us, thin.compute_us);
}

// One SM's shared memory on `h100` at its sustained clock: 128 B × 1575 MHz (models.toml [smem]).
constexpr double kH100SmemBytesPerS = 128 * 1575e6;

TEST(GemmModel, SkinnyGemmIsMemoryBoundByHand) {
  // 16 × 16384 × 16384 bf16 (a decode-like shape): A 16·16384·2, B 16384²·2, C 16·16384·2
  // bytes = 537.9 MB at 3350 GB/s × 0.90 = 178.4 µs. M = 16 runs on 16 × 128 tiles: 128 of
  // them, one wave, with no room for a second slice of any tile on 132 SMs, so K is not split.
  // Each step of K of a tile reads 16 + 128 bf16 operands (288 B) through shared memory in
  // 1.43 ns, longer than its 2·16·128 products take (0.69 ns): compute = (16384 + 207) × 1.43
  // ns = 23.7 µs. Time = 4 µs + bytes / bandwidth.
  GemmDesc d = cube(16384);
  d.m = 16;
  const Estimate e = gemm_estimate(d, gpu("h100"), params());
  const double bytes = 16.0 * 16384 * 2 + 16384.0 * 16384 * 2 + 16.0 * 16384 * 2;
  EXPECT_DOUBLE_EQ(e.tile_m, 16.0);
  EXPECT_DOUBLE_EQ(e.tile_n, 128.0);
  EXPECT_DOUBLE_EQ(e.k_slices, 1.0);
  EXPECT_DOUBLE_EQ(e.bytes, bytes);
  EXPECT_NEAR(e.compute_us, (16384 + kTileCostK) * (16 + 128) * 2 / kH100SmemBytesPerS * 1e6, 1e-6);
  EXPECT_NEAR(e.compute_us, 23.70, 0.01);
  EXPECT_NEAR(e.duration.as_us(), 4.0 + bytes / (3350e9 * 0.90) * 1e6, 1e-3);
  EXPECT_LT(efficiency(d, gpu("h100")), 0.1);
}

TEST(GemmModel, NarrowDimensionRunsOnANarrowTileByHand) {
  // A classifier head, 10 × 32 × 128 fp32: one tile narrowed to 16 × 32 (the multiples of 8
  // that cover 10 and 32; cuBLASLt's tiles, models.toml [lt-tiles]). Its 2·16·32 products per
  // step of K at an SM's share of the FP32 main loop (66.9 TFLOPS × 0.763 × 6351 / 6144 / 132)
  // take 2.56 ns, its 48 fp32 operands through shared memory 0.95 ns: compute = (128 + 207) ×
  // 2.56 ns = 0.858 µs. Two slices would save 0.16 µs and cost a 3 µs reduction: K not split.
  // With 128 × 128 tiles the same call was priced 2·128·128·335 FLOPs: 27.5 µs.
  GemmDesc head = gemm(10, 32, 128);
  head.a = head.b = head.c = head.compute = DType::kF32;
  const Estimate e = gemm_estimate(head, gpu("h100"), params());
  const double fp32_per_sm = 66.9e12 * 0.763 * (6144 + kTileCostK) / 6144 / 132;
  EXPECT_DOUBLE_EQ(e.tile_m, 16.0);
  EXPECT_DOUBLE_EQ(e.tile_n, 32.0);
  EXPECT_DOUBLE_EQ(e.k_slices, 1.0);
  EXPECT_NEAR(e.compute_us, (128 + kTileCostK) * 2 * 16 * 32 / fp32_per_sm * 1e6, 1e-6);
  EXPECT_NEAR(e.compute_us, 0.858, 0.001);
  EXPECT_NEAR(e.duration.as_us(), 4.0 + e.compute_us, 1e-6);

  // A 64-wide N (a ResNet stage's 64 channels, a LoRA rank) runs 128 × 64 tiles: as many as
  // 128 × 128 ones would be (512, 4 waves), each with half the products, which still bind
  // (2.77 ns a step against 1.90 ns for its 384 B of operands): half the compute.
  const Estimate narrow = gemm_estimate(gemm(65536, 64, 4096), gpu("h100"), params());
  const Estimate full = gemm_estimate(gemm(65536, 128, 4096), gpu("h100"), params());
  EXPECT_DOUBLE_EQ(narrow.tile_n, 64.0);
  EXPECT_DOUBLE_EQ(narrow.waves, full.waves);
  EXPECT_NEAR(narrow.compute_us, full.compute_us / 2, 1e-9);
}

TEST(GemmModel, SharedMemoryBindsOnlyOnNarrowTiles) {
  // With shared memory taken as unlimited, no full-tile GEMM of any part and input type moves:
  // a 128 × 128 tile's operands (256 elements a step) feed 16,384 products each, and the
  // tensor cores are the limit everywhere in the catalog.
  ModelParams unlimited = params();
  unlimited.gemm_smem_bytes_per_clock = 1e30;
  for (const GpuPreset& g : GpuCatalog::builtin().presets()) {
    for (DType t : {DType::kBF16, DType::kF16, DType::kF8E4M3, DType::kF32}) {
      for (DType compute : {DType::kF32, DType::kTF32}) {
        GemmDesc d = cube(8192, t);
        d.compute = compute;
        EXPECT_DOUBLE_EQ(gemm_estimate(d, g, params()).compute_us,
                         gemm_estimate(d, g, unlimited).compute_us)
            << g.key << " " << to_string(t) << " " << to_string(compute);
      }
    }
  }
  // A 128 × 8 bf16 tile's 136 operands a step take 1.35 ns through shared memory on h100, its
  // 2,048 products 0.35 ns: the floor sets its time (65536 × 8 × 4096: 512 tiles, 4 waves).
  const Estimate thin = gemm_estimate(gemm(65536, 8, 4096), gpu("h100"), params());
  EXPECT_DOUBLE_EQ(thin.tile_n, 8.0);
  EXPECT_NEAR(thin.compute_us, 4 * (4096 + kTileCostK) * (128 + 8) * 2 / kH100SmemBytesPerS * 1e6,
              1e-6);
  EXPECT_GT(thin.compute_us,
            1.01 * gemm_estimate(gemm(65536, 8, 4096), gpu("h100"), unlimited).compute_us);
}

TEST(GemmModel, LongKWithFewTilesSplitsKByHand) {
  // A router's weight gradient: m = 256, n = 8 (experts), k = 16,384 tokens, fp32. Two output
  // tiles of 128 × 8 on 132 SMs: K may be split into up to 66 slices (one wave). A step of K
  // of a tile is its 2·128·8 products at one SM's share of the main loop's rate, 67 TFLOPS
  // (fp32 peak, gpus.toml) × 0.763 × 6351 / 6144 / 132: 5.12 ns (its 136 fp32 operands through
  // shared memory take 2.70); each slice runs 16384 / s + 207 of them (every slice pays a
  // tile's fixed cost). The slices read A and B (16.8 MB) and write s fp32 partials of C
  // (256·8·4 B each) at 3350 GB/s × 0.90; a second kernel reads the partials and writes C:
  // 3 µs + bytes at the same rate. Reading A takes 5.7 µs whatever the split, so slices pay
  // until the main loop is shorter than that: 18 slices (5.72 µs of main loop, 5.79 µs of
  // memory), where 17 leave 6.00 µs of main loop and 19 only add partials.
  GemmDesc d = cube(256);
  d.n = 8;
  d.k = 16384;
  d.a = d.b = d.c = d.compute = DType::kF32;
  const Estimate e = gemm_estimate(d, gpu("h100"), params());
  const double rate = peak_flops(gpu("h100").perf, DType::kF32, DType::kF32) * 0.763 *
                      (6144 + kTileCostK) / 6144 / 132;
  const double hbm = 3350e9 * 0.90;
  const double ab_bytes = 256.0 * 16384 * 4 + 16384.0 * 8 * 4;
  const double c_bytes = 256.0 * 8 * 4;
  auto total_us = [&](double s) {
    const double main_loop = (16384.0 / s + kTileCostK) * 2 * 128 * 8 / rate;
    const double memory = (ab_bytes + s * c_bytes) / hbm;
    return (std::max(main_loop, memory) + 3e-6 + (s * c_bytes + c_bytes) / hbm) * 1e6;
  };
  EXPECT_DOUBLE_EQ(e.tile_n, 8.0);
  EXPECT_DOUBLE_EQ(e.k_slices, 18.0);
  EXPECT_DOUBLE_EQ(e.waves, 1.0);
  EXPECT_LT(total_us(18), total_us(17));
  EXPECT_LT(total_us(18), total_us(19));
  EXPECT_NEAR(e.compute_us, (16384.0 / 18 + kTileCostK) * 2 * 128 * 8 / rate * 1e6, 1e-6);
  EXPECT_NEAR(e.memory_us, (ab_bytes + 18 * c_bytes) / hbm * 1e6, 1e-6);
  EXPECT_NEAR(e.reduce_us, 3.0 + (19 * c_bytes) / hbm * 1e6, 1e-6);
  EXPECT_NEAR(e.duration.as_us(), 4.0 + total_us(18), 1e-3);
  // 12.8 µs, where the two tiles' whole K on 2 SMs would take 85 µs.
  EXPECT_NEAR(e.duration.as_us(), 12.84, 0.01);
  EXPECT_GT((16384 + kTileCostK) * 2 * 128 * 8 / rate * 1e6, 6 * e.duration.as_us());
  // A short bf16 K does not split: 256 × 8 × 256 would save 0.23 µs of its 0.62 µs main loop
  // with two slices and pay 3 µs for the second kernel. Its 128 × 8 tiles are held by shared
  // memory: 272 B a step at 128 B × 1575 MHz.
  d.k = 256;
  d.a = d.b = d.c = DType::kBF16;
  const Estimate short_k = gemm_estimate(d, gpu("h100"), params());
  EXPECT_DOUBLE_EQ(short_k.k_slices, 1.0);
  EXPECT_DOUBLE_EQ(short_k.reduce_us, 0.0);
  EXPECT_NEAR(short_k.compute_us, (256 + kTileCostK) * (128 + 8) * 2 / kH100SmemBytesPerS * 1e6,
              1e-6);
}

TEST(GemmModel, SplitKTakesTheFastestSliceCountByHand) {
  // The example GPT's weight gradients, 768 × 768 × 8192 bf16 on H100: 36 tiles, so at most
  // floor(132 / 36) = 3 slices per tile in one wave. Per slice 2·128·128·(8192 / s + 207) FLOPs
  // at an SM's share of the main loop's rate (5.543 ns per K of a tile); split, a second
  // kernel reads s fp32 partials (768²·4 B each) and writes C (768²·2 B) at 3015 GB/s, after
  // its 3 µs floor:
  //   s = 1: 46.55 µs; s = 2: 23.85 + 3 + 1.96 = 28.81 µs; s = 3: 16.28 + 3 + 2.74 = 22.02 µs.
  const GemmDesc d = gemm(768, 768, 8192);
  const Estimate e = gemm_estimate(d, gpu("h100"), params());
  const double per_k_us = 2.0 * 128 * 128 / (kH100MainLoop / 132) * 1e6;
  const double hbm = 3350e9 * 0.90;
  const double c = 768.0 * 768;
  auto total_us = [&](double s) {
    const double compute = (8192.0 / s + kTileCostK) * per_k_us;
    return s == 1 ? compute : compute + 3.0 + (s * c * 4 + c * 2) / hbm * 1e6;
  };
  EXPECT_NEAR(total_us(1), 46.55, 0.01);
  EXPECT_NEAR(total_us(2), 28.81, 0.01);
  EXPECT_NEAR(total_us(3), 22.02, 0.01);
  EXPECT_DOUBLE_EQ(e.k_slices, 3.0);
  EXPECT_NEAR(e.compute_us, (8192.0 / 3 + kTileCostK) * per_k_us, 1e-6);
  EXPECT_NEAR(e.duration.as_us(), 4.0 + total_us(3), 1e-3);
  // The call moves A and B, three partials written and read back, and C.
  EXPECT_DOUBLE_EQ(e.bytes, 2 * 768.0 * 8192 * 2 + 2 * 3 * c * 4 + c * 2);
  // Without the one-wave bound a fourth slice would not be allowed: 144 slices on 132 SMs.
  EXPECT_DOUBLE_EQ(e.waves, 1.0);
}

TEST(GemmModel, BatchedSmallGemmsAreFarFromPeak) {
  GemmDesc d = cube(64);
  d.batch = 4096;  // 4096 tiles of 64 × 64, each with a short K and its fixed cost
  const double eff = efficiency(d, gpu("h100"));
  EXPECT_LT(eff, 0.25);
  EXPECT_GT(eff, 0.0);
  EXPECT_DOUBLE_EQ(gemm_estimate(d, gpu("h100"), params()).tile_m, 64.0);
  // Padding: m = 1 costs the compute of m = 8, the narrowest tile (128 tiles either way: too
  // many to split K), and less than m = 128.
  GemmDesc one = gemm(1, 16384, 4096), eight = gemm(8, 16384, 4096);
  EXPECT_DOUBLE_EQ(gemm_estimate(one, gpu("h100"), params()).compute_us,
                   gemm_estimate(eight, gpu("h100"), params()).compute_us);
  EXPECT_LT(gemm_estimate(eight, gpu("h100"), params()).compute_us,
            gemm_estimate(gemm(128, 16384, 4096), gpu("h100"), params()).compute_us);
}

TEST(GemmModel, PeakFollowsInputAndComputeTypes) {
  const GpuPerf& h = gpu("h100").perf;
  EXPECT_DOUBLE_EQ(peak_flops(h, DType::kBF16, DType::kF32), 989.4e12);
  EXPECT_DOUBLE_EQ(peak_flops(h, DType::kF8E4M3, DType::kF32), 1978.9e12);
  EXPECT_DOUBLE_EQ(peak_flops(h, DType::kF32, DType::kF32), 66.9e12);
  EXPECT_DOUBLE_EQ(peak_flops(h, DType::kF32, DType::kTF32), 494.7e12);
  // A100 has no FP8 tensor cores: FP8 runs at the FP16 rate.
  EXPECT_DOUBLE_EQ(peak_flops(gpu("a100").perf, DType::kF8E5M2, DType::kF32), 312e12);
  // FP8 halves the compute term of a large GEMM on H100.
  const Estimate bf16 = gemm_estimate(cube(8192), gpu("h100"), params());
  const Estimate fp8 = gemm_estimate(cube(8192, DType::kF8E4M3), gpu("h100"), params());
  EXPECT_NEAR(fp8.compute_us * 2, bf16.compute_us, bf16.compute_us * 1e-3);
}

AttentionDesc gpt_attention() {
  AttentionDesc a;
  a.batch = 8;
  a.heads_q = a.heads_kv = 16;
  a.seq_q = a.seq_k = 2048;
  a.head_dim = 128;
  a.causal = true;
  return a;
}

// FA2 and FA3 on H100 were measured with the clock locked at 1830 MHz (models.toml [fa3]); a
// 700 W H100 sustains 1575 MHz under load (gpus.toml [dg-120]), so its attention rate is
// 1575 / 1830 = 0.861 of the measured one.
constexpr double kH100AttentionClock = 1575.0 / 1830.0;

TEST(AttentionModel, ForwardByHand) {
  // FLOPs 4·b·h·s²·d / 2 (causal) = 4·8·16·2048²·128/2 = 137.4 GFLOP. FA2's forward plateau on
  // H100 is 0.376 with s0 = 105 (models.toml [fit]); causal, its 16 query tiles of 128 loop over
  // 1, 2, ..., 16 key tiles plus s0 each: 128²·16·17/2 + 2048·105 steps per head against the
  // 2048²/2 useful ones, a factor 2048 / (2048 + 128 + 2·105) = 0.8583. At 989.4 TFLOPS × 0.376
  // × 0.861 (clock) × 0.8583 that is 500.1 µs; 2048 query tiles fill the SMs. Plus 4 µs.
  const AttentionDesc a = gpt_attention();
  const Estimate e = attention_estimate(a, gpu("h100"), params());
  const double flops = 4.0 * 8 * 16 * 2048.0 * 2048.0 * 128 / 2;
  EXPECT_DOUBLE_EQ(e.flops, flops);
  EXPECT_DOUBLE_EQ(e.clock_scale, kH100AttentionClock);
  const double factor = 2048.0 / (2048 + 128 + 2 * 105);
  EXPECT_NEAR(e.duration.as_us(),
              4.0 + flops / (989.4e12 * 0.376 * kH100AttentionClock * factor) * 1e6, 1e-3);
  EXPECT_NEAR(e.duration.as_us(), 504.1, 0.1);
  // Q, K, V, O: 4 × 8·16·2048·128 × 2 B, plus the f32 log-sum-exp 8·16·2048 × 4 B.
  EXPECT_DOUBLE_EQ(e.bytes, 4.0 * 8 * 16 * 2048 * 128 * 2 + 4.0 * 8 * 16 * 2048);
}

TEST(AttentionModel, BackwardIsTwoAndAHalfTimesTheFlops) {
  AttentionDesc a = gpt_attention();
  const Estimate fwd = attention_estimate(a, gpu("h100"), params());
  a.backward = true;
  const Estimate bwd = attention_estimate(a, gpu("h100"), params());
  EXPECT_DOUBLE_EQ(bwd.flops, 2.5 * fwd.flops);
  // Its own plateau (0.331) and s0 (271): factor 2048 / (2048 + 128 + 2·271) = 0.7535.
  const double factor = 2048.0 / (2048 + 128 + 2 * 271);
  EXPECT_NEAR(bwd.duration.as_us(),
              4.0 + bwd.flops / (989.4e12 * 0.331 * kH100AttentionClock * factor) * 1e6, 1e-3);
  EXPECT_NEAR(bwd.duration.as_us(), 1621.9, 0.1);
  // Non-causal doubles the work.
  a.causal = false;
  EXPECT_DOUBLE_EQ(attention_estimate(a, gpu("h100"), params()).flops, 2 * bwd.flops);
}

TEST(AttentionModel, LoopWorkOfUnequalLengthsByHand) {
  // Causal masks are aligned bottom-right: query r sees key c when c <= r + sk - sq.
  AttentionDesc a;
  a.causal = true;
  // 128 queries over 512 keys: one query tile, whose last query sees all 512 keys.
  a.seq_q = 128;
  a.seq_k = 512;
  EXPECT_DOUBLE_EQ(attention_loop_work(a, 128, 10), 128.0 * (512 + 10));
  // 512 queries over 128 keys: the first three query tiles see no key and pay s0 only, the last
  // sees all 128.
  a.seq_q = 512;
  a.seq_k = 128;
  EXPECT_DOUBLE_EQ(attention_loop_work(a, 128, 10), 3 * 128.0 * 10 + 128.0 * (128 + 10));
  // Backward, one key tile: only the last 128 queries see it.
  a.backward = true;
  EXPECT_DOUBLE_EQ(attention_loop_work(a, 128, 10), 128.0 * (128 + 10));
  // Square and causal: tiles loop over 1, 2, 3, 4 tiles either way.
  a.seq_q = a.seq_k = 512;
  EXPECT_DOUBLE_EQ(attention_loop_work(a, 128, 10), 128.0 * 128 * 10 + 512 * 10);
  a.backward = false;
  EXPECT_DOUBLE_EQ(attention_loop_work(a, 128, 10), 128.0 * 128 * 10 + 512 * 10);
  // Without a mask every row loops over the whole other sequence.
  a.causal = false;
  a.seq_k = 300;
  EXPECT_DOUBLE_EQ(attention_loop_work(a, 128, 10), 512.0 * 310);
}

// The published H100 benchmarks (models.toml [fa3-fwd], [fa3], [fa2-h100]): H100 SXM locked at
// 1830 MHz, batch × seqlen = 16k tokens, 16 heads of 128, fp16. The model's rate there, over the
// whole call (launch overhead included), in TFLOP/s.
const GpuPreset& h100_at_1830() {
  static const GpuPreset g = [] {
    GpuPreset p = gpu("h100");
    p.perf.sustained_clock_mhz = 1830.0;
    return p;
  }();
  return g;
}

AttentionDesc benchmark_attention(uint64_t seqlen, AttentionImpl impl, bool backward, bool causal) {
  AttentionDesc a;
  a.batch = 16384 / seqlen;
  a.heads_q = a.heads_kv = 16;
  a.seq_q = a.seq_k = seqlen;
  a.head_dim = 128;
  a.dtype = DType::kF16;
  a.impl = impl;
  a.backward = backward;
  a.causal = causal;
  return a;
}

double model_tflops(const AttentionDesc& a) {
  const Estimate e = attention_estimate(a, h100_at_1830(), params());
  return e.flops / e.duration.as_seconds() / 1e12;
}

// The model's rate over several calls run one after the other (a forward and its backward, as
// the forward + backward figures rate them), in TFLOP/s.
double combined_tflops(const GpuPreset& gpu, std::initializer_list<AttentionDesc> calls) {
  double flops = 0, seconds = 0;
  for (const AttentionDesc& a : calls) {
    const Estimate e = attention_estimate(a, gpu, params());
    flops += e.flops;
    seconds += e.duration.as_seconds();
  }
  return flops / seconds / 1e12;
}

struct PublishedPoint {
  const char* row;
  AttentionImpl impl;
  bool backward, causal;
  uint64_t seqlen;
  double tflops;
};

// Only points that did not set a constant: the fit ([fit]) used seqlen 512 and 16k of each
// non-causal row, so these are the points between them and every causal one.
constexpr AttentionImpl kFa2 = AttentionImpl::kFlash2, kFa3 = AttentionImpl::kFlash3;
constexpr PublishedPoint kHeldOut[] = {
    {"FA3 fwd", kFa3, false, false, 1024, 565},
    {"FA3 fwd", kFa3, false, false, 2048, 625},
    {"FA3 fwd", kFa3, false, false, 4096, 638},
    {"FA3 fwd", kFa3, false, false, 8192, 646},
    {"FA3 fwd causal", kFa3, false, true, 512, 292},
    {"FA3 fwd causal", kFa3, false, true, 1024, 423},
    {"FA3 fwd causal", kFa3, false, true, 2048, 521},
    {"FA3 fwd causal", kFa3, false, true, 4096, 579},
    {"FA3 fwd causal", kFa3, false, true, 8192, 602},
    {"FA3 fwd causal", kFa3, false, true, 16384, 616},
    {"FA3 bwd", kFa3, true, false, 1024, 424},
    {"FA3 bwd", kFa3, true, false, 2048, 501},
    {"FA3 bwd", kFa3, true, false, 4096, 542},
    {"FA3 bwd", kFa3, true, false, 8192, 559},
    {"FA2 fwd", kFa2, false, false, 1024, 350},
    {"FA2 fwd", kFa2, false, false, 2048, 362},
    {"FA2 fwd", kFa2, false, false, 4096, 366},
    {"FA2 fwd", kFa2, false, false, 8192, 370},
    {"FA2 bwd", kFa2, true, false, 1024, 260},
    {"FA2 bwd", kFa2, true, false, 2048, 291},
    {"FA2 bwd", kFa2, true, false, 4096, 310},
    {"FA2 bwd", kFa2, true, false, 8192, 318},
};

TEST(AttentionModel, MatchesPublishedH100PointsNotUsedForTheFit) {
  for (const PublishedPoint& p : kHeldOut) {
    const double model = model_tflops(benchmark_attention(p.seqlen, p.impl, p.backward, p.causal));
    EXPECT_NEAR(model, p.tflops, 0.10 * p.tflops) << p.row << " at seqlen " << p.seqlen;
  }
}

// [fa3-cudnn]: cuDNN's bars in the same H100 figures. Only the two ends of the non-causal
// head-dim-128 rows (forward and backward) and the 16k non-causal forward points at head dims
// 64 and 256 set constants; every other point is held out. The model is 0.92-1.12 of them:
// non-causal within 8 %, the causal forward 5-12 % fast at every length and head dim (cuDNN's
// causal kernels lose more to the mask than the diagonal tiles the model charges).
TEST(AttentionModel, CudnnMatchesPublishedH100PointsNotUsedForTheFit) {
  constexpr AttentionImpl kCudnn = AttentionImpl::kCudnn;
  struct Point {
    const char* row;
    bool backward, causal;
    uint64_t head_dim, seqlen;
    double tflops;
  };
  constexpr Point kPoints[] = {
      {"fwd", false, false, 128, 1024, 574},
      {"fwd", false, false, 128, 2048, 617},
      {"fwd", false, false, 128, 4096, 609},
      {"fwd", false, false, 128, 8192, 600},
      {"fwd causal", false, true, 128, 512, 315},
      {"fwd causal", false, true, 128, 1024, 410},
      {"fwd causal", false, true, 128, 2048, 484},
      {"fwd causal", false, true, 128, 4096, 518},
      {"fwd causal", false, true, 128, 8192, 529},
      {"fwd causal", false, true, 128, 16384, 539},
      {"bwd", true, false, 128, 1024, 408},
      {"bwd", true, false, 128, 2048, 465},
      {"bwd", true, false, 128, 4096, 499},
      {"bwd", true, false, 128, 8192, 518},
      {"fwd d64", false, false, 64, 512, 335},
      {"fwd d64", false, false, 64, 1024, 373},
      {"fwd d64", false, false, 64, 2048, 395},
      {"fwd d64", false, false, 64, 4096, 408},
      {"fwd d64", false, false, 64, 8192, 412},
      {"fwd d64 causal", false, true, 64, 512, 225},
      {"fwd d64 causal", false, true, 64, 1024, 288},
      {"fwd d64 causal", false, true, 64, 2048, 334},
      {"fwd d64 causal", false, true, 64, 4096, 363},
      {"fwd d64 causal", false, true, 64, 8192, 379},
      {"fwd d64 causal", false, true, 64, 16384, 388},
      {"fwd d256", false, false, 256, 512, 470},
      {"fwd d256", false, false, 256, 1024, 546},
      {"fwd d256", false, false, 256, 2048, 580},
      {"fwd d256", false, false, 256, 4096, 581},
      {"fwd d256", false, false, 256, 8192, 580},
      {"fwd d256 causal", false, true, 256, 512, 308},
      {"fwd d256 causal", false, true, 256, 1024, 391},
      {"fwd d256 causal", false, true, 256, 2048, 450},
      {"fwd d256 causal", false, true, 256, 4096, 483},
      {"fwd d256 causal", false, true, 256, 8192, 497},
      {"fwd d256 causal", false, true, 256, 16384, 509},
  };
  for (const Point& p : kPoints) {
    AttentionDesc a = benchmark_attention(p.seqlen, kCudnn, p.backward, p.causal);
    a.heads_q = a.heads_kv = 2048 / p.head_dim;
    a.head_dim = p.head_dim;
    EXPECT_NEAR(model_tflops(a), p.tflops, 0.13 * p.tflops) << p.row << " at seqlen " << p.seqlen;
  }
}

// A published forward + backward figure (rated over 3.5 × the forward FLOPs): TFLOP/s by
// sequence length, without and with a causal mask; 0 where the figure hides a label or the
// point set a constant.
struct FwdBwdPoint {
  uint64_t seqlen;
  double non_causal, causal;
};

// The model's forward + backward rate of `impl` at `head_dim` (the figures' 16k tokens and
// hidden 2048: 2048 / head_dim heads) on `part` within `tolerance` of every point, and with
// `never_faster` at or below it.
void expect_fwd_bwd_figure(const GpuPreset& part, AttentionImpl impl, uint64_t head_dim,
                           std::span<const FwdBwdPoint> points, double tolerance,
                           bool never_faster) {
  const auto call = [&](uint64_t seqlen, bool backward, bool causal) {
    AttentionDesc a = benchmark_attention(seqlen, impl, backward, causal);
    a.heads_q = a.heads_kv = 2048 / head_dim;
    a.head_dim = head_dim;
    return a;
  };
  for (const FwdBwdPoint& p : points) {
    for (const bool causal : {false, true}) {
      const double published = causal ? p.causal : p.non_causal;
      if (published == 0) continue;
      const double model =
          combined_tflops(part, {call(p.seqlen, false, causal), call(p.seqlen, true, causal)});
      const std::string where = fmt::format("{} {} d{} at seqlen {}", part.key,
                                            causal ? "causal" : "non-causal", head_dim, p.seqlen);
      EXPECT_NEAR(model, published, tolerance * published) << where;
      if (never_faster) {
        EXPECT_LT(model, published) << where;
      }
    }
  }
}

TEST(AttentionModel, Fa2ForwardPlusBackwardMatchesPublishedH100Figure) {
  // [fa2-h100]: no point of it set a constant.
  constexpr FwdBwdPoint kPoints[] = {{512, 248, 163},  {1024, 294, 221}, {2048, 320, 265},
                                     {4096, 326, 294}, {8192, 335, 308}, {16384, 338, 328}};
  expect_fwd_bwd_figure(h100_at_1830(), kFa2, 128, kPoints, 0.10, false);
}

// [fa2-a100]: FlashAttention-2's forward + backward on an A100 80GB SXM4, batch × seqlen = 16k
// tokens, hidden 2048 (16 heads of 128), clock not locked (the preset's sustained clock, as the
// [fa2] plateaus are taken). Only the forward plateau came from the same paper (its abstract's
// 73 %); the backward plateau is an estimate and s0 was fitted on H100 figures, so every point
// here is a check. The model comes out 0.90 (causal, 512) to 0.985 (causal, 8k: a Llama 3 8B
// layer's shape) of the published rate, never faster. Non-causal at 512 and 1k: the figure's
// bar labels are hidden behind its legend.
TEST(AttentionModel, Fa2ForwardPlusBackwardMatchesPublishedA100Figure) {
  constexpr FwdBwdPoint kPoints[] = {{512, 0, 99},     {1024, 0, 133},   {2048, 187, 155},
                                     {4096, 196, 173}, {8192, 201, 182}, {16384, 203, 189}};
  expect_fwd_bwd_figure(gpu("a100"), kFa2, 128, kPoints, 0.11, true);
}

// [fa2-a100-xf]: PyTorch's memory-efficient kernels (xFormers' CUTLASS ones) on the same A100
// figure. Three points set constants (non-causal head dim 128 at 512 and 16k: the rate relative
// to FA2 and s0; non-causal head dim 64 at 16k: its head-dim rate) and are left out; every other
// point is a check. The model is 0.85 (causal head dim 64, 512) to 1.04 (causal head dim 64,
// 16k) of them: it inherits FA2's A100 curve, 0.90-0.985 of its own points.
TEST(AttentionModel, MemEfficientForwardPlusBackwardMatchesPublishedA100Figure) {
  constexpr AttentionImpl kMemEff = AttentionImpl::kMemEfficient;
  constexpr FwdBwdPoint kHeadDim128[] = {{512, 0, 58},   {1024, 91, 72}, {2048, 95, 82},
                                         {4096, 96, 87}, {8192, 97, 91}, {16384, 0, 92}};
  expect_fwd_bwd_figure(gpu("a100"), kMemEff, 128, kHeadDim128, 0.16, false);
  constexpr FwdBwdPoint kHeadDim64[] = {{512, 68, 51},  {1024, 73, 60}, {2048, 76, 66},
                                        {4096, 77, 68}, {8192, 75, 69}, {16384, 0, 67}};
  expect_fwd_bwd_figure(gpu("a100"), kMemEff, 64, kHeadDim64, 0.16, false);
}

// The memory-efficient forward by hand: FA2's plateau × 0.483, s0 = 96 keys, and for fp32
// inputs the TF32 peak over 3 (models.toml [attention]).
TEST(AttentionModel, MemEfficientByHand) {
  AttentionDesc a = benchmark_attention(16384, AttentionImpl::kMemEfficient, false, false);
  // One batch of 16 heads: 16 × 128 CTAs fill the 132 SMs.
  const double steps = 16.0 * 16384 * (16384 + 96.0);
  const double f16_rate = 989.4e12 * 0.376 * 0.483;
  Estimate e = attention_estimate(a, h100_at_1830(), params());
  EXPECT_NEAR(e.compute_us, steps * 4 * 128 / f16_rate * 1e6, 1e-6 * e.compute_us);
  EXPECT_NEAR(e.duration.as_us(), 4.0 + e.compute_us, 1e-3);
  a.dtype = DType::kF32;
  e = attention_estimate(a, h100_at_1830(), params());
  EXPECT_NEAR(e.compute_us, steps * 4 * 128 / (494.7e12 / 3 * 0.376 * 0.483) * 1e6,
              1e-6 * e.compute_us);
  // The backward: FA2's backward plateau at the same rate and the same s0, 2.5 × the FLOPs.
  a.dtype = DType::kF16;
  a.backward = true;
  e = attention_estimate(a, h100_at_1830(), params());
  EXPECT_NEAR(e.compute_us, steps * 4 * 128 * 2.5 / (989.4e12 * 0.331 * 0.483) * 1e6,
              1e-6 * e.compute_us);
  // Head dim 64: its own rate, 0.765.
  a.backward = false;
  a.head_dim = 64;
  a.heads_q = a.heads_kv = 32;
  e = attention_estimate(a, h100_at_1830(), params());
  EXPECT_NEAR(e.compute_us, 2 * steps * 4 * 64 / (f16_rate * 0.765) * 1e6, 1e-6 * e.compute_us);
}

TEST(AttentionModel, HeadDimRateByHand) {
  // Linear in the head dim between the anchors 64 (0.876), 128 (1) and 256 (0.881), the nearest
  // anchor outside them (models.toml, [attention]).
  const ModelParams::HeadDimRates& fa2 = params().attention_fa2_head_dim;
  EXPECT_DOUBLE_EQ(head_dim_rate(fa2, 32), 0.876);
  EXPECT_DOUBLE_EQ(head_dim_rate(fa2, 64), 0.876);
  EXPECT_DOUBLE_EQ(head_dim_rate(fa2, 96), 0.876 + 0.124 / 2);
  EXPECT_DOUBLE_EQ(head_dim_rate(fa2, 128), 1.0);
  EXPECT_DOUBLE_EQ(head_dim_rate(fa2, 192), 1.0 - 0.119 / 2);
  EXPECT_DOUBLE_EQ(head_dim_rate(fa2, 256), 0.881);
  EXPECT_DOUBLE_EQ(head_dim_rate(fa2, 512), 0.881);
  // Only the compute term moves: the same FLOPs at head dim 64 take 1 / 0.876 as long.
  AttentionDesc d128 = benchmark_attention(16384, kFa2, false, false), d64 = d128;
  d64.heads_q = d64.heads_kv = 32;
  d64.head_dim = 64;
  const Estimate e128 = attention_estimate(d128, h100_at_1830(), params());
  const Estimate e64 = attention_estimate(d64, h100_at_1830(), params());
  EXPECT_DOUBLE_EQ(e64.flops, e128.flops);
  EXPECT_NEAR(e64.compute_us, e128.compute_us / 0.876, 1e-6 * e128.compute_us);
}

// Head dim 64 (32 heads of 64, the same 16k tokens and hidden 2048): only the 16k non-causal
// forward points set fa2_head_dim_64 and fa3_head_dim_64; every other point is held out, with
// the backward taking the forward's rate. The model is 0.94-1.07 of the H100 points and
// 0.885-0.95 of the A100's. FA3 below 2k is left out: there its head-dim-64 kernel loses more
// than its rate at 16k says (model 1.19 of the causal 512 and 1.21 of the causal 1k points).
TEST(AttentionModel, HeadDim64MatchesPublishedPointsNotUsedForItsRate) {
  const auto at64 = [](uint64_t seqlen, AttentionImpl impl, bool backward, bool causal) {
    AttentionDesc a = benchmark_attention(seqlen, impl, backward, causal);
    a.heads_q = a.heads_kv = 32;
    a.head_dim = 64;
    return a;
  };
  struct Point {
    const char* row;
    AttentionImpl impl;
    bool causal, with_backward, a100;
    uint64_t seqlen;
    double tflops;
  };
  std::vector<Point> points;
  const uint64_t kLengths[] = {512, 1024, 2048, 4096, 8192, 16384};
  // [fa3-fwd], head dim 64, forward
  const double fa2_fwd[] = {282, 306, 318, 321, 322, 324},
               fa2_fwd_c[] = {180, 229, 262, 284, 295, 299};
  const double fa3_fwd[] = {333, 392, 460, 476, 496, 497},
               fa3_fwd_c[] = {197, 265, 371, 420, 460, 473};
  // [fa2-h100] and [fa2-a100], head dim 64, forward + backward
  const double h100[] = {215, 254, 274, 288, 294, 296}, h100_c[] = {141, 192, 232, 257, 273, 284};
  const double a100_c[] = {88, 119, 140, 156, 165, 171};
  for (int i = 0; i < 6; ++i) {
    const uint64_t s = kLengths[i];
    if (s != 16384) points.push_back({"FA2 fwd", kFa2, false, false, false, s, fa2_fwd[i]});
    points.push_back({"FA2 fwd causal", kFa2, true, false, false, s, fa2_fwd_c[i]});
    if (s >= 2048 && s != 16384)
      points.push_back({"FA3 fwd", kFa3, false, false, false, s, fa3_fwd[i]});
    if (s >= 2048) points.push_back({"FA3 fwd causal", kFa3, true, false, false, s, fa3_fwd_c[i]});
    points.push_back({"FA2 fwd+bwd H100", kFa2, false, true, false, s, h100[i]});
    points.push_back({"FA2 fwd+bwd H100 causal", kFa2, true, true, false, s, h100_c[i]});
    points.push_back({"FA2 fwd+bwd A100 causal", kFa2, true, true, true, s, a100_c[i]});
  }
  for (const Point& p : points) {
    const GpuPreset& part = p.a100 ? gpu("a100") : h100_at_1830();
    const AttentionDesc fwd = at64(p.seqlen, p.impl, false, p.causal);
    const double model = p.with_backward
                             ? combined_tflops(part, {fwd, at64(p.seqlen, p.impl, true, p.causal)})
                             : combined_tflops(part, {fwd});
    // The A100's curve is slow on short sequences at every head dim (0.90 at 512, head dim 128:
    // Fa2ForwardPlusBackwardMatchesPublishedA100Figure), here 0.885.
    const double tolerance = p.a100 ? 0.12 : 0.10;
    EXPECT_NEAR(model, p.tflops, tolerance * p.tflops) << p.row << " at seqlen " << p.seqlen;
  }
}

TEST(AttentionModel, CausalMaskCostsMostOnShortSequences) {
  // [fa3-fwd]: causal over non-causal FA3 forward rate is 292 / 467 = 0.63 at seqlen 512 and
  // 616 / 648 = 0.95 at 16k: the diagonal tiles and per-tile costs weigh on short sequences.
  const auto ratio = [](uint64_t s) {
    return model_tflops(benchmark_attention(s, kFa3, false, true)) /
           model_tflops(benchmark_attention(s, kFa3, false, false));
  };
  EXPECT_NEAR(ratio(512), 292.0 / 467, 0.10 * 292.0 / 467);
  EXPECT_NEAR(ratio(16384), 616.0 / 648, 0.10 * 616.0 / 648);
}

TEST(AttentionModel, BackwardOverForwardTimeFallsWithLength) {
  // [fa3]/[fa3-fwd]: FA3 backward over forward time is 2.5 × 467 / 316 = 3.69 at seqlen 512 and
  // 2.5 × 648 / 561 = 2.89 at 16k; not one ratio at every length.
  const auto ratio = [](uint64_t s) {
    return attention_estimate(benchmark_attention(s, kFa3, true, false), h100_at_1830(), params())
               .duration.as_seconds() /
           attention_estimate(benchmark_attention(s, kFa3, false, false), h100_at_1830(), params())
               .duration.as_seconds();
  };
  EXPECT_NEAR(ratio(512), 2.5 * 467 / 316, 0.10 * 2.5 * 467 / 316);
  EXPECT_NEAR(ratio(16384), 2.5 * 648 / 561, 0.10 * 2.5 * 648 / 561);
  EXPECT_GT(ratio(512), 1.15 * ratio(16384));
}

TEST(AttentionModel, Fa3IsFasterOnHopperAndFallsBackToFa2Elsewhere) {
  AttentionDesc fa2 = gpt_attention(), fa3 = gpt_attention();
  fa3.impl = AttentionImpl::kFlash3;
  EXPECT_LT(attention_estimate(fa3, gpu("h100"), params()).duration,
            attention_estimate(fa2, gpu("h100"), params()).duration);
  EXPECT_EQ(attention_estimate(fa3, gpu("a100"), params()).duration,
            attention_estimate(fa2, gpu("a100"), params()).duration);
}

TEST(AttentionModel, FlexRunsAtItsPublishedRateOverFa2) {
  // FlexAttention is FA2's curve at FA2's rate × flex_forward / flex_backward ([flex-gtc] on
  // Hopper: 1.25 and 1.03; [flex-blog] on A100: 0.90 and 0.85): the compute part of the time
  // divides by that factor, the fixed 4 µs does not.
  struct Case {
    std::string_view gpu;
    bool backward;
    double factor;
  };
  for (const Case& c : {Case{"h100", false, 1.25}, Case{"h100", true, 1.03},
                        Case{"a100", false, 0.90}, Case{"a100", true, 0.85}}) {
    AttentionDesc fa2 = gpt_attention(), flex = gpt_attention();
    fa2.backward = flex.backward = c.backward;
    flex.impl = AttentionImpl::kFlex;
    const double fa2_us = attention_estimate(fa2, gpu(c.gpu), params()).duration.as_us();
    const double flex_us = attention_estimate(flex, gpu(c.gpu), params()).duration.as_us();
    EXPECT_NEAR(flex_us - 4.0, (fa2_us - 4.0) / c.factor, 1e-3) << c.gpu << c.backward;
  }
}

TEST(AttentionModel, TinyCallIsNotFreeAndLongerSequencesCostMore) {
  AttentionDesc a = gpt_attention();
  a.batch = 1;
  a.heads_q = a.heads_kv = 1;
  SimTime previous = SimTime::zero();
  for (uint64_t s = 1; s <= 65536; s *= 4) {
    a.seq_q = a.seq_k = s;
    const SimTime t = attention_estimate(a, gpu("h100"), params()).duration;
    EXPECT_GT(t, previous);
    previous = t;
  }
}

TEST(MemoryBoundModel, StreamingKernelByHand) {
  // 1 GiB read + 1 GiB written on H100: 2^31 B / (3350 GB/s × 0.90) = 712.3 µs, plus 3 µs.
  MemoryOpDesc op;
  op.bytes_read = op.bytes_written = 1ull << 30;
  const Estimate e = memory_op_estimate(op, gpu("h100"), params());
  EXPECT_NEAR(e.duration.as_us(), 3.0 + 2147483648.0 / (3350e9 * 0.90) * 1e6, 1e-3);
  // An empty one costs the floor.
  EXPECT_EQ(memory_op_estimate(MemoryOpDesc{}, gpu("h100"), params()).duration, SimTime::us(3.0));
}

TEST(ModelParams, BadFilesNameTheKey) {
  const std::string good = R"(
[gemm]
tile_m = 128
tile_n = 128
tile_k = 64
narrow_tile_step = 8
smem_bytes_per_clock = 128
tile_cost_k = 207
overhead_us = 4.0
misaligned_rate = 0.686
[attention]
tile_q = 128
overhead_us = 4.0
backward_flops_factor = 2.5
fa2_forward_s0 = 105.0
fa2_backward_s0 = 271.0
fa3_forward_s0 = 207.0
fa3_backward_s0 = 420.0
fa2_head_dim_64 = 0.876
fa2_head_dim_256 = 0.881
fa3_head_dim_64 = 0.767
fa3_head_dim_256 = 1.167
cudnn_forward_s0 = 105.0
cudnn_backward_s0 = 374.0
cudnn_head_dim_64 = 0.694
cudnn_head_dim_256 = 0.976
mem_efficient_rate = 0.483
mem_efficient_s0 = 96.0
mem_efficient_head_dim_64 = 0.765
mem_efficient_head_dim_256 = 0.881
f32_mma_passes = 3
[memory_bound]
floor_us = 3.0
[gpu.default]
gemm_efficiency = 0.75
gemm_efficiency_k = 4096
fa2_forward = 0.35
fa2_backward = 0.28
fa3_forward = 0.0
fa3_backward = 0.0
cudnn_forward = 0.0
cudnn_backward = 0.0
flex_forward = 1.25
flex_backward = 1.03
memory_efficiency = 0.85
gemm_clock_mhz = 0.0
attention_clock_mhz = 0.0
)";
  EXPECT_NO_THROW(ModelParams::from_string(good, "m.toml"));
  std::string too_high = good;
  too_high.replace(too_high.find("0.75"), 4, "1.75");
  EXPECT_THROW(
      {
        try {
          ModelParams::from_string(too_high, "m.toml");
        } catch (const DataError& e) {
          EXPECT_NE(std::string(e.what()).find("m.toml:"), std::string::npos);
          EXPECT_NE(std::string(e.what()).find("gpu.default.gemm_efficiency"), std::string::npos);
          throw;
        }
      },
      DataError);
  std::string no_default = good;
  no_default.replace(no_default.find("gpu.default"), 11, "gpu.h100");
  EXPECT_THROW(ModelParams::from_string(no_default, "m.toml"), DataError);
}

TEST(ModelParams, EveryPresetHasItsOwnRow) {
  for (const GpuPreset& g : GpuCatalog::builtin().presets()) {
    EXPECT_TRUE(params().per_gpu.contains(g.key)) << g.key;
  }
}

}  // namespace
}  // namespace phantora::kernels
