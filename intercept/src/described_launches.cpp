#include "described_launches.hpp"

#include <cstdint>
#include <string>

namespace phantora::shim {
namespace {

struct Pending {
  std::string kernel;  // empty: none pending
  LaunchWork work;
  bool held = false;  // for every launch of `kernel` until cleared, not only the next one
};
thread_local Pending t_pending;

}  // namespace

bool names_described_kernel(std::string_view kernel, std::string_view described) {
  if (described.empty()) return false;
  if (kernel == described) return true;
  // Triton 2 names a kernel <function>_<specialization>: for each parameter its index, then c
  // (equal to 1), d (divisible by 16), e (by 8), e.g. `_rms_norm_fwd_kernel_0d1d2d3d45de6`.
  if (kernel.size() <= described.size() + 1 || !kernel.starts_with(described) ||
      kernel[described.size()] != '_') {
    return false;
  }
  const std::string_view suffix = kernel.substr(described.size() + 1);
  return suffix.find_first_not_of("0123456789cde") == std::string_view::npos &&
         suffix.front() == '0';
}

std::optional<LaunchWork> take_described_work(std::string_view kernel) {
  if (!names_described_kernel(kernel, t_pending.kernel)) return std::nullopt;
  const LaunchWork work = t_pending.work;
  if (!t_pending.held) t_pending.kernel.clear();
  return work;
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

// Every launch of `kernel` on this thread, until phantora_describe_clear() or another
// description, is a memory-bound kernel that reads and writes these many bytes, priced by the
// bandwidth model as an element-wise kernel, or as a reduction when `reduction` is non-zero:
// inductor's pointwise and reduction kernels (triton_poi_*, triton_red_*, triton_per_*), whose
// tensors the start-up hook sees. Held rather than used up because one launch call of inductor
// may launch the kernel several times with the same tensors (autotuning benchmarks each of its
// configurations). Returns 0, or -1 for a description that moves no bytes.
extern "C" __attribute__((visibility("default"))) int phantora_describe_memory_op(
    const char* kernel, int reduction, uint64_t bytes_read, uint64_t bytes_written) {
  using phantora::shim::LaunchWork;
  if (kernel == nullptr || *kernel == '\0' || bytes_read + bytes_written == 0) return -1;
  LaunchWork w;
  w.kind =
      reduction != 0 ? phantora::wire::WorkKind::kReduce : phantora::wire::WorkKind::kElementwise;
  w.bytes_read = bytes_read;
  w.bytes_written = bytes_written;
  phantora::shim::t_pending = {kernel, w, /*held=*/true};
  return 0;
}

// Ends this thread's pending description, used or not.
extern "C" __attribute__((visibility("default"))) void phantora_describe_clear() {
  phantora::shim::t_pending = {};
}
