#include "llmc_kernels.hpp"

#include <string>
#include <vector>

#include "byte_reads.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {
namespace {

constexpr int8_t kNo = -1;

// Each kernel's parameter list as llm.c's commits of 2024-05-30 and 2024-06-12 declare it
// (train_gpt2.cu at a0d5dbb; llmc/encoder.cuh, layernorm.cuh, gelu.cuh, matmul.cuh,
// fused_classifier.cuh, adamw.cuh, global_norm.cuh and cuda_utils.cuh at 963aa68, which keep the
// same lists): the integer parameters the kind's formula reads and the pointer parameters whose
// element sizes it reads (floatX is bf16 in the mixed-precision build, float in the fp32 one).
struct LlmcLayout {
  std::string_view name;
  size_t params;
  LlmcKind kind;
  wire::WorkKind work;
  std::array<int8_t, 3> counts;
  std::array<int8_t, 3> elements;
  uint8_t flags;  // LlmcKernel::flags, where the name does not say it
};
// One entry a kernel, laid out by hand (clang-format would put each field on a line).
// clang-format off
constexpr LlmcLayout kLayouts[] = {
    // (out, int ids, wte, wpe, B, T, C): counts B, T, C; elements floatX, the id.
    {"encoder_forward_kernel3", 7, LlmcKind::kEncoderForward, wire::WorkKind::kElementwise,
     {4, 5, 6}, {0, 1, kNo}, 0},
    // (dwte, int4 buckets, int indices, dout, int ids, seed, B, T, C)
    {"wte_backward_kernel", 9, LlmcKind::kWteBackward, wire::WorkKind::kReduce,
     {6, 7, 8}, {3, 2, kNo}, 0},
    // (dwpe, dout, int ids, B, T, C, seed)
    {"wpe_backward_kernel", 7, LlmcKind::kWpeBackward, wire::WorkKind::kReduce,
     {3, 4, 5}, {1, kNo, kNo}, 0},
    // (out, mean, rstd, in, weight, bias, N, C): elements floatX, the statistics'.
    {"layernorm_forward_kernel3", 8, LlmcKind::kLayernormForward, wire::WorkKind::kNorm,
     {6, 7, kNo}, {3, 1, kNo}, 0},
    // (residual, normed, mean, rstd, in1, in2, weight, bias, N, C)
    {"fused_residual_forward_kernel5", 10, LlmcKind::kResidualLayernorm, wire::WorkKind::kNorm,
     {8, 9, kNo}, {4, 2, kNo}, 0},
    // (out, in1, in2): out = in1 + in2
    {"residual_forward_kernel", 3, LlmcKind::kVectorMap, wire::WorkKind::kElementwise,
     {kNo, kNo, kNo}, {0, kNo, kNo}, 2},
    // (out, in)
    {"gelu_forward_kernel2", 2, LlmcKind::kVectorMap, wire::WorkKind::kElementwise,
     {kNo, kNo, kNo}, {0, kNo, kNo}, 1},
    // (dinp, in, dout) at a0d5dbb; (d in-out, in) at 963aa68: both read two vectors a thread.
    {"gelu_backward_kernel", 3, LlmcKind::kVectorMap, wire::WorkKind::kElementwise,
     {kNo, kNo, kNo}, {0, kNo, kNo}, 2},
    {"gelu_backward_inplace_kernel", 2, LlmcKind::kVectorMap, wire::WorkKind::kElementwise,
     {kNo, kNo, kNo}, {0, kNo, kNo}, 2},
    // <Out, aux>(dbias, dout, B, T, OC, integral_constant<bool, aux>): elements dout's, Out.
    {"matmul_backward_bias_kernel9", 6, LlmcKind::kBiasBackward, wire::WorkKind::kReduce,
     {2, 3, 4}, {1, 0, kNo}, 0},
    // (dst, float src, size_t n, size_t m): m rows of n partial sums added into dst.
    {"reduce_add_sum_kernel", 4, LlmcKind::kReduceAddSum, wire::WorkKind::kReduce,
     {2, 3, kNo}, {0, 1, kNo}, 0},
    // (dinp, dweight, dbias, float scratch, dout, in, weight, mean, rstd, B, T, C): elements
    // floatX, the statistics', the scratch's.
    {"layernorm_backward_kernel10", 12, LlmcKind::kLayernormBackward, wire::WorkKind::kNorm,
     {9, 10, 11}, {4, 7, 3}, 0},
    // <dlogits, probs>(logits, losses, probs, dloss, int targets, B, T, V, P)
    {"fused_classifier_kernel5", 9, LlmcKind::kClassifier, wire::WorkKind::kSoftmax,
     {5, 6, 7}, {0, 4, kNo}, 0},
    // <Tp, Tg>(params, float master, grads, float m, float v, size_t n, 8 floats, seed)
    {"adamw_kernel3", 15, LlmcKind::kAdamW, wire::WorkKind::kElementwise,
     {5, kNo, kNo}, {0, 2, 3}, 0},
    // <T>(float out, data, size_t count)
    {"global_norm_squared_kernel", 3, LlmcKind::kGlobalNormSquared, wire::WorkKind::kReduce,
     {2, kNo, kNo}, {1, 0, kNo}, 0},
    // <Td, Ts>(dst, src, size_t n)
    {"copy_and_cast_kernel", 3, LlmcKind::kCopyAndCast, wire::WorkKind::kElementwise,
     {2, kNo, kNo}, {0, 1, kNo}, 0},
};
// clang-format on

// Element size behind a pointer parameter ("__nv_bfloat16 const*"), 0 when it is not a pointer
// to a scalar type (int4 counts as 16 bytes: wte_backward_kernel's bucket records).
uint8_t pointee_bytes(std::string_view t) {
  if (t.empty() || t.back() != '*') return 0;
  t.remove_suffix(1);
  if (ends_with(t, " const")) t.remove_suffix(6);
  if (t == "int4") return 16;
  return static_cast<uint8_t>(scalar_bytes(t));
}

// A template argument spelled "true" (the classifier's write flags, the bias kernel's aux).
bool is_true(const std::vector<std::string_view>& targs, size_t i) {
  return i < targs.size() && targs[i] == "true";
}

}  // namespace

std::optional<LlmcKernel> classify_llmc(std::string_view demangled) {
  const std::string_view base = base_name(demangled);
  for (const LlmcLayout& l : kLayouts) {
    if (base != l.name) continue;
    const std::vector<std::string_view> p = parameter_types(demangled);
    if (p.size() != l.params) return std::nullopt;
    LlmcKernel k;
    k.kind = l.kind;
    k.work = l.work;
    k.flags = l.flags;
    for (size_t i = 0; i < l.counts.size() && l.counts[i] != kNo; ++i) {
      k.counts[i] = l.counts[i];
      k.count_bytes[i] = static_cast<uint8_t>(integer_bytes(p[static_cast<size_t>(l.counts[i])]));
      if (k.count_bytes[i] == 0) return std::nullopt;
    }
    for (size_t i = 0; i < l.elements.size() && l.elements[i] != kNo; ++i) {
      k.elements[i] = pointee_bytes(p[static_cast<size_t>(l.elements[i])]);
      if (k.elements[i] == 0) return std::nullopt;
    }
    const std::vector<std::string_view> t = template_args(demangled);
    if (l.kind == LlmcKind::kBiasBackward) k.flags = is_true(t, 1) ? 1 : 0;
    if (l.kind == LlmcKind::kClassifier)
      k.flags = (is_true(t, 0) ? 1 : 0) | (is_true(t, 1) ? 2 : 0);
    return k;
  }
  return std::nullopt;
}

std::optional<wire::KernelWork> llmc_work(const LlmcKernel& k, void* const* args,
                                          const std::array<uint32_t, 3>& grid,
                                          const std::array<uint32_t, 3>& block) {
  if (args == nullptr) return std::nullopt;
  bool ok = true;
  auto count = [&](int i) -> uint64_t {
    const int at = k.counts[static_cast<size_t>(i)];
    if (at < 0 || args[at] == nullptr) {
      ok = false;
      return 0;
    }
    return read_count(args, at, k.count_bytes[static_cast<size_t>(i)], ok);
  };
  const auto e = [&](int i) { return uint64_t{k.elements[static_cast<size_t>(i)]}; };
  const uint64_t blocks = uint64_t{grid[0]} * grid[1] * grid[2];
  wire::KernelWork w;
  w.kind = k.work;
  uint64_t& r = w.bytes_read;
  uint64_t& out = w.bytes_written;
  switch (k.kind) {
    case LlmcKind::kEncoderForward: {
      // Every (b, t) row: its token's wte row and its position's wpe row read (streamed, .cs),
      // their sum written; the ids once.
      const uint64_t rows = count(0) * count(1), n = rows * count(2);
      r = rows * e(1) + 2 * n * e(0);
      out = n * e(0);
      break;
    }
    case LlmcKind::kWteBackward: {
      // dout read once (each (b, t) row falls in its token's buckets) with its index; each block
      // is one bucket: its 16-byte record, and the slice of one token's dwte row that a warp's
      // 32 lanes own (32 x 16 bytes) read, added to and written.
      const uint64_t rows = count(0) * count(1);
      r = rows * (count(2) * e(0) + e(1)) + blocks * (16 + 32 * 16);
      out = blocks * 32 * 16;
      break;
    }
    case LlmcKind::kWpeBackward: {
      // dout summed over the batch into each (t, c) of dwpe, which is read and written once.
      const uint64_t tc = count(1) * count(2);
      r = count(0) * tc * e(0) + tc * e(0);
      out = tc * e(0);
      break;
    }
    case LlmcKind::kLayernormForward: {
      // A warp per row: the row read (its second and third passes hit the cache), the
      // normalized row and the row's mean and rstd written; weight and bias once.
      const uint64_t n = count(0), c = count(1);
      r = n * c * e(0) + 2 * c * e(0);
      out = n * c * e(0) + 2 * n * e(1);
      break;
    }
    case LlmcKind::kResidualLayernorm: {
      // Both residual inputs read; the sum and its normalized row written, with mean and rstd.
      const uint64_t n = count(0), c = count(1);
      r = 2 * n * c * e(0) + 2 * c * e(0);
      out = 2 * n * c * e(0) + 2 * n * e(1);
      break;
    }
    case LlmcKind::kVectorMap: {
      // One 16-byte vector (x128) per thread and operand; launched with exactly enough blocks.
      const uint64_t bytes = blocks * block[0] * block[1] * block[2] * 16;
      r = k.flags * bytes;
      out = bytes;
      break;
    }
    case LlmcKind::kBiasBackward: {
      // dout (B·T rows of OC) read once; the bias gradient accumulated in place (read and
      // written), or one fp32 row of OC partial sums per grid row into the auxiliary buffer.
      const uint64_t oc = count(2);
      r = count(0) * count(1) * oc * e(0) + (k.flags ? 0 : oc * e(1));
      out = (k.flags ? grid[1] : 1) * oc * e(1);
      break;
    }
    case LlmcKind::kReduceAddSum: {
      // m rows of n fp32 partial sums read and added into dst (read and written).
      const uint64_t n = count(0);
      r = n * count(1) * e(1) + n * e(0);
      out = n * e(0);
      break;
    }
    case LlmcKind::kLayernormBackward: {
      // Per row: dout and the input read (their second pass hits the cache), dinp read, added
      // to and written (the residual stream's +=), mean and rstd read. Weight, dweight and
      // dbias once; each block's fp32 partial dweight and dbias (2C) written to the scratch,
      // which the last block reads back.
      const uint64_t rows = count(0) * count(1), c = count(2);
      const uint64_t scratch = blocks * 2 * c * e(2);
      r = 3 * rows * c * e(0) + 2 * rows * e(1) + 3 * c * e(0) + scratch;
      out = rows * c * e(0) + 2 * c * e(0) + scratch;
      break;
    }
    case LlmcKind::kClassifier: {
      // A block per (b, t) row of V logits: read for the softmax's max and sum (the second read
      // is meant to hit the cache), the target read, the loss written, and the row of logit
      // gradients (over the logits) and of probabilities written where the template asks.
      const uint64_t rows = count(0) * count(1), v = count(2);
      const uint64_t written_rows = (k.flags & 1 ? 1 : 0) + (k.flags & 2 ? 1 : 0);
      r = rows * v * e(0) + rows * e(1);
      out = rows * e(0) + written_rows * rows * v * e(0);
      break;
    }
    case LlmcKind::kAdamW: {
      // Per parameter: the gradient and both fp32 moments read and written back (the moments);
      // the old value from the fp32 master copy when there is one (then rewritten), else from
      // the parameter; the parameter written.
      const uint64_t n = count(0);
      const bool master = args[1] != nullptr && load<uint64_t>(static_cast<uint8_t*>(args[1]), 0);
      r = n * (e(1) + 2 * e(2) + (master ? e(2) : e(0)));
      out = n * (e(0) + 2 * e(2) + (master ? e(2) : 0));
      break;
    }
    case LlmcKind::kGlobalNormSquared:
      // The data read once; one atomic add of a float per block.
      r = count(0) * e(0);
      out = blocks * e(1);
      break;
    case LlmcKind::kCopyAndCast: {
      const uint64_t n = count(0);
      r = n * e(1);
      out = n * e(0);
      break;
    }
  }
  if (!ok) return std::nullopt;
  return w;
}

}  // namespace phantora::shim
