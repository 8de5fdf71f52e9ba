#include "phantora/kernels/analytical_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "phantora/overloaded.hpp"

namespace phantora::kernels {
namespace {

double ceil_div(uint64_t x, uint64_t t) {
  return static_cast<double>((x + t - 1) / t);
}
double round_up(uint64_t x, uint64_t t) {
  return ceil_div(x, t) * static_cast<double>(t);
}

// Share of the SMs a launch of `tiles` independent blocks keeps busy: min(1, tiles / SMs),
// and at least one SM's worth.
double fill(double tiles, const GpuPreset& gpu) {
  const double sms = std::max(1, gpu.device.multiprocessor_count);
  return std::clamp(tiles / sms, 1.0 / sms, 1.0);
}

SimTime seconds(double s) {
  return SimTime::seconds(s);
}

// The output tile's side along a dimension: the full side, or for a dimension below it the
// multiple of `step` that covers it (cuBLASLt's 128 × 8 … 128 × 120 tiles and their transposes).
uint64_t tile_side(uint64_t dim, uint64_t full, uint64_t step) {
  if (dim >= full) return full;
  return std::min(full, static_cast<uint64_t>(round_up(std::max<uint64_t>(dim, 1), step)));
}

}  // namespace

double peak_flops(const GpuPerf& perf, DType input, DType compute) {
  double tflops = 0;
  switch (input) {
    case DType::kBF16:
      tflops = perf.bf16_tflops;
      break;
    case DType::kF16:
      tflops = perf.fp16_tflops;
      break;
    case DType::kF8E4M3:
    case DType::kF8E5M2:
      tflops = perf.fp8_tflops > 0 ? perf.fp8_tflops : perf.fp16_tflops;
      break;
    case DType::kI8:
      tflops = perf.fp8_tflops > 0 ? perf.fp8_tflops : 2 * perf.fp16_tflops;
      break;
    case DType::kTF32:
      tflops = perf.tf32_tflops;
      break;
    case DType::kF32:
    case DType::kI32:
      tflops = compute == DType::kTF32 ? perf.tf32_tflops : perf.fp32_tflops;
      break;
    case DType::kF64:
      tflops = perf.fp32_tflops;
      break;
  }
  return tflops * 1e12;
}

double clock_scale(const GpuPreset& gpu, double measured_clock_mhz) {
  return measured_clock_mhz > 0 ? gpu.perf.sustained_clock_mhz / measured_clock_mhz : 1.0;
}

namespace {

// The alignment of a column-major operand's columns (each `rows` elements long, packed): the
// largest power of two up to 16 dividing the bytes between two columns. A single row or column
// is one contiguous run, aligned whatever its length.
uint64_t column_alignment(uint64_t rows, uint64_t columns, DType t) {
  constexpr uint64_t kFull = 16;
  if (rows <= 1 || columns <= 1) return kFull;
  const uint64_t stride = rows * dtype_bytes(t);
  uint64_t a = kFull;
  while (a > 1 && stride % a != 0) a /= 2;
  return a;
}

// Whether the GEMM runs on tensor cores (peak_flops() takes a tensor-core peak for it): every
// input type but f32 without TF32 compute and f64.
bool on_tensor_cores(const GemmDesc& d) {
  if (d.a == DType::kF64) return false;
  if (d.a == DType::kF32 || d.a == DType::kI32) return d.compute == DType::kTF32;
  return true;
}

}  // namespace

uint64_t gemm_alignment_bytes(const GemmDesc& d) {
  // Column-major (cuBLAS): A is m x k (stored k x m when transposed), B is k x n (n x k), C is
  // m x n; each stored column is its leading dimension long.
  const uint64_t a = d.trans_a ? column_alignment(d.k, d.m, d.a) : column_alignment(d.m, d.k, d.a);
  const uint64_t b = d.trans_b ? column_alignment(d.n, d.k, d.b) : column_alignment(d.k, d.n, d.b);
  const uint64_t c = column_alignment(d.m, d.n, d.c);
  return std::min({a, b, c});
}

double gemm_flops(const GemmDesc& d) {
  return 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k) *
         static_cast<double>(d.batch);
}

double hbm_plateau_bytes_per_s(const GpuPreset& gpu, const ModelParams& params) {
  return gpu.perf.hbm.as_bytes_per_s() * params.for_gpu(gpu.key).memory_efficiency;
}

std::optional<Bandwidth> copy_link(wire::CopyKind kind, const GpuPerf& perf) {
  switch (kind) {
    case wire::CopyKind::kHostToDevice:
    case wire::CopyKind::kDeviceToHost:
      return perf.pcie;
    case wire::CopyKind::kPeer:
      return perf.nvlink_links > 0 && perf.nvlink.as_bytes_per_s() > 0 ? perf.nvlink : perf.pcie;
    case wire::CopyKind::kDeviceToDevice:
      return perf.hbm;
    case wire::CopyKind::kHostToHost:
      return std::nullopt;
  }
  throw std::invalid_argument("copy_link: unknown copy kind");
}

namespace {

// What a GEMM moves to and from HBM, by operand.
struct GemmBytes {
  double a_and_b = 0;    // A and B, each read once
  double c = 0;          // C written (and read first when it accumulates)
  double c_partial = 0;  // one fp32 partial of C, what each split-K slice writes
};

GemmBytes gemm_bytes(const GemmDesc& d) {
  const double m = static_cast<double>(d.m), n = static_cast<double>(d.n);
  const double k = static_cast<double>(d.k), batch = static_cast<double>(d.batch);
  const double c_passes = d.accumulate ? 2.0 : 1.0;
  return {batch * (m * k * static_cast<double>(dtype_bytes(d.a)) +
                   k * n * static_cast<double>(dtype_bytes(d.b))),
          batch * m * n * static_cast<double>(dtype_bytes(d.c)) * c_passes,
          batch * m * n * static_cast<double>(dtype_bytes(DType::kF32))};
}

// One way to run a GEMM: each output tile's K loop cut into `slices` (1: not split).
struct GemmPlan {
  double slices = 1;
  double waves = 0;
  double compute_s = 0;
  double memory_s = 0;
  double bytes = 0;     // the GEMM kernel's and, when split, the reduction's
  double reduce_s = 0;  // the split-K reduction kernel, 0 when not split
  double seconds() const { return std::max(compute_s, memory_s) + reduce_s; }
};

}  // namespace

double hbm_bytes(const GemmDesc& d) {
  const GemmBytes b = gemm_bytes(d);
  return b.a_and_b + b.c;
}

double hbm_bytes(const AttentionDesc& d) {
  // Forward reads Q, K, V and writes O and the log-sum-exp (f32); backward reads Q, K, V, O,
  // dO and the log-sum-exp, and writes dQ, dK, dV.
  const double elem = static_cast<double>(dtype_bytes(d.dtype));
  const double q = static_cast<double>(d.batch * d.heads_q * d.seq_q * d.head_dim) * elem;
  const double kv = static_cast<double>(d.batch * d.heads_kv * d.seq_k * d.head_dim) * elem;
  const double lse = 4.0 * static_cast<double>(d.batch * d.heads_q * d.seq_q);
  return d.backward ? 4 * q + 4 * kv + lse : 2 * q + 2 * kv + lse;
}

double hbm_bytes(const MemoryOpDesc& d) {
  return static_cast<double>(d.bytes_read) + static_cast<double>(d.bytes_written);
}

Estimate gemm_estimate(const GemmDesc& d, const GpuPreset& gpu, const ModelParams& params) {
  const ModelParams::PerGpu& eff = params.for_gpu(gpu.key);
  Estimate e;
  e.flops = gemm_flops(d);
  const double batch = static_cast<double>(d.batch);
  const double sms = std::max(1, gpu.device.multiprocessor_count);
  // Output tiles; tensor cores work on whole tiles, so a dimension that does not fill its last
  // tile pays for all of it. A dimension below the full tile runs on a narrower one.
  const uint64_t tile_m = tile_side(d.m, params.gemm_tile_m, params.gemm_narrow_tile_step);
  const uint64_t tile_n = tile_side(d.n, params.gemm_tile_n, params.gemm_narrow_tile_step);
  const double tiles = batch * ceil_div(d.m, tile_m) * ceil_div(d.n, tile_n);
  const double padded_k = round_up(d.k, params.gemm_tile_k);
  e.clock_scale = clock_scale(gpu, eff.gemm_clock_mhz);
  // Besides its main loop every tile (or slice) pays a fixed cost worth tile_cost_k of K: the
  // pipeline's fill and the epilogue, which short-K GEMMs feel most. The efficiency is a whole
  // GEMM's rate at K = gemm_efficiency_k, that cost included; the main loop's rate is above it.
  const double tile_cost_k = params.gemm_tile_cost_k;
  // Columns that do not start on 16-byte boundaries keep cuBLAS off its fastest kernels (TMA on
  // Hopper, 16-byte cp.async before it): their main loop runs at the misaligned rate.
  e.alignment_bytes = static_cast<double>(gemm_alignment_bytes(d));
  e.alignment_rate =
      e.alignment_bytes < 16 && on_tensor_cores(d) ? params.gemm_misaligned_rate : 1.0;
  const double mainloop_rate = peak_flops(gpu.perf, d.a, d.compute) * eff.gemm_efficiency *
                               e.clock_scale * (eff.gemm_efficiency_k + tile_cost_k) /
                               eff.gemm_efficiency_k * e.alignment_rate;
  // One step of K of one tile takes the longer of its products at an SM's share of the main
  // loop's rate and its operands' bytes through that SM's shared memory. The latter binds only
  // on narrow tiles, whose operands feed few products each: 128 × 8 reads 136 elements a step
  // for 1,024 products, 128 × 128 reads 256 for 16,384.
  const double tm = static_cast<double>(tile_m), tn = static_cast<double>(tile_n);
  const double products_s = 2.0 * tm * tn / (mainloop_rate / sms);
  const double operands_s =
      (tm * static_cast<double>(dtype_bytes(d.a)) + tn * static_cast<double>(dtype_bytes(d.b))) /
      (params.gemm_smem_bytes_per_clock * gpu.perf.sustained_clock_mhz * 1e6);
  const double tile_step_s = std::max(products_s, operands_s);
  const double hbm = hbm_plateau_bytes_per_s(gpu, params);
  const GemmBytes bytes = gemm_bytes(d);

  // Split-K: with fewer output tiles than SMs, cuBLAS cuts each tile's K loop into slices that
  // run side by side; each slice writes its fp32 partial of C to a workspace and a second
  // kernel (cublasLt's splitKreduce_kernel) reads them all and writes C, priced as any
  // memory-bound kernel (floor + bytes at the HBM plateau). The slices of all tiles fit one
  // wave, a slice holds at least one K tile, and the library is taken to pick the count that
  // runs fastest: more slices shorten the main loop and lengthen the reduction.
  const double max_slices =
      tiles < sms ? std::min(std::floor(sms / tiles), padded_k / params.gemm_tile_k) : 1.0;
  GemmPlan best;
  for (double s = 1; s <= max_slices; ++s) {
    GemmPlan p;
    p.slices = s;
    // Every SM works on one tile (or K slice) at a time: the kernel runs in whole waves, and
    // a partial last wave costs as long as a full one (133 tiles on 132 SMs: two waves).
    p.waves = std::ceil(tiles * s / sms);
    p.compute_s = p.waves * (padded_k / s + tile_cost_k) * tile_step_s;
    if (s == 1) {
      p.bytes = bytes.a_and_b + bytes.c;
      p.memory_s = p.bytes / hbm;
    } else {
      const double partials = s * bytes.c_partial;
      MemoryOpDesc reduction;
      reduction.op = "reduce";
      reduction.bytes_read = static_cast<uint64_t>(partials);
      reduction.bytes_written = static_cast<uint64_t>(bytes.c);
      p.memory_s = (bytes.a_and_b + partials) / hbm;
      p.reduce_s = memory_op_estimate(reduction, gpu, params).duration.as_seconds();
      p.bytes = bytes.a_and_b + partials + hbm_bytes(reduction);
    }
    if (s == 1 || p.seconds() < best.seconds()) best = p;
  }
  e.tile_m = tm;
  e.tile_n = tn;
  e.k_slices = best.slices;
  e.waves = best.waves;
  e.bytes = best.bytes;
  e.compute_us = best.compute_s * 1e6;
  e.memory_us = best.memory_s * 1e6;
  e.reduce_us = best.reduce_s * 1e6;
  e.duration = params.gemm_overhead + seconds(best.seconds());
  return e;
}

double attention_flops(const AttentionDesc& d, const ModelParams& params) {
  double f = 4.0 * static_cast<double>(d.batch) * static_cast<double>(d.heads_q) *
             static_cast<double>(d.seq_q) * static_cast<double>(d.seq_k) *
             static_cast<double>(d.head_dim);
  if (d.causal) f /= 2;
  if (d.backward) f *= params.attention_backward_flops_factor;
  return f;
}

double attention_peak_flops(const GpuPreset& gpu, const AttentionDesc& d,
                            const ModelParams& params) {
  if (d.dtype == DType::kF32) return gpu.perf.tf32_tflops * 1e12 / params.attention_f32_mma_passes;
  return peak_flops(gpu.perf, d.dtype, DType::kF32);
}

namespace {

// The long-sequence efficiency and the per-tile cost s0 of the kernel that runs this call. FA3
// and cuDNN's kernels have curves of their own, and take FA2's on a part without a figure
// (fa3_forward or cudnn_forward 0). FlexAttention is FA2's curve at its
// published rate relative to FA2 (the same algorithm in Triton, its tiles loop the same way).
// PyTorch's memory-efficient kernels are FA2's plateau at their published rate relative to FA2,
// with their own s0 and head-dim rates (both published only for forward + backward together).
// The plateaus are at head dim 128; another head dim scales them by the kernel's head-dim rate
// (measured forward, taken for the backward as well).
struct AttentionCurve {
  double plateau = 0;
  double s0 = 0;
};
AttentionCurve attention_curve(const AttentionDesc& d, const ModelParams::PerGpu& eff,
                               const ModelParams& params) {
  // Kernels with their own curve on this part: FA3, cuDNN's.
  struct OwnCurve {
    AttentionImpl impl;
    double forward, backward;
    const ModelParams::AttentionS0& s0;
    const ModelParams::HeadDimRates& head_dim;
  };
  for (const OwnCurve& c : {OwnCurve{AttentionImpl::kFlash3, eff.fa3_forward, eff.fa3_backward,
                                     params.attention_fa3_s0, params.attention_fa3_head_dim},
                            OwnCurve{AttentionImpl::kCudnn, eff.cudnn_forward, eff.cudnn_backward,
                                     params.attention_cudnn_s0, params.attention_cudnn_head_dim}}) {
    if (d.impl != c.impl || c.forward <= 0) continue;
    const double rate = head_dim_rate(c.head_dim, d.head_dim);
    return d.backward ? AttentionCurve{rate * c.backward, c.s0.backward}
                      : AttentionCurve{rate * c.forward, c.s0.forward};
  }
  const double fa2 = d.backward ? eff.fa2_backward : eff.fa2_forward;
  if (d.impl == AttentionImpl::kMemEfficient) {
    return {head_dim_rate(params.attention_mem_efficient_head_dim, d.head_dim) * fa2 *
                params.attention_mem_efficient_rate,
            params.attention_mem_efficient_s0};
  }
  const double flex = d.impl != AttentionImpl::kFlex ? 1.0
                      : d.backward                   ? eff.flex_backward
                                                     : eff.flex_forward;
  return {head_dim_rate(params.attention_fa2_head_dim, d.head_dim) * fa2 * flex,
          d.backward ? params.attention_fa2_s0.backward : params.attention_fa2_s0.forward};
}

// Loop steps one CTA runs for its tile [r0, r1) of the parallel dimension. Causal masks are
// aligned bottom-right, as in FlashAttention 2.1 and later: query r sees key c when
// c <= r + sk - sq. A forward CTA loops up to the last key its last query sees, a backward CTA
// from the first query that sees its first key, so the tile on the diagonal is computed whole
// although about half of it is masked.
double causal_loop_length(const AttentionDesc& d, int64_t r0, int64_t r1) {
  const int64_t sq = static_cast<int64_t>(d.seq_q), sk = static_cast<int64_t>(d.seq_k);
  const int64_t offset = sk - sq;
  if (d.backward) return static_cast<double>(sq - std::clamp(r0 - offset, int64_t{0}, sq));
  return static_cast<double>(std::clamp(r1 + offset, int64_t{0}, sk));
}

}  // namespace

double attention_loop_work(const AttentionDesc& d, uint64_t tile, double s0) {
  const uint64_t rows = d.backward ? d.seq_k : d.seq_q;
  const double loop = static_cast<double>(d.backward ? d.seq_q : d.seq_k);
  if (!d.causal) return static_cast<double>(rows) * (loop + s0);
  // Causal CTAs differ in length: sum them tile by tile.
  double work = 0;
  for (uint64_t r0 = 0; r0 < rows; r0 += tile) {
    const uint64_t r1 = std::min(r0 + tile, rows);
    const double length = causal_loop_length(d, static_cast<int64_t>(r0), static_cast<int64_t>(r1));
    work += static_cast<double>(r1 - r0) * (length + s0);
  }
  return work;
}

double head_dim_rate(const ModelParams::HeadDimRates& rates, uint64_t head_dim) {
  const double d = static_cast<double>(head_dim);
  if (d <= 64) return rates.d64;
  if (d < 128) return rates.d64 + (1.0 - rates.d64) * (d - 64) / 64;
  if (d < 256) return 1.0 + (rates.d256 - 1.0) * (d - 128) / 128;
  return rates.d256;
}

Estimate attention_estimate(const AttentionDesc& d, const GpuPreset& gpu,
                            const ModelParams& params) {
  const ModelParams::PerGpu& eff = params.for_gpu(gpu.key);
  Estimate e;
  e.flops = attention_flops(d, params);
  const AttentionCurve curve = attention_curve(d, eff, params);
  // The forward pass parallelises over query blocks, the backward over key blocks.
  const uint64_t seq_blocks = d.backward ? d.seq_k : d.seq_q;
  const double tiles = static_cast<double>(d.batch) * static_cast<double>(d.heads_q) *
                       ceil_div(seq_blocks, params.attention_tile_q);
  e.clock_scale = clock_scale(gpu, eff.attention_clock_mhz);
  const double rate = attention_peak_flops(gpu, d, params) * curve.plateau * e.clock_scale;
  // Every loop step of every row costs what a useful one does at the plateau rate (4·d FLOPs
  // forward, 2.5 × that backward), whether it is masked or the per-tile cost s0.
  const double flops_per_step = 4.0 * static_cast<double>(d.head_dim) *
                                (d.backward ? params.attention_backward_flops_factor : 1.0);
  const double steps = static_cast<double>(d.batch) * static_cast<double>(d.heads_q) *
                       attention_loop_work(d, params.attention_tile_q, curve.s0);
  const double compute_s = steps * flops_per_step / rate / fill(tiles, gpu);

  e.bytes = hbm_bytes(d);
  const double memory_s = e.bytes / hbm_plateau_bytes_per_s(gpu, params);

  e.compute_us = compute_s * 1e6;
  e.memory_us = memory_s * 1e6;
  e.duration = params.attention_overhead + seconds(std::max(compute_s, memory_s));
  return e;
}

Estimate memory_op_estimate(const MemoryOpDesc& d, const GpuPreset& gpu,
                            const ModelParams& params) {
  Estimate e;
  e.bytes = hbm_bytes(d);
  const double memory_s = e.bytes / hbm_plateau_bytes_per_s(gpu, params);
  e.memory_us = memory_s * 1e6;
  e.duration = params.memory_floor + seconds(memory_s);
  return e;
}

std::optional<Estimate> analytical_estimate(const OpDesc& op, const GpuPreset& gpu,
                                            const ModelParams& params) {
  return std::visit(Overloaded{
                        [&](const GemmDesc& d) -> std::optional<Estimate> {
                          return gemm_estimate(d, gpu, params);
                        },
                        [&](const AttentionDesc& d) -> std::optional<Estimate> {
                          return attention_estimate(d, gpu, params);
                        },
                        [&](const ConvDesc& d) -> std::optional<Estimate> {
                          return conv_estimate(d, gpu, params);
                        },
                        [&](const MemoryOpDesc& d) -> std::optional<Estimate> {
                          return memory_op_estimate(d, gpu, params);
                        },
                        [](const auto&) -> std::optional<Estimate> { return std::nullopt; },
                    },
                    op);
}

}  // namespace phantora::kernels
