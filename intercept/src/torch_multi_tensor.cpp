#include "torch_multi_tensor.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>
#include <vector>

#include "byte_reads.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {
namespace {

constexpr uint64_t kChunkElements = 65536;  // MultiTensorApply.cuh's kChunkSize

// The functor's or metadata's unqualified name: "at::native::CopyFunctor<...>" -> "CopyFunctor".
std::string_view unqualified(std::string_view text) {
  text = text.substr(0, text.find('<'));
  const size_t colon = text.rfind("::");
  return colon == std::string_view::npos ? text : text.substr(colon + 2);
}

std::optional<int> integer(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Sets the bytes per element of `k` from the functor: which lists it reads and writes.
bool functor_traffic(std::string_view functor, int depth, MultiTensorKernel& k) {
  const std::string_view name = unqualified(functor);
  const std::vector<std::string_view> a = template_args(functor);
  auto size_of = [&](size_t i) { return i < a.size() ? scalar_bytes(a[i]) : 0; };
  int read = 0, written = 0;
  if (name == "FusedAdamMathFunctorMP") {
    // <opmath, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, depth, mode, amsgrad>: every
    // list read; all but the gradient written.
    for (size_t i = 1; i < 1 + static_cast<size_t>(depth) && i < 6; ++i) read += size_of(i);
    written = read - size_of(2);
    if (size_of(1) == 0 || size_of(2) == 0) return false;
  } else if (name == "FusedAdamMathFunctor" || name == "FusedAdagradMathFunctor") {
    // param, grad and the optimizer's state (two moments, or the square sum): all read, all but
    // the gradient written.
    read = depth * size_of(0);
    written = (depth - 1) * size_of(0);
  } else if (name == "CopyFunctor") {
    // <dst, src, depth, r_args_depth, res_arg_index>: a converting copy.
    read = size_of(1);
    written = size_of(0);
  } else if (name == "LpNormFunctor" || name == "LpMaxFunctor") {
    // Reads its list; writes one partial result per block (negligible).
    read = size_of(0);
  } else if (name == "PointwiseOpListFunctor") {
    // <T, depth>: depth - 1 inputs, one output list.
    read = (depth - 1) * size_of(0);
    written = size_of(0);
  } else if (a.size() == 4 && integer(a[1]) && integer(a[2]) && integer(a[3])) {
    // ForeachFunctors.cuh's <T, depth, r_args_depth, res_arg_index>: r_args_depth lists read,
    // one written (in place when res_arg_index is among the read ones).
    read = *integer(a[2]) * size_of(0);
    written = size_of(0);
  } else {
    return false;
  }
  if (read <= 0 && written <= 0) return false;
  k.read_bytes_per_element = read;
  k.written_bytes_per_element = written;
  return true;
}

}  // namespace

std::optional<MultiTensorKernel> classify_multi_tensor(std::string_view metadata,
                                                       std::string_view functor) {
  MultiTensorKernel k;
  const std::string_view kind = unqualified(metadata);
  const std::vector<std::string_view> margs = template_args(metadata);
  if (kind == "TensorListMetadata" && margs.size() == 1) {
    k.metadata = MultiTensorMetadata::kTensorList;
  } else if (kind == "FusedOptimizerTensorListMetadata" && margs.size() == 1) {
    k.metadata = MultiTensorMetadata::kFusedOptimizer;
  } else if (kind == "TensorListScalarListMetadata" && margs.size() == 2) {
    // complex<double> scalars have layouts of their own; they are not read.
    k.metadata = MultiTensorMetadata::kScalarList;
    k.scalar_bytes = scalar_bytes(margs[0]);
    if (k.scalar_bytes == 0 || k.scalar_bytes > 8) return std::nullopt;
  } else {
    return std::nullopt;
  }
  const std::optional<int> depth = integer(margs.back());
  if (!depth || *depth < 1 || *depth > 5) return std::nullopt;
  k.depth = *depth;
  if (!functor_traffic(functor, k.depth, k)) return std::nullopt;
  return k;
}

int MultiTensorLimits::max_tensors(const MultiTensorKernel& k) const {
  static constexpr int kLarge[5] = {770, 448, 336, 252, 210};
  static constexpr int kSmall[5] = {110, 64, 48, 36, 30};
  static constexpr int kLargeScalarList[5] = {672, 448, 336, 252, 210};
  static constexpr int kSmallScalarList[5] = {96, 64, 48, 36, 30};
  const bool scalars = k.metadata == MultiTensorMetadata::kScalarList;
  const int* table = large_kernel_args ? (scalars ? kLargeScalarList : kLarge)
                                       : (scalars ? kSmallScalarList : kSmall);
  return table[k.depth - 1];
}

namespace {

// Where the arrays multi_tensor_elements reads start: addresses[depth][tensors],
// numel_for_tensor[tensors], the kind's own per-tensor array, then block_to_tensor[blocks] and
// block_to_chunk[blocks].
struct MetadataOffsets {
  size_t numel_at, to_tensor_at, to_chunk_at, end;
};

MetadataOffsets offsets(const MultiTensorKernel& k, const MultiTensorLimits& limits) {
  const size_t tensors = static_cast<size_t>(limits.max_tensors(k));
  MetadataOffsets o{};
  o.numel_at = static_cast<size_t>(k.depth) * tensors * 8;
  size_t after = o.numel_at + tensors * 8;
  if (k.metadata == MultiTensorMetadata::kFusedOptimizer) after += tensors * 8;
  if (k.metadata == MultiTensorMetadata::kScalarList) {
    after += tensors * static_cast<size_t>(k.scalar_bytes);
  }
  const size_t index_bytes = static_cast<size_t>(limits.index_bytes());
  const size_t blocks = static_cast<size_t>(limits.max_blocks());
  o.to_tensor_at = align_up(after, index_bytes);
  o.to_chunk_at = align_up(o.to_tensor_at + blocks * index_bytes, 4);
  o.end = o.to_chunk_at + blocks * 4;
  return o;
}

}  // namespace

size_t MultiTensorLimits::metadata_bytes(const MultiTensorKernel& k) const {
  return offsets(k, *this).end;
}

std::optional<uint64_t> multi_tensor_elements(const MultiTensorKernel& k,
                                              const MultiTensorLimits& limits, const void* metadata,
                                              uint32_t blocks) {
  if (metadata == nullptr || blocks == 0 || blocks > static_cast<uint32_t>(limits.max_blocks())) {
    return std::nullopt;
  }
  const auto* p = static_cast<const uint8_t*>(metadata);
  const size_t tensors = static_cast<size_t>(limits.max_tensors(k));
  const MetadataOffsets o = offsets(k, limits);
  const bool wide = limits.index_bytes() == 2;

  uint64_t elements = 0;
  uint32_t previous = 0;
  int32_t previous_chunk = -1;
  for (uint32_t b = 0; b < blocks; ++b) {
    const uint32_t t =
        wide ? load<uint16_t>(p, o.to_tensor_at + 2 * b) : load<uint8_t>(p, o.to_tensor_at + b);
    const int32_t chunk = load<int32_t>(p, o.to_chunk_at + 4 * size_t{b});
    // Blocks are handed out tensor by tensor, in order, chunk by chunk: a tensor's chunks count
    // up from 0, except the first tensor's, which may continue where the previous launch
    // stopped.
    if (t >= tensors || t < previous || chunk < 0) return std::nullopt;
    if (b > 0 && chunk != (t == previous ? previous_chunk + 1 : 0)) return std::nullopt;
    previous = t;
    previous_chunk = chunk;
    const int64_t numel = load<int64_t>(p, o.numel_at + 8 * size_t{t});
    const uint64_t start = static_cast<uint64_t>(chunk) * kChunkElements;
    if (numel <= 0 || start >= static_cast<uint64_t>(numel)) return std::nullopt;
    elements += std::min(kChunkElements, static_cast<uint64_t>(numel) - start);
  }
  return elements;
}

}  // namespace phantora::shim
