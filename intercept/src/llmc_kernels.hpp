// The kernels of karpathy/llm.c's CUDA trainer (train_gpt2.cu, and llmc/*.cuh from June 2024):
// GELU, layernorm, the fused residual-and-layernorm, the token and position embeddings, the bias
// gradients, the fused classifier (softmax, loss and logit gradients in one pass), AdamW, the
// gradient norm and the master-weight copy. llm.c writes them by hand, so no PyTorch family
// names them; each is a memory-bound pass whose sizes sit in its integer parameters or follow
// from its grid (one 16-byte vector per thread), and it is priced as the bytes it moves through
// HBM. What each reads and writes, with the parameter positions, is in llmc_kernels.cpp and
// docs/kernels.md ("llm.c"). A kernel of another llm.c version whose parameters differ is not
// matched and stays a default-priced kernel listed by name. Pure string and byte work.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "phantora/protocol.hpp"

namespace phantora::shim {

// One formula per kernel (llmc_kernels.cpp says what each moves).
enum class LlmcKind : uint8_t {
  kEncoderForward,     // encoder_forward_kernel3(out, ids, wte, wpe, B, T, C)
  kWteBackward,        // wte_backward_kernel<256>(dwte, buckets, indices, dout, ids, seed, B, T, C)
  kWpeBackward,        // wpe_backward_kernel(dwpe, dout, ids, B, T, C, seed)
  kLayernormForward,   // layernorm_forward_kernel3(out, mean, rstd, in, weight, bias, N, C)
  kResidualLayernorm,  // fused_residual_forward_kernel5(residual, normed, mean, rstd, in1, in2,
                       // weight, bias, N, C)
  kVectorMap,          // residual_forward_kernel, gelu_forward_kernel2, gelu_backward[_inplace]
                       // _kernel: one 16-byte vector per thread, sizes from the grid
  kBiasBackward,       // matmul_backward_bias_kernel9<Out, aux>(dbias, dout, B, T, OC, aux)
  kReduceAddSum,       // reduce_add_sum_kernel(dst, float src, n, m)
  kLayernormBackward,  // layernorm_backward_kernel10(dinp, dweight, dbias, scratch, dout, in,
                       // weight, mean, rstd, B, T, C)
  kClassifier,         // fused_classifier_kernel5<write dlogits, write probs>(logits, losses,
                       // probs, dloss, targets, B, T, V, P)
  kAdamW,              // adamw_kernel3<Tp, Tg>(params, master, grads, m, v, n, ...)
  kGlobalNormSquared,  // global_norm_squared_kernel<T>(out, data, count)
  kCopyAndCast,        // copy_and_cast_kernel<Td, Ts>(dst, src, n)
};

struct LlmcKernel {
  LlmcKind kind = LlmcKind::kVectorMap;
  wire::WorkKind work = wire::WorkKind::kElementwise;  // what the cost model prices it as
  // Integer parameters the formula reads (positions and widths), -1 past the last.
  std::array<int8_t, 3> counts{-1, -1, -1};
  std::array<uint8_t, 3> count_bytes{};
  // Element sizes the formula reads, from pointer parameter types (see the .cpp per kind).
  std::array<uint8_t, 3> elements{};
  // kVectorMap: vectors read per vector written (1: GELU; 2: residual add, GELU's backward).
  // kBiasBackward: 1 when partial sums go to an auxiliary buffer, one row per grid row.
  // kClassifier: rows of logit gradients (bit 0) and of probabilities (bit 1) written.
  uint8_t flags = 0;
};

// From a demangled name (abi::__cxa_demangle's output); nullopt when it is not one of llm.c's
// kernels with the parameter list of the versions read (llmc_kernels.cpp).
std::optional<LlmcKernel> classify_llmc(std::string_view demangled);

// What one launch moves; nullopt when an integer parameter is implausible (negative, or past
// 2^40 items).
std::optional<wire::KernelWork> llmc_work(const LlmcKernel& k, void* const* args,
                                          const std::array<uint32_t, 3>& grid,
                                          const std::array<uint32_t, 3>& block);

}  // namespace phantora::shim
