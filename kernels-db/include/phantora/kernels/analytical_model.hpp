// The analytical models: what a GEMM, an attention call or a memory-bound kernel costs on a GPU
// preset, from its shape, the preset's peak figures (gpus.toml) and calibrated efficiencies
// (models.toml, each with its source). docs/cost-model.md derives every formula.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "phantora/units.hpp"

namespace phantora::kernels {

struct ModelParams {
  struct PerGpu {
    double gemm_efficiency = 0;
    // K of the shape gemm_efficiency was measured on: that rate includes its tiles' fixed cost
    // (gemm_tile_cost_k), so the main loop alone runs (K + tile cost) / K faster.
    double gemm_efficiency_k = 0;
    // Attention kernels' efficiency on long sequences (the plateau of their curve; the curve
    // itself comes from AttentionS0).
    double fa2_forward = 0, fa2_backward = 0;
    double fa3_forward = 0, fa3_backward = 0;      // 0: not available on this part
    double cudnn_forward = 0, cudnn_backward = 0;  // 0: no figure on this part (FA2's curve)
    // FlexAttention's Triton kernels: their rate over FA2's at the same shape (FA2's curve).
    double flex_forward = 0, flex_backward = 0;
    double memory_efficiency = 0;
    // The SM clock (MHz) the GEMM and attention efficiencies were measured at; 0: the preset's
    // own sustained clock. See clock_scale().
    double gemm_clock_mhz = 0, attention_clock_mhz = 0;
  };

  uint64_t gemm_tile_m = 0, gemm_tile_n = 0, gemm_tile_k = 0;
  // A dimension below the tile runs on a tile narrowed to the multiple of this that covers it.
  uint64_t gemm_narrow_tile_step = 0;
  // What one SM's shared memory delivers per clock: the floor under a narrow tile's main loop.
  double gemm_smem_bytes_per_clock = 0;
  // What one output tile (or split-K slice) costs besides its main loop (pipeline fill, writing
  // its outputs), in K elements of main-loop work.
  double gemm_tile_cost_k = 0;
  SimTime gemm_overhead;
  // A tensor-core GEMM's main-loop rate when an operand's columns do not start on 16-byte
  // boundaries, over its rate when they do (gemm_alignment_bytes()).
  double gemm_misaligned_rate = 1;
  // An attention CTA owns attention_tile_q rows (queries forward, keys backward) and loops over
  // the other sequence; besides its loop it pays a fixed cost worth s0 loop steps (prologue,
  // rescaling, writing its outputs), so efficiency(s) = plateau × s / (s + s0) without a mask.
  struct AttentionS0 {
    double forward = 0, backward = 0;  // in loop steps (keys forward, queries backward)
  };
  // A kernel's rate at head dim 64 and 256 over its rate at 128, the same FLOPs (per kernel, as
  // s0): linear in the head dim between 64, 128 and 256, the nearest anchor outside them.
  struct HeadDimRates {
    double d64 = 1, d256 = 1;
  };
  uint64_t attention_tile_q = 0;
  SimTime attention_overhead;
  double attention_backward_flops_factor = 0;
  AttentionS0 attention_fa2_s0, attention_fa3_s0, attention_cudnn_s0;
  HeadDimRates attention_fa2_head_dim, attention_fa3_head_dim, attention_cudnn_head_dim;
  // PyTorch's memory-efficient attention (AttentionImpl::kMemEfficient): FA2's plateau times
  // this rate, with its own s0 (both passes) and head-dim rates.
  double attention_mem_efficient_rate = 0;
  double attention_mem_efficient_s0 = 0;
  HeadDimRates attention_mem_efficient_head_dim;
  // An fp32 attention kernel's tensor-core passes per product: it runs at the TF32 peak over
  // this (3xTF32).
  double attention_f32_mma_passes = 0;
  SimTime memory_floor;
  std::map<std::string, PerGpu, std::less<>> per_gpu;  // by preset key; "default" is required

  // The row of this preset, or the "default" row.
  const PerGpu& for_gpu(std::string_view preset_key) const;

  static const ModelParams& builtin();
  static ModelParams from_file(const std::filesystem::path& path);
  static ModelParams from_string(std::string_view toml_text, std::string_view source);
};

// A modelled duration with the quantities it came from (for `phantora db show` and tests).
struct Estimate {
  SimTime duration;
  double flops = 0;        // useful FLOPs of the operation (not the tile-padded ones)
  double bytes = 0;        // bytes moved to and from HBM
  double compute_us = 0;   // the compute term (0 for memory-bound kernels)
  double memory_us = 0;    // the memory term
  double clock_scale = 1;  // the compute rate's factor for the sustained clock (clock_scale())
  double waves = 0;        // GEMMs: whole waves of tiles (or K slices) over the SMs
  double tile_m = 0, tile_n = 0;  // GEMMs: the output tile (narrowed for a dimension below it)
  double k_slices = 1;            // GEMMs: how many slices each output tile's K loop is split into
  double reduce_us = 0;           // GEMMs split along K: the kernel that sums the slices' partials
  double alignment_bytes = 16;    // GEMMs: gemm_alignment_bytes()
  double alignment_rate = 1;      // GEMMs: the main loop's factor for it (1 when aligned)
  // Convolutions in NCHW on tensor cores: the kernels that transpose their tensors to NHWC and
  // the result back (conv_estimate()).
  double layout_us = 0;
};

// An efficiency measured at `measured_clock_mhz` holds at the preset's sustained clock scaled by
// sustained / measured (compute work is done per SM clock); 1 when measured_clock_mhz is 0.
// Memory-bound work is not scaled: HBM has its own clock.
double clock_scale(const GpuPreset& gpu, double measured_clock_mhz);

// Dense peak of the tensor cores (or CUDA cores) that run a GEMM with these input and compute
// types, in FLOP/s: bf16/f16/fp8 inputs use their tensor-core peak (fp8 falls back to f16 on a
// part without FP8); f32 inputs with tf32 compute use the TF32 peak, otherwise the FP32 peak;
// f64 uses the FP32 figure (A100 and H100 FP64 tensor peaks equal their FP32 peaks, [ds]);
// i8 uses the FP8 peak, or twice the f16 peak where there is no FP8.
double peak_flops(const GpuPerf& perf, DType input, DType compute);

double gemm_flops(const GemmDesc& d);  // 2·m·n·k·batch
// The alignment, in bytes and at most 16, of the columns of A, B and C as cuBLAS stores them
// (column-major; the rows of PyTorch's row-major tensors), each operand taken as packed: its
// leading dimension is its row count (m, or k when transposed, for A; k, or n, for B; m for C),
// as PyTorch passes contiguous tensors. An operand of one row or one column is contiguous and
// does not count. Below 16, Hopper's TMA and the 16-byte cp.async loads before it cannot load
// the columns and cuBLAS runs slower kernels (ModelParams::gemm_misaligned_rate).
uint64_t gemm_alignment_bytes(const GemmDesc& d);
double attention_flops(const AttentionDesc& d, const ModelParams& params);
// The dense peak an attention kernel's matrix products run at: the tensor cores' for 16-bit
// inputs; for fp32 inputs the TF32 peak over attention_f32_mma_passes (the only fp32 kernels,
// PyTorch's memory-efficient ones, split each fp32 operand into two TF32 parts).
double attention_peak_flops(const GpuPreset& gpu, const AttentionDesc& d,
                            const ModelParams& params);
// The loop steps of one (batch, head) of an attention call, summed over its rows (queries
// forward, keys backward): each row costs its CTA's loop length plus s0; CTAs own `tile` rows.
// Without a mask this is rows × (loop + s0); with one, each CTA loops to the end of its
// diagonal tile (docs/cost-model.md, "Attention").
double attention_loop_work(const AttentionDesc& d, uint64_t tile, double s0);
// A kernel's rate at head dim `head_dim` over its rate at 128 (ModelParams::HeadDimRates).
double head_dim_rate(const ModelParams::HeadDimRates& rates, uint64_t head_dim);

// The bandwidth large memory-bound kernels reach: HBM's peak × memory_efficiency.
double hbm_plateau_bytes_per_s(const GpuPreset& gpu, const ModelParams& params);

// The link a copy of this kind crosses on this part, at its peak: PCIe between host and device,
// NVLink between peers (PCIe on a part without it: a preset file may say 0 links), HBM within
// the device. None for a copy between two host buffers, which is the host's memcpy.
std::optional<Bandwidth> copy_link(wire::CopyKind kind, const GpuPerf& perf);

// Bytes an operation moves to and from HBM by its description: each operand read once and each
// result written once (a GEMM's C twice when it accumulates). The estimates' memory term (a GEMM
// split along K moves its fp32 partials instead of C, and its reduction's: Estimate::bytes), and
// what a kernel asks of HBM while it shares the GPU (simcore's gpu_sharing.hpp).
double hbm_bytes(const GemmDesc& d);
double hbm_bytes(const AttentionDesc& d);
double hbm_bytes(const MemoryOpDesc& d);
// A convolution reads two of input, filter and output and writes the third (each pass the same
// three tensors): N·C·H·W + K·(C/g)·R·S + N·K·P·Q elements.
double hbm_bytes(const ConvDesc& d);

// A convolution's products, as the implicit-GEMM algorithm cuDNN's and CUTLASS's convolution
// kernels run computes them: the GEMM each group's product is (docs/cost-model.md,
// "Convolution"), `groups` of them side by side (GemmDesc::batch). Forward: N·P·Q × K/g ×
// (C/g)·R·S; data gradient: N·H·W × C/g × (K/g)·R·S over the strides' product (a strided
// convolution's input pixels each take only the taps that reach them); filter gradient:
// K/g × (C/g)·R·S × N·P·Q. fp32 tensors compute as TF32, as PyTorch lets cuDNN by default
// (torch.backends.cudnn.allow_tf32).
GemmDesc conv_implicit_gemm(const ConvDesc& d);
// 2·N·K·P·Q·(C/g)·R·S: the multiply-adds of the forward pass, which each gradient repeats.
double conv_flops(const ConvDesc& d);
// Grouped convolutions with fewer than 8 channels in or out per group (depthwise ones) do not
// fill a tensor-core tile: cuDNN runs them as direct kernels on the CUDA cores.
bool conv_is_direct(const ConvDesc& d);

Estimate gemm_estimate(const GemmDesc& d, const GpuPreset& gpu, const ModelParams& params);
// Implicit GEMM: the compute of conv_implicit_gemm()'s GEMM (its tiles, waves and K slices),
// the memory of the convolution's own tensors (the input tile a GEMM re-reads per filter tap
// comes from L2, not HBM). Tensor-core kernels work on channels-last tensors: in NCHW each of
// the three tensors is transposed by a kernel of its own (the two operands to NHWC, the result
// back), each reading and writing it once at the memory-bound model's price. Direct kernels:
// the FLOPs at the CUDA cores' FP32 peak or the tensors at the HBM plateau, whichever is
// longer, after the memory-bound floor.
Estimate conv_estimate(const ConvDesc& d, const GpuPreset& gpu, const ModelParams& params);
Estimate attention_estimate(const AttentionDesc& d, const GpuPreset& gpu,
                            const ModelParams& params);
Estimate memory_op_estimate(const MemoryOpDesc& d, const GpuPreset& gpu, const ModelParams& params);
// The estimate above for the operation's type; nullopt for copies and kernels known only by
// name, which no analytical model prices from their description alone.
std::optional<Estimate> analytical_estimate(const OpDesc& op, const GpuPreset& gpu,
                                            const ModelParams& params);

}  // namespace phantora::kernels
