#include "described_launches.hpp"

#include <cstdint>
#include <string>

namespace phantora::shim {
namespace {

struct Pending {
  std::string kernel;  // empty: none pending
  LaunchWork work;
};
thread_local Pending t_pending;

}  // namespace

std::optional<LaunchWork> take_described_work(std::string_view kernel) {
  if (t_pending.kernel.empty() || t_pending.kernel != kernel) return std::nullopt;
  t_pending.kernel.clear();
  return t_pending.work;
}

}  // namespace phantora::shim

// The next launch of `kernel` (its name as the module defines it) on this thread is a fused
// attention call of this shape, priced by the attention model for the kernel family `impl`:
// "fa2" (FlashAttention-2) or "flex" (FlexAttention's Triton kernels), the names of
// docs/kernels-db.md's attention signatures. Returns 0, or -1 for a description the model
// cannot price (a zero dimension, another impl).
extern "C" __attribute__((visibility("default"))) int phantora_describe_next_attention(
    const char* kernel, int backward, uint32_t batch, uint32_t heads_q, uint32_t heads_kv,
    uint32_t seq_q, uint32_t seq_k, uint32_t head_dim, int causal, int bf16, const char* impl) {
  using phantora::shim::LaunchWork;
  if (kernel == nullptr || *kernel == '\0' || impl == nullptr || batch == 0 || heads_q == 0 ||
      heads_kv == 0 || heads_q % heads_kv != 0 || seq_q == 0 || seq_k == 0 || head_dim == 0) {
    return -1;
  }
  const std::optional<phantora::wire::AttentionImpl> family =
      phantora::wire::parse_attention_impl(impl);
  if (family != phantora::wire::AttentionImpl::kFlash2 &&
      family != phantora::wire::AttentionImpl::kFlex) {
    return -1;
  }
  LaunchWork w;
  w.kind = backward != 0 ? phantora::wire::WorkKind::kAttentionBackward
                         : phantora::wire::WorkKind::kAttentionForward;
  phantora::wire::AttentionShape& a = w.attention;
  a.batch = batch, a.heads_q = heads_q, a.heads_kv = heads_kv, a.seq_q = seq_q, a.seq_k = seq_k;
  a.head_dim = head_dim;
  a.causal = causal != 0 ? 1 : 0;
  a.dtype = bf16 != 0 ? phantora::wire::DataType::kBF16 : phantora::wire::DataType::kF16;
  a.impl = *family;
  phantora::shim::t_pending = {kernel, w};
  return 0;
}
