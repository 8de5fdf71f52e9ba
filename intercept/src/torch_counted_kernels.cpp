#include "torch_counted_kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "byte_reads.hpp"
#include "torch_grouped_mm.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {
namespace {

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Bytes of an element type named in a template argument: OpaqueType<N> or a scalar type; 0
// when unknown.
int element_bytes(std::string_view t) {
  if (contains(t, "OpaqueType<")) {
    const std::vector<std::string_view> a = template_args(t);
    return a.size() == 1 ? std::atoi(std::string(a[0]).c_str()) : 0;
  }
  return scalar_bytes(t);
}

// Bytes per item an iterator parameter touches in memory: a pointer's element size (PyTorch's
// OpaqueType<N> stands for N-byte payloads, CUB's NullType for "no values"); 0 for iterators
// that generate their values (counting, constant); -1 when unknown (another fancy iterator).
int item_bytes(std::string_view t) {
  if (!t.empty() && t.back() == '*') {
    t.remove_suffix(1);
    if (ends_with(t, " const")) t.remove_suffix(6);
    if (contains(t, "NullType")) return 0;
    const int b = element_bytes(t);
    return b > 0 ? b : -1;
  }
  if (contains(t, "counting_iterator<") || contains(t, "constant_iterator<")) return 0;
  return -1;
}

// Sets parameter `at` as the kind's i-th count; false when it is not an integer.
bool count_arg(const std::vector<std::string_view>& params, size_t at, int i, CountedKernel& k) {
  if (at >= params.size()) return false;
  k.arg_bytes[i] = integer_bytes(params[at]);
  k.args[i] = static_cast<int>(at);
  return k.arg_bytes[i] != 0;
}

std::optional<CountedKernel> classify_cub(std::string_view base,
                                          const std::vector<std::string_view>& p) {
  CountedKernel k;
  if (ends_with(base, "::DeviceRadixSortOnesweepKernel") && p.size() == 12) {
    // (lookback, counters, bins out, bins in, keys out, keys in, values out, values in,
    //  num_items, current bit, bits, decomposer): one digit pass reads and writes every key and
    //  value once.
    k.kind = CountedKind::kRadixSortPass;
    k.work = wire::WorkKind::kSort;
    k.bytes = {item_bytes(p[5]), item_bytes(p[7]), 0, 0};
    if (!count_arg(p, 8, 0, k)) return std::nullopt;
  } else if (ends_with(base, "::DeviceRadixSortHistogramKernel") && p.size() == 6) {
    // (bins out, keys in, num_items, start bit, end bit, decomposer): keys read once.
    k.kind = CountedKind::kRadixHistogram;
    k.work = wire::WorkKind::kSort;
    k.bytes = {item_bytes(p[1]), 0, 0, 0};
    if (!count_arg(p, 2, 0, k)) return std::nullopt;
  } else if (ends_with(base, "::DeviceRadixSortExclusiveSumKernel")) {
    k.kind = CountedKind::kConstant;  // prefix sums of one pass's 256 bins
    k.work = wire::WorkKind::kSort;
  } else if (ends_with(base, "::DeviceScanKernel") && p.size() == 7) {
    // (in, out, tile state, start tile, scan op, init value, num_items)
    k.kind = CountedKind::kScan;
    k.work = wire::WorkKind::kScan;
    k.bytes = {item_bytes(p[0]), item_bytes(p[1]), 0, 0};
    if (!count_arg(p, 6, 0, k)) return std::nullopt;
  } else if ((ends_with(base, "::DeviceScanInitKernel") ||
              ends_with(base, "::DeviceCompactInitKernel")) &&
             p.size() >= 2) {
    // (tile state, num_tiles[, num selected out]): one 16-byte status word per tile (a status
    // and a value of at most 8 bytes, packed for a single atomic).
    k.kind = CountedKind::kTileInit;
    k.work = wire::WorkKind::kScan;
    k.bytes = {16, 0, 0, 0};
    if (!count_arg(p, 1, 0, k)) return std::nullopt;
  } else if ((ends_with(base, "::DeviceUniqueByKeySweepKernel") ||
              ends_with(base, "::DeviceSelectSweepKernel")) &&
             p.size() >= 9) {
    // Unique-by-key: (keys in, values in, keys out, values out, num selected out, tile state,
    // equality, num_items, num_tiles, ...); select: (in, flags, out, num selected out, tile
    // state, select op, equality, num_items, num_tiles, ...). Both read both inputs once and
    // write at most every item (the selected count lives on the device: the bound is taken).
    const bool unique = ends_with(base, "::DeviceUniqueByKeySweepKernel");
    k.kind = CountedKind::kSelect;
    k.work = wire::WorkKind::kScan;
    k.bytes = {item_bytes(p[0]), item_bytes(p[1]), item_bytes(p[2]), unique ? item_bytes(p[3]) : 0};
    if (!count_arg(p, 7, 0, k)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  for (int b : k.bytes) {
    if (b < 0) return std::nullopt;
  }
  return k;
}

// The kernels of embedding's backward (EmbeddingBackwardKernel.cu) other than
// compute_grad_weight (a kIndexed functor).
std::optional<CountedKernel> classify_embedding(std::string_view base,
                                                const std::vector<std::string_view>& t,
                                                const std::vector<std::string_view>& p) {
  CountedKernel k;
  if (ends_with(base, "::sum_and_scatter") && t.size() == 2 && p.size() == 10) {
    // (sorted indices, grad weight, stride, segment offsets, num segments*, partial sums,
    //  partial offsets, num partial segments*, padding idx, stride_warped); launched with
    //  block = min(stride_warped, 1024) and ceil(numel * stride_warped / block) blocks.
    k.kind = CountedKind::kEmbeddingScatter;
    k.work = wire::WorkKind::kReduce;
    const int scalar = scalar_bytes(t[0]);
    // acc_type<T, true>: float for half, bfloat16 and float; double for double.
    k.bytes = {scalar, scalar_bytes(t[1]), scalar == 8 ? 8 : 4, 0};
    if (scalar == 0 || k.bytes[1] == 0 || !count_arg(p, 2, 0, k) || !count_arg(p, 9, 1, k))
      return std::nullopt;
  } else if (ends_with(base, "::krn_partials_per_segment") && t.size() == 1 && p.size() == 4) {
    // (partials per segment, segment offsets, num segments*, numel): a segment's two offsets
    // read, its count written; at most numel segments.
    k.kind = CountedKind::kSegmentCounts;
    k.bytes = {scalar_bytes(t[0]), 0, 0, 0};
    if (k.bytes[0] == 0 || !count_arg(p, 3, 0, k)) return std::nullopt;
  } else if (ends_with(base, "::krn_partial_segment_offset") && t.size() == 1 && p.size() == 5) {
    // (out, partials per segment, their offsets, segment offsets, num segments*): launched
    // with 32 threads per block, one per index.
    k.kind = CountedKind::kSegmentOffsets;
    k.bytes = {scalar_bytes(t[0]), 0, 0, 0};
    if (k.bytes[0] == 0) return std::nullopt;
  } else if (ends_with(base, "::embedding_backward_feature_kernel") && t.size() == 3 &&
             p.size() == 6) {
    // <T, acc, index_t>(indices, grad, grad weight, int n, int64 stride, int padding): the
    // backward for few indices; every index's gradient row read and added into its weight row
    // (at most n distinct rows: the bound).
    k.kind = CountedKind::kEmbeddingRows;
    k.work = wire::WorkKind::kReduce;
    k.bytes = {scalar_bytes(t[0]), scalar_bytes(t[2]), 0, 0};
    if (k.bytes[0] == 0 || k.bytes[1] == 0 || !count_arg(p, 3, 0, k) || !count_arg(p, 4, 1, k))
      return std::nullopt;
  } else if (ends_with(base, "::compute_num_of_partial_segments") ||
             ends_with(base, "::write_num_of_segments_for_legacy_thrust_path")) {
    k.kind = CountedKind::kConstant;  // <<<1, 1>>>: one value
  } else {
    return std::nullopt;
  }
  return k;
}

// Kernels whose counts sit at fixed parameters, as PyTorch 2.15 lays them out: those of CNN and
// RNN layers that PyTorch runs itself (max pooling and depthwise convolutions in NCHW whatever
// cuDNN does, BatchNorm on bf16 / fp16 channels-last inputs, the point-wise halves of LSTM and
// GRU steps: DilatedMaxPool2d.cu, DepthwiseConv2d.cu, Normalization.cuh, RNN.cu) and whole-tensor
// copies: which parameters hold the counts each kind's formula reads (counted_traffic()), and
// the template argument naming the element type. Each reads its inputs once and writes its
// outputs once.
struct KernelLayout {
  std::string_view name;  // the end of the kernel's qualified name
  size_t templates, params;
  CountedKind kind;
  wire::WorkKind work;
  size_t scalar;                 // the template argument that is the element type
  std::array<int8_t, 7> counts;  // parameter positions, -1 past the last
  // bytes[1..3] of the kind's formula (the element size is bytes[0]).
  std::array<int, 3> extra;
  // Template arguments older PyTorch releases leave off the end, with the same parameters: 1 for
  // max pooling, whose index type PyTorch 2.8 (its CUDA 12 wheel) and earlier do not declare
  // (DilatedMaxPool2d.cu).
  size_t older_releases_fewer_templates = 0;
};
constexpr int8_t kNo = -1;
// One entry a kernel, laid out by hand (clang-format would put each field on a line).
// clang-format off
constexpr KernelLayout kKernelLayouts[] = {
    // <T, index>(int outputs, in, C, H, W, PH, PW, kernel, stride, padding, dilation (x2 each),
    // out, indices): outputs = N·C·PH·PW; extra = {bytes of an output's index}.
    {"::max_pool_forward_nchw", 2, 17, CountedKind::kPoolFlat, wire::WorkKind::kReduce, 0,
     {0, 3, 4, 5, 6, kNo, kNo}, {8, 0, 0}, 1},
    // <T, acc>(int outputs, in, C, H, W, PH, PW, kernel, stride, padding (x2 each), out, int
    // divisor, bool, bool): average pooling writes no indices.
    {"::avg_pool2d_out_cuda_frame_nhwc", 2, 17, CountedKind::kPoolFlat, wire::WorkKind::kReduce,
     0, {0, 3, 4, 5, 6, kNo, kNo}, {0, 0, 0}},
    // <T, acc>(int outputs, in, int64 C, H, W, PH, int PW, kernel, stride, padding (x2 each),
    // out, int divisor, bool, bool): NCHW, the same positions (its source is not in the
    // stored PyTorch; its sm_90 code divides the output index by parameter 6, then 5, then 2,
    // as an NCHW index is split into PW, PH and C, and addresses the input plane with 3 and 4).
    {"::avg_pool2d_out_cuda_frame", 2, 17, CountedKind::kPoolFlat, wire::WorkKind::kReduce, 0,
     {0, 3, 4, 5, 6, kNo, kNo}, {0, 0, 0}},
    // Average pooling's backward, one thread per input element gathering the gradients of the
    // windows it falls in (the sm_90 code of torch 2.15's CUDA 13 build: one global store per
    // element, its loads in the window loop; the index split by W, H, C in NCHW and C, W, H in
    // NHWC at parameters 4, 3, 2; none of the three is in the stored PyTorch source). Each
    // output gradient is read once, the input gradient written once.
    //   <T, acc, index>(index inputs, grad out, int64 C, H, W, PH, PW, int kernel, stride,
    //   padding (x2 each), grad in, int divisor, bool, bool, bool)
    {"::avg_pool2d_backward_out_cuda_frame", 3, 18, CountedKind::kPoolBackward,
     wire::WorkKind::kElementwise, 0, {0, 3, 4, 5, 6, kNo, kNo}, {0, 0, 0}},
    //   <T, acc, index>(index inputs, grad out, int64 C, H, W, int PH, PW, kernel, stride,
    //   padding (x2 each), grad in, int divisor, bool, bool, bool)
    {"::avg_pool2d_backward_out_cuda_frame_nhwc", 3, 18, CountedKind::kPoolBackward,
     wire::WorkKind::kElementwise, 0, {0, 3, 4, 5, 6, kNo, kNo}, {0, 0, 0}},
    //   <T, acc, index>(index inputs, grad out, int64 C, H, W, PH, PW, int kernel_h, kernel_w,
    //   grad in, int divisor, bool, bool): the path PyTorch 2.15 takes when the windows tile
    //   the input (stride = kernel, no padding), in both layouts: one load and one store per
    //   element (pytorch/pytorch pull request #191086 describes the fast path).
    {"::avg_pool2d_backward_nonoverlap_frame", 3, 13, CountedKind::kPoolBackward,
     wire::WorkKind::kElementwise, 0, {0, 3, 4, 5, 6, kNo, kNo}, {0, 0, 0}},
    // <T, index>(in, N, C, H, W, PH, PW, ...)
    {"::max_pool_forward_nhwc", 2, 23, CountedKind::kMaxPoolForward, wire::WorkKind::kReduce, 0,
     {1, 2, 3, 4, 5, 6, kNo}, {0, 0, 0}, 1},
    // <T, acc[, index]>(output gradient, indices, N, C, H, W, PH, PW, ..., input gradient)
    {"::max_pool_backward_nchw", 3, 17, CountedKind::kMaxPoolBackward,
     wire::WorkKind::kElementwise, 0, {2, 3, 4, 5, 6, 7, kNo}, {0, 0, 0}, 1},
    {"::max_pool_backward_nhwc", 2, 22, CountedKind::kMaxPoolBackward,
     wire::WorkKind::kElementwise, 0, {2, 3, 4, 5, 6, 7, kNo}, {0, 0, 0}},
    // <kSize, T, index>(in, out, weight, bias, bool bias, outputs, K, multiplier, W, H, Q, P,
    // ...): outputs = N·K·P·Q; the input N·(K / multiplier)·H·W. Weights and bias (a few
    // thousand elements beside the activations) are left out, here and below.
    {"::conv_depthwise2d_forward_kernel", 3, 20, CountedKind::kDepthwiseForward,
     wire::WorkKind::kElementwise, 1, {5, 6, 7, 8, 9, 10, 11}, {0, 0, 0}},
    // <kSize, stride, T, index>(grad out, grad in, weight, inputs, C, multiplier, K, W, H, Q, P,
    // ...): inputs = N·C·H·W written; the output gradient N·K·P·Q read.
    {"::conv_depthwise2d_backward_kernel", 4, 19, CountedKind::kDepthwiseData,
     wire::WorkKind::kElementwise, 2, {3, 4, 6, 7, 8, 9, 10}, {0, 0, 0}},
    // <T, index>(grad out, in, grad weight, N, C, K, multiplier, W, H, Q, P, ...): the output
    // gradient N·K·P·Q and the input N·C·H·W read.
    {"::conv_depthwise2d_grad_weight_kernel", 2, 19, CountedKind::kDepthwiseFilter,
     wire::WorkKind::kReduce, 0, {3, 4, 5, 7, 8, 9, 10}, {0, 0, 0}},
    // Rows of `stride` channels, `reduction size` of them (N·H·W); extra = {inputs read,
    // outputs written, per-channel floats written}.
    //   <Var, T, acc, n>(in, mean, invstd, staging, semaphores, rows, stride, eps)
    {"::batch_norm_collect_statistics_channels_last_kernel", 4, 8, CountedKind::kNormChannelsLast,
     wire::WorkKind::kNorm, 1, {5, 6, kNo, kNo, kNo, kNo, kNo}, {1, 0, 2}},
    //   <T, acc, layer, n>(in, z, mean, invstd, weight, shift, out, rows, stride, relu): z is
    //   the fused add's, not nn.BatchNorm's.
    {"::batch_norm_transform_input_channels_last_kernel", 4, 10, CountedKind::kNormChannelsLast,
     wire::WorkKind::kNorm, 0, {7, 8, kNo, kNo, kNo, kNo, kNo}, {1, 1, 0}},
    //   <n, T, acc, layer>(in, grad out, mean, invstd, sum dy, sum dy·xmu, grad weight, grad
    //   bias, staging, semaphores, rows, stride)
    {"::batch_norm_backward_reduce_channels_last_kernel", 4, 12, CountedKind::kNormChannelsLast,
     wire::WorkKind::kNorm, 1, {10, 11, kNo, kNo, kNo, kNo, kNo}, {2, 0, 4}},
    //   <n, T, acc, layer>(grad out, in, mean, invstd, weight, sum dy, sum dy·xmu, grad in,
    //   norm factor, rows, stride)
    {"::batch_norm_backward_elemt_channels_last_kernel", 4, 11, CountedKind::kNormChannelsLast,
     wire::WorkKind::kNorm, 1, {9, 10, kNo, kNo, kNo, kNo, kNo}, {2, 1, 0}},
    // <T, acc, index, indexing>(TensorInfo..., index hidden size, index elements): per element
    // of the hidden state, extra = {values read, values written} (biases left out):
    //   LSTM forward: input and hidden gates (4 + 4) and cx read; hy, cy and the workspace's
    //   four gates written. Backward: the workspace (4), cx, cy and the gradients of hy and cy
    //   read; the gates' gradient (4) and cx's written.
    {"::kernel::lstm_cell_forward", 4, 10, CountedKind::kRecurrentCell,
     wire::WorkKind::kElementwise, 0, {9, kNo, kNo, kNo, kNo, kNo, kNo}, {9, 6, 0}},
    {"::kernel::lstm_cell_backward", 4, 9, CountedKind::kRecurrentCell,
     wire::WorkKind::kElementwise, 0, {8, kNo, kNo, kNo, kNo, kNo, kNo}, {8, 5, 0}},
    //   GRU forward: input and hidden gates (3 + 3) and hx read; hy and the storage (5)
    //   written. Backward: the storage (5) and hy's gradient read; the input and hidden gates'
    //   gradients (3 + 3) and hx's written.
    {"::kernel::gru_cell_forward", 4, 9, CountedKind::kRecurrentCell,
     wire::WorkKind::kElementwise, 0, {8, kNo, kNo, kNo, kNo, kNo, kNo}, {7, 6, 0}},
    {"::kernel::gru_cell_backward", 4, 7, CountedKind::kRecurrentCell,
     wire::WorkKind::kElementwise, 0, {6, kNo, kNo, kNo, kNo, kNo, kNo}, {6, 7, 0}},
    // Every element read and written once.
    //   <T>(in, out, int64 N, roll dim, start, size, stride, total dims),
    //   TensorTransformations.cu
    {"::roll_cuda_kernel", 1, 8, CountedKind::kCopy, wire::WorkKind::kElementwise, 0,
     {2, kNo, kNo, kNo, kNo, kNo, kNo}, {0, 0, 0}},
    //   <T, index_t, upper, elements per thread, inplace>(TensorInfo result, TensorInfo self,
    //   int64 k, int64 N padded, index_t last dim padded), TriangularOps.cu (triu, tril: a
    //   causal mask), each element kept or zeroed
    {"::triu_tril_kernel", 5, 5, CountedKind::kCopy, wire::WorkKind::kElementwise, 0,
     {3, kNo, kNo, kNo, kNo, kNo, kNo}, {0, 0, 0}},
};
// clang-format on

std::optional<CountedKernel> classify_by_layout(std::string_view base,
                                                const std::vector<std::string_view>& t,
                                                const std::vector<std::string_view>& p) {
  for (const KernelLayout& l : kKernelLayouts) {
    const bool templates_match =
        t.size() <= l.templates && t.size() + l.older_releases_fewer_templates >= l.templates;
    if (!ends_with(base, l.name) || !templates_match || p.size() != l.params) continue;
    CountedKernel k;
    k.kind = l.kind;
    k.work = l.work;
    k.bytes = {scalar_bytes(t[l.scalar]), l.extra[0], l.extra[1], l.extra[2]};
    for (int i = 0; i < 7 && l.counts[i] != kNo; ++i) {
      if (!count_arg(p, static_cast<size_t>(l.counts[i]), i, k)) return std::nullopt;
    }
    if (k.bytes[0] == 0) return std::nullopt;
    return k;
  }
  return std::nullopt;
}

}  // namespace

std::optional<CountedKernel> classify_counted(std::string_view base, std::string_view d) {
  const std::vector<std::string_view> p = parameter_types(d);
  if (contains(base, "cub::")) return classify_cub(base, p);
  const std::vector<std::string_view> t = template_args(d);
  CountedKernel k;
  if (ends_with(base, "::distribution_elementwise_grid_stride_kernel") && !p.empty()) {
    // (int64 numel, Philox state, distribution, transform), DistributionTemplates.h; the
    // element written is the scalar_t of the distribution_nullary_kernel<scalar_t, ...> that
    // launched it (named inside the lambda types), else the accumulate type.
    k.kind = CountedKind::kRandom;
    k.work = wire::WorkKind::kRandom;
    const size_t at = d.find("distribution_nullary_kernel<");
    const std::vector<std::string_view> outer =
        at == std::string_view::npos ? t : template_args(d.substr(at));
    k.bytes = {outer.empty() ? 0 : scalar_bytes(outer[0]), 0, 0, 0};
    if (k.bytes[0] == 0 || !count_arg(p, 0, 0, k)) return std::nullopt;
    return k;
  }
  if (ends_with(base, "::nll_loss_forward_reduce_cuda_kernel_2d") && t.size() == 3 &&
      p.size() == 10) {
    // (output, total weight, input, target, weights, size_average, nframe, ndim, classes,
    //  ignore index), Loss.cu: one input element and one target per frame.
    k.kind = CountedKind::kNllLossForward;
    k.work = wire::WorkKind::kReduce;
    k.bytes = {scalar_bytes(t[0]), scalar_bytes(t[2]), 0, 0};
  } else if (ends_with(base, "::nll_loss_backward_reduce_cuda_kernel_2d") && t.size() == 2 &&
             p.size() == 10) {
    // (grad input, grad output, target, weights, total weight, size_average, nframe, ndim,
    //  classes, ignore index): one target read and one gradient element written per frame.
    k.kind = CountedKind::kNllLossBackward;
    k.bytes = {scalar_bytes(t[0]), scalar_bytes(t[1]), 0, 0};
  } else if (ends_with(base, "elementwise_kernel_with_index") && p.size() == 3) {
    // (N, f, out), RangeFactories.cu: the output type is behind the functor's result_type;
    // 8 bytes (int64 / double, arange's usual outputs) bound it.
    k.kind = CountedKind::kIndexFill;
    k.bytes = {8, 0, 0, 0};
    if (!count_arg(p, 0, 0, k)) return std::nullopt;
    return k;
  } else if (ends_with(base, "::fill_reverse_indices_kernel") && t.empty() && p.size() == 3 &&
             p[0] == "long*") {
    // (int64 data, int numel, IntDivider<uint> sorted size), SortStable.cu (sort's index
    // output): each of numel indices written once, its position modulo the sorted dimension.
    k.kind = CountedKind::kIndexFill;
    k.bytes = {8, 0, 0, 0};
    if (!count_arg(p, 1, 0, k)) return std::nullopt;
    return k;
  } else if ((ends_with(base, "::fused_dropout_kernel_vec") ||
              ends_with(base, "::fused_dropout_kernel")) &&
             t.size() == 6 && p.size() == 6) {
    // <T, acc, index, ADims, VEC, mask_t>(TensorInfo<const T> in, TensorInfo<T> out,
    // TensorInfo<mask_t> mask, index n, acc p, Philox state), Dropout.cu (nn.Dropout while
    // training): each of n elements read, written scaled or zeroed, and its keep flag written.
    k.kind = CountedKind::kDropout;
    k.work = wire::WorkKind::kRandom;
    k.bytes = {scalar_bytes(t[0]), scalar_bytes(t[5]), 0, 0};
    if (k.bytes[0] == 0 || k.bytes[1] == 0 || !count_arg(p, 3, 0, k)) return std::nullopt;
    return k;
  } else if (base == "at::native::index_elementwise_kernel" && p.size() == 2) {
    // <threads, vt, lambda>(int64 N, lambda), IndexKernel.cu: index / index_put_ over N output
    // elements of OpaqueType<size>; each reads its source element and an int64 index (one
    // indexed dimension; more would read more indices) and writes one element.
    k.kind = CountedKind::kIndexCopy;
    const size_t at = d.find("OpaqueType<");
    k.bytes = {at == std::string_view::npos ? 0 : element_bytes(d.substr(at)), 8, 0, 0};
    if (k.bytes[0] <= 0 || !count_arg(p, 0, 0, k)) return std::nullopt;
    return k;
  } else if (base == "at::native::_scatter_gather_elementwise_kernel" && p.size() == 2) {
    // <threads, vt, lambda>(int N, lambda), ScatterGatherKernel.cu, over N elements of the
    // kernel that launched it: _cuda_scatter_gather_internal_kernel<is_scatter, element,
    // index_t> (gather, scatter, scatter_add: each reads its source element and its index,
    // writes one) or _cuda_scatter_fill_internal_kernel<element, index_t> (scatter of a value:
    // the index read, the element written). The element is OpaqueType<size> or a scalar type.
    const bool fill = contains(d, "_cuda_scatter_fill_internal_kernel<");
    const size_t at = d.find(fill ? "_cuda_scatter_fill_internal_kernel<"
                                  : "_cuda_scatter_gather_internal_kernel<");
    const std::vector<std::string_view> outer = at == std::string_view::npos
                                                    ? std::vector<std::string_view>{}
                                                    : template_args(d.substr(at));
    const size_t first = fill ? 0 : 1;  // the element's position among those arguments
    if (outer.size() != first + 2) return std::nullopt;
    k.kind = fill ? CountedKind::kScatterFill : CountedKind::kIndexCopy;
    k.bytes = {element_bytes(outer[first]), scalar_bytes(outer[first + 1]), 0, 0};
    if (k.bytes[0] <= 0 || k.bytes[1] == 0 || !count_arg(p, 0, 0, k)) return std::nullopt;
    return k;
  } else if ((ends_with(base, "softmax_warp_forward") && p.size() == 8) ||
             (ends_with(base, "softmax_warp_backward") && p.size() == 7)) {
    // <input_t, output_t, acc_t, log2 elements, is_log_softmax, is_masked, ...>: forward
    // (dst, src, int batch, int stride, int element_count, ...), backward (grad input, grad,
    // output, int batch, int stride, int element_count, ...), PersistentSoftmax.cuh: rows of
    // element_count read (twice backward: gradient and output) and written once.
    const bool backward = ends_with(base, "softmax_warp_backward");
    k.kind = CountedKind::kSoftmaxRows;
    k.work = wire::WorkKind::kSoftmax;
    if (t.size() < 2) return std::nullopt;
    k.bytes = {scalar_bytes(t[0]), scalar_bytes(t[1]), backward ? 2 : 1, 0};
    const size_t rows = backward ? 3 : 2;
    if (k.bytes[0] == 0 || k.bytes[1] == 0 || !count_arg(p, rows, 0, k) ||
        !count_arg(p, rows + 2, 1, k))
      return std::nullopt;
    return k;
  } else if (base == "compute_cuda_kernel" && t.size() == 1 && p.size() == 5) {
    // <index_t>(repeats, int64 cumsum, out, int64 size, int64 result_size), Repeat.cu
    // (repeat_interleave): each repeat count and its cumulative sum read, the output written.
    k.kind = CountedKind::kRepeatIndex;
    k.bytes = {scalar_bytes(t[0]), 8, 0, 0};
    if (k.bytes[0] == 0 || !count_arg(p, 3, 0, k) || !count_arg(p, 4, 1, k)) return std::nullopt;
    return k;
  } else if ((ends_with(base, "indexing_backward_kernel") ||
              ends_with(base, "indexing_backward_kernel_stride_1") ||
              ends_with(base, "indexing_backward_kernel_small_stride")) &&
             !t.empty() && p.size() == 9) {
    // <scalar_t, ...>(sorted indices, indices, grad output, grad weight, int64 numel, int64
    // stride, int64 stride_before, int64 outer_dim, bool accumulate), Indexing.cu (index_put_
    // with accumulate=True, the backward of x[idx]): both int64 indices read; for each index and
    // each of outer_dim × stride elements the gradient read and the weight element
    // read-modified-written (at most numel distinct rows: the bound). The small-stride variant
    // (rows of fewer elements than a warp: Swin's relative position bias) takes the same
    // parameters.
    k.kind = CountedKind::kIndexAccumulate;
    k.work = wire::WorkKind::kReduce;
    k.bytes = {scalar_bytes(t[0]), 0, 0, 0};
    if (k.bytes[0] == 0 || !count_arg(p, 4, 0, k) || !count_arg(p, 5, 1, k) ||
        !count_arg(p, 7, 2, k))
      return std::nullopt;
    return k;
  } else if (base == kGroupedMmSetupKernel) {
    // GroupMMCommon.cuh: one thread per group writes its pointers, strides and problem size
    // for the grouped GEMM that follows (read from this launch: torch_grouped_mm.hpp); a few
    // bytes per group.
    k.kind = CountedKind::kConstant;
    return k;
  } else if (ends_with(base, "::tensor_kernel_scan_innermost_dim") && t.size() == 2 &&
             p.size() == 7) {
    // <T, op>(out, in, uint rows, uint row size, uint log2 threads x, T init, op),
    // ScanUtils.cuh: every element of the rows read once and its prefix written once.
    k.kind = CountedKind::kScanRows;
    k.work = wire::WorkKind::kScan;
    k.bytes = {scalar_bytes(t[0]), 0, 0, 0};
    if (k.bytes[0] == 0 || !count_arg(p, 2, 0, k) || !count_arg(p, 3, 1, k)) return std::nullopt;
    return k;
  } else if ((ends_with(base, "::warpMergeSortKVInPlace") && t.size() == 9 && p.size() == 8) ||
             (ends_with(base, "::bitonicSortKVInPlace") && t.size() == 8 && p.size() == 7)) {
    // <dims, dims, block, items per thread, K, V, compare, index_t, ...>(keys, uint slices,
    // uint slice size, uint slice stride, values, uint value stride, compare, K invalid),
    // SortUtils.cuh: each slice's keys and values read into registers, sorted, written back.
    // The bitonic sort (slices of up to 32 items: sort's and topk's sorted results) takes the
    // same arguments but the last, and sorts each slice in shared memory.
    k.kind = CountedKind::kSortSlices;
    k.work = wire::WorkKind::kSort;
    k.bytes = {scalar_bytes(t[4]), scalar_bytes(t[5]), 0, 0};
    if (k.bytes[0] == 0 || k.bytes[1] == 0 || !count_arg(p, 1, 0, k) || !count_arg(p, 2, 1, k))
      return std::nullopt;
    return k;
  } else if (ends_with(base, "::gatherTopK") && t.size() == 4 && p.size() == 11) {
    // <T, IndexType, Dim, WithKthValues>(input, slice size, k, largest, slices, stride, values,
    // stride, indices, stride, kth values), TensorTopK.cu (single-block radix select): each
    // slice read from memory once (its radix passes re-read it from cache) and k values and
    // int64 indices written per slice.
    k.kind = CountedKind::kTopK;
    k.work = wire::WorkKind::kSort;
    k.bytes = {scalar_bytes(t[0]), 8, 0, 0};
    if (k.bytes[0] == 0 || !count_arg(p, 1, 0, k) || !count_arg(p, 2, 1, k) ||
        !count_arg(p, 4, 2, k))
      return std::nullopt;
    return k;
  } else if (base == "at::native::amp_update_scale_cuda_kernel" && p.size() == 6) {
    // (scale, growth tracker, found inf, growth factor, backoff, interval), AmpKernels.cu:
    // GradScaler's update, <<<1, 1>>>: one value read and two written.
    k.kind = CountedKind::kConstant;
    return k;
  } else if (base == "at::native::_assert_async_cuda_kernel" && p.size() == 2) {
    // <T>(const T* input, Msg), TensorCompare.cu: one thread reads one value.
    k.kind = CountedKind::kConstant;
    return k;
  } else if (ends_with(base, "::lpnorm_cleanup") && (t.size() == 5 || t.size() == 4) &&
             (p.size() == 4 || p.size() == 3)) {
    // <T, norm, out_t, apply_root, out_opmath_t>(per-chunk norms, addresses, ..., int
    // max_chunks_per_tensor), ForeachReduceOp.cu: one block per tensor reads its chunks'
    // partial norms and writes the tensor's norm. PyTorch 2.11: the same template, without the
    // parameter between the addresses and the chunk count. PyTorch 2.6 and earlier:
    // <T, norm, out_t, out_opmath_t>(per-chunk norms, addresses, int max_chunks_per_tensor).
    const bool before_apply_root = t.size() == 4;
    k.kind = CountedKind::kNormCleanup;
    k.work = wire::WorkKind::kReduce;
    k.bytes = {scalar_bytes(t[before_apply_root ? 3 : 4]), scalar_bytes(t[2]), 0, 0};
    if (k.bytes[0] == 0 || k.bytes[1] == 0 || !count_arg(p, p.size() - 1, 0, k))
      return std::nullopt;
    return k;
  } else if (ends_with(base, "::indexSelectLargeIndex") && t.size() == 7 && p.size() == 8) {
    // <T, IndicesType, IndexType, dst dims, src dims, index dims, index is major>(dst, src,
    // indices, int dst dim, int src dim, IndexType total size, IndexType inner size, int64 src
    // dim size), Indexing.cu (index_select, and embedding's forward in PyTorch 2.6 and earlier):
    // every element of the output written once from one element of the source; one index read
    // per slice of inner size.
    k.kind = CountedKind::kIndexSelect;
    k.bytes = {element_bytes(t[0]), scalar_bytes(t[1]), 0, 0};
    if (k.bytes[0] == 0 || k.bytes[1] == 0 || !count_arg(p, 5, 0, k) || !count_arg(p, 6, 1, k))
      return std::nullopt;
    return k;
  } else if (ends_with(base, "::unrolled_elementwise_kernel_for_multi_outputs") && !t.empty() &&
             p.size() == 5) {
    // <outputs, f, array, input calc, output calc>(int N, f, data, ...), CUDALoops.cuh: N items,
    // each reading one value of every parameter of f (its lambda's types) and writing
    // `outputs` values, taken as wide as its widest input (the types it returns are not in the
    // name). batch_norm_update_stats_and_invert, aminmax, frexp ...
    const std::vector<std::string_view> in = lambda_params(d);
    int read = 0, widest = 0;
    for (std::string_view type : in) {
      const int b = scalar_bytes(type);
      if (b == 0) return std::nullopt;
      read += b;
      widest = std::max(widest, b);
    }
    k.kind = CountedKind::kMultiOutput;
    k.bytes = {read, std::atoi(std::string(t[0]).c_str()) * widest, 0, 0};
    if (in.empty() || k.bytes[1] == 0 || !count_arg(p, 0, 0, k)) return std::nullopt;
    return k;
  } else if (auto v = classify_by_layout(base, t, p)) {
    return v;
  } else {
    return classify_embedding(base, t, p);
  }
  if (k.bytes[0] == 0 || k.bytes[1] == 0 || !count_arg(p, 6, 0, k)) return std::nullopt;
  return k;
}

std::optional<uint64_t> counted_count(const CountedKernel& k, void* const* args, int i) {
  if (args == nullptr || k.args[i] < 0 || args[k.args[i]] == nullptr) return std::nullopt;
  bool ok = true;
  const uint64_t n = read_count(args, k.args[i], k.arg_bytes[i], ok);
  return ok ? std::optional<uint64_t>(n) : std::nullopt;
}

std::optional<Traffic> counted_traffic(const CountedKernel& k, void* const* args,
                                       const std::array<uint32_t, 3>& grid) {
  if (args == nullptr) return std::nullopt;
  bool ok = true;
  auto arg = [&](int i) { return read_count(args, k.args[i], k.arg_bytes[i], ok); };
  const auto b = [&](int i) { return static_cast<uint64_t>(k.bytes[i]); };
  Traffic w;
  switch (k.kind) {
    case CountedKind::kRandom:
    case CountedKind::kIndexFill:
      w.written = arg(0) * b(0);
      break;
    case CountedKind::kNllLossForward:
      w.read = arg(0) * (b(0) + b(1));
      w.written = 2 * b(0);  // the loss and the total weight
      break;
    case CountedKind::kNllLossBackward:
      w.read = arg(0) * b(1);
      w.written = arg(0) * b(0);
      break;
    case CountedKind::kRadixSortPass: {
      const uint64_t n = arg(0);
      w.read = w.written = n * (b(0) + b(1));
      break;
    }
    case CountedKind::kRadixHistogram:
      w.read = arg(0) * b(0);
      break;
    case CountedKind::kScan: {
      const uint64_t n = arg(0);
      w.read = n * b(0);
      w.written = n * b(1);
      break;
    }
    case CountedKind::kTileInit:
      w.written = arg(0) * b(0);
      break;
    case CountedKind::kSelect: {
      const uint64_t n = arg(0);
      w.read = n * (b(0) + b(1));
      w.written = n * (b(2) + b(3));
      break;
    }
    case CountedKind::kEmbeddingScatter: {
      // One segment per stride_warped threads: segments = blocks x block / stride_warped.
      const uint64_t stride = arg(0), warped = arg(1);
      if (warped == 0 || warped < stride) return std::nullopt;
      const uint64_t segments = uint64_t{grid[0]} * std::min<uint64_t>(warped, 1024) / warped;
      w.read = segments * (stride * b(2) + 2 * b(1));
      w.written = segments * stride * b(0);
      break;
    }
    case CountedKind::kSegmentCounts: {
      const uint64_t n = arg(0);
      w.read = 2 * n * b(0);
      w.written = n * b(0);
      break;
    }
    case CountedKind::kSegmentOffsets: {
      const uint64_t n = uint64_t{grid[0]} * 32;
      w.read = 3 * n * b(0);
      w.written = n * b(0);
      break;
    }
    case CountedKind::kNormCleanup:
      w.read = uint64_t{grid[0]} * arg(0) * b(0);
      w.written = uint64_t{grid[0]} * b(1);
      break;
    case CountedKind::kIndexSelect: {
      const uint64_t total = arg(0), inner = arg(1);
      if (inner == 0) return std::nullopt;
      w.read = total * b(0) + (total / inner) * b(1);
      w.written = total * b(0);
      break;
    }
    case CountedKind::kEmbeddingRows: {
      const uint64_t n = arg(0), stride = arg(1);
      w.read = n * (stride * b(0) + b(1)) + n * stride * b(0);  // gradient rows, weight rows
      w.written = n * stride * b(0);
      break;
    }
    case CountedKind::kCopy:
      w.read = w.written = arg(0) * b(0);
      break;
    case CountedKind::kDropout: {
      const uint64_t n = arg(0);
      w.read = n * b(0);
      w.written = n * (b(0) + b(1));
      break;
    }
    case CountedKind::kIndexCopy: {
      const uint64_t n = arg(0);
      w.read = n * (b(0) + b(1));
      w.written = n * b(0);
      break;
    }
    case CountedKind::kScatterFill: {
      const uint64_t n = arg(0);
      w.read = n * b(1);
      w.written = n * b(0);
      break;
    }
    case CountedKind::kSoftmaxRows: {
      const uint64_t n = arg(0) * arg(1);
      w.read = n * b(0) * b(2);
      w.written = n * b(1);
      break;
    }
    case CountedKind::kRepeatIndex:
      w.read = arg(0) * (b(0) + b(1));
      w.written = arg(1) * b(0);
      break;
    case CountedKind::kIndexAccumulate: {
      const uint64_t n = arg(0), row = arg(1) * arg(2);
      w.read = n * 2 * 8 + n * row * b(0) * 2;  // indices; gradient and weight elements
      w.written = n * row * b(0);
      break;
    }
    case CountedKind::kScanRows:
      w.read = w.written = arg(0) * arg(1) * b(0);
      break;
    case CountedKind::kSortSlices:
      w.read = w.written = arg(0) * arg(1) * (b(0) + b(1));
      break;
    case CountedKind::kTopK: {
      const uint64_t slices = arg(2);
      w.read = slices * arg(0) * b(0);
      w.written = slices * arg(1) * (b(0) + b(1));
      break;
    }
    case CountedKind::kPoolFlat:
    case CountedKind::kPoolBackward: {
      // (count, H, W, PH, PW): the forward's count is its outputs (N·C·PH·PW), the backward's
      // its input gradients (N·C·H·W), each written with an index of b(1) bytes (max pooling's;
      // none for the others). The other side, N·C planes of the other size, is read once.
      const bool forward = k.kind == CountedKind::kPoolFlat;
      const uint64_t plane_in = arg(1) * arg(2), plane_out = arg(3) * arg(4);
      const uint64_t written_plane = forward ? plane_out : plane_in;
      if (written_plane == 0) return std::nullopt;
      w.read = arg(0) / written_plane * (forward ? plane_in : plane_out) * b(0);
      w.written = arg(0) * (b(0) + b(1));
      break;
    }
    case CountedKind::kMaxPoolForward:
    case CountedKind::kMaxPoolBackward: {
      const uint64_t planes = arg(0) * arg(1);
      const uint64_t in = planes * arg(2) * arg(3) * b(0);
      const uint64_t out = planes * arg(4) * arg(5) * (b(0) + 8);  // values and indices
      w.read = k.kind == CountedKind::kMaxPoolForward ? in : out;
      w.written = k.kind == CountedKind::kMaxPoolForward ? out : in;
      break;
    }
    case CountedKind::kDepthwiseForward: {
      // (outputs, K, multiplier, W, H, Q, P)
      const uint64_t outputs = arg(0), k_out = arg(1), multiplier = arg(2);
      const uint64_t out_plane = arg(5) * arg(6);
      if (k_out == 0 || multiplier == 0 || out_plane == 0) return std::nullopt;
      const uint64_t n = outputs / (k_out * out_plane);
      w.read = n * (k_out / multiplier) * arg(3) * arg(4) * b(0);
      w.written = outputs * b(0);
      break;
    }
    case CountedKind::kDepthwiseData: {
      // (inputs, C, K, W, H, Q, P): the input gradient N·C·H·W written, N·K·P·Q read.
      const uint64_t inputs = arg(0), in_plane = arg(1) * arg(3) * arg(4);
      if (in_plane == 0) return std::nullopt;
      w.read = inputs / in_plane * arg(2) * arg(5) * arg(6) * b(0);
      w.written = inputs * b(0);
      break;
    }
    case CountedKind::kDepthwiseFilter:
      // (N, C, K, W, H, Q, P): N·K·P·Q and N·C·H·W read.
      w.read = arg(0) * (arg(2) * arg(5) * arg(6) + arg(1) * arg(3) * arg(4)) * b(0);
      break;
    case CountedKind::kNormChannelsLast: {
      const uint64_t n = arg(0) * arg(1);
      w.read = n * b(0) * b(1);
      w.written = n * b(0) * b(2) + arg(1) * 4 * b(3);
      break;
    }
    case CountedKind::kMultiOutput:
      w.read = arg(0) * b(0);
      w.written = arg(0) * b(1);
      break;
    case CountedKind::kRecurrentCell:
      w.read = arg(0) * b(0) * b(1);
      w.written = arg(0) * b(0) * b(2);
      break;
    case CountedKind::kConstant:
      break;
  }
  if (!ok) return std::nullopt;
  return w;
}

}  // namespace phantora::shim
