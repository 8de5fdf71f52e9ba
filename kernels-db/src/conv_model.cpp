// The convolution model: a cuDNN convolution priced as the implicit GEMM its kernels compute
// (analytical_model.hpp; docs/cost-model.md, "Convolution").
#include <algorithm>
#include <array>
#include <cmath>

#include "phantora/kernels/analytical_model.hpp"

namespace phantora::kernels {
namespace {

double f(uint64_t v) {
  return static_cast<double>(v);
}

// The fewest channels per group that fill a tensor-core MMA's K or N (8 elements of 16 bits is
// one 16-byte load; narrower groups are what cuDNN's depthwise kernels are for).
constexpr uint64_t kMinTensorCoreChannels = 8;

}  // namespace

GemmDesc conv_implicit_gemm(const ConvDesc& d) {
  const uint64_t g = std::max<uint64_t>(1, d.groups);
  const uint64_t c = d.c / g, k = d.k / g, taps = d.r * d.s;
  GemmDesc gemm;
  gemm.batch = g;
  switch (d.pass) {
    case wire::ConvPass::kForward:
      gemm.m = d.n * d.p * d.q, gemm.n = k, gemm.k = c * taps;
      break;
    case wire::ConvPass::kBackwardData: {
      const uint64_t strides = std::max<uint64_t>(1, d.stride_h * d.stride_w);
      gemm.m = d.n * d.h * d.w, gemm.n = c;
      gemm.k = std::max<uint64_t>(1, (k * taps + strides / 2) / strides);
      break;
    }
    case wire::ConvPass::kBackwardFilter:
      gemm.m = k, gemm.n = c * taps, gemm.k = d.n * d.p * d.q;
      break;
  }
  gemm.a = gemm.b = gemm.c = d.dtype;
  gemm.compute = d.dtype == DType::kF32 ? DType::kTF32 : DType::kF32;
  return gemm;
}

double conv_flops(const ConvDesc& d) {
  const double per_group_c = f(d.c) / f(std::max<uint64_t>(1, d.groups));
  return 2.0 * f(d.n) * f(d.k) * f(d.p) * f(d.q) * per_group_c * f(d.r) * f(d.s);
}

bool conv_is_direct(const ConvDesc& d) {
  const uint64_t g = std::max<uint64_t>(1, d.groups);
  return g > 1 && (d.c / g < kMinTensorCoreChannels || d.k / g < kMinTensorCoreChannels);
}

namespace {

// Bytes of the input, the filter and the output, each stored once.
std::array<double, 3> tensor_bytes(const ConvDesc& d) {
  const double per_group_c = f(d.c) / f(std::max<uint64_t>(1, d.groups));
  const double element = f(dtype_bytes(d.dtype));
  return {f(d.n) * f(d.c) * f(d.h) * f(d.w) * element,
          f(d.k) * per_group_c * f(d.r) * f(d.s) * element,
          f(d.n) * f(d.k) * f(d.p) * f(d.q) * element};
}

}  // namespace

double hbm_bytes(const ConvDesc& d) {
  const std::array<double, 3> t = tensor_bytes(d);
  return t[0] + t[1] + t[2];
}

Estimate conv_estimate(const ConvDesc& d, const GpuPreset& gpu, const ModelParams& params) {
  const double hbm = hbm_plateau_bytes_per_s(gpu, params);
  const double tensors = hbm_bytes(d);
  if (conv_is_direct(d)) {
    Estimate e;
    e.flops = conv_flops(d);
    e.bytes = tensors;
    // The FP32 peak is the datasheet's, at the clock its tensor peaks are quoted at.
    e.clock_scale = clock_scale(gpu, gpu.perf.tensor_peak_clock_mhz);
    const double compute_s = e.flops / (gpu.perf.fp32_tflops * 1e12 * e.clock_scale);
    const double memory_s = tensors / hbm;
    e.compute_us = compute_s * 1e6;
    e.memory_us = memory_s * 1e6;
    e.duration = params.memory_floor + SimTime::seconds(std::max(compute_s, memory_s));
    return e;
  }
  const GemmDesc gemm = conv_implicit_gemm(d);
  Estimate e = gemm_estimate(gemm, gpu, params);
  // A GEMM split along K also moves its fp32 partials (and its reduction reads them): what the
  // GEMM's estimate moved beyond its own operands.
  const double partials = e.k_slices > 1 ? std::max(0.0, e.bytes - hbm_bytes(gemm)) : 0.0;
  e.flops = conv_flops(d);
  e.bytes = tensors + partials;
  e.memory_us = e.bytes / hbm * 1e6;
  e.duration = params.gemm_overhead +
               SimTime::seconds((std::max(e.compute_us, e.memory_us) + e.reduce_us) * 1e-6);
  if (d.channels_first) {
    // Three transposes, each a memory-bound kernel reading and writing its tensor once.
    SimTime transposes;
    for (double bytes : tensor_bytes(d)) {
      MemoryOpDesc transpose;
      transpose.op = "transpose";
      transpose.bytes_read = transpose.bytes_written = static_cast<uint64_t>(bytes);
      const Estimate t = memory_op_estimate(transpose, gpu, params);
      transposes += t.duration;
      e.bytes += t.bytes;
    }
    e.layout_us = transposes.as_us();
    e.duration = e.duration + transposes;
  }
  return e;
}

}  // namespace phantora::kernels
