// PyTorch kernels whose work is a count of items held in one integer parameter (or given by
// the grid, one thread or row per item), with the item's bytes named by the kernel's template
// arguments: random-number generation (normal_, uniform_, randint, ...), dropout, nll_loss,
// arange, roll,
// advanced indexing, gather and scatter, cumsum along the last dimension, small sorts, warp
// softmax, repeat_interleave, index_put_ with accumulation, top-k selection, the
// CUB device-wide primitives PyTorch calls (radix-sort passes, histograms, scans,
// unique-by-key, select, and their tile-state initialisation), embedding backward's segment
// bookkeeping and final scatter (and its small-batch variant), the foreach-norm cleanup, and
// index_select's large-index kernel, and the kernels of CNN layers PyTorch runs itself (max
// pooling, depthwise convolutions in NCHW, channels-last batch norm, LSTM and GRU cells). Each
// is priced as memory traffic (what it reads and writes through HBM); sources and the parameter
// positions are listed per kind in torch_counted_kernels.cpp and docs/kernels.md. Pure string and
// byte work.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "phantora/protocol.hpp"

namespace phantora::shim {

enum class CountedKind : uint8_t {
  kRandom,            // distribution_elementwise_grid_stride_kernel(int64 numel, ...)
  kNllLossForward,    // nll_loss_forward_reduce_cuda_kernel_2d(..., nframe, ...)
  kNllLossBackward,   // nll_loss_backward_reduce_cuda_kernel_2d(..., nframe, ...)
  kIndexFill,         // elementwise_kernel_with_index(N, f, out): arange, linspace
  kRadixSortPass,     // cub DeviceRadixSortOnesweepKernel: one digit pass over keys and values
  kRadixHistogram,    // cub DeviceRadixSortHistogramKernel: every digit's counts, keys read once
  kScan,              // cub DeviceScanKernel: prefix sums (cumsum, exclusive_sum)
  kTileInit,          // cub DeviceScanInitKernel / DeviceCompactInitKernel(tile state, tiles)
  kSelect,            // cub DeviceUniqueByKeySweepKernel / DeviceSelectSweepKernel
  kEmbeddingScatter,  // sum_and_scatter: per segment, its partial sums into the weight row
  kSegmentCounts,     // krn_partials_per_segment(..., numel)
  kSegmentOffsets,    // krn_partial_segment_offset: one thread per index, 32 per block
  kNormCleanup,       // lpnorm_cleanup: one block per tensor over its per-chunk partial norms
  kEmbeddingRows,     // embedding_backward_feature_kernel(indices, grad, weight grad, n, stride)
  kCopy,              // roll_cuda_kernel(in, out, N, ...): every element read and written once
  kDropout,           // fused_dropout_kernel[_vec](in, out, mask, n, p, ...): nn.Dropout
  kIndexSelect,       // indexSelectLargeIndex(dst, src, indices, ..., total, inner, ...)
  kIndexCopy,         // index_elementwise_kernel(N, f): advanced indexing and index_put_;
                      // _scatter_gather_elementwise_kernel(N, f): gather, scatter
  kScatterFill,       // _scatter_gather_elementwise_kernel of scatter_fill: index read, value set
  kScanRows,          // tensor_kernel_scan_innermost_dim(out, in, rows, row size, ...): cumsum
  kSoftmaxRows,       // softmax_warp_forward / _backward(..., int rows, int stride, int length)
  kRepeatIndex,       // compute_cuda_kernel(repeats, cumsum, out, int64 size, int64 out size)
  kIndexAccumulate,   // indexing_backward_kernel[_stride_1](..., numel, stride, before, outer)
  kSortSlices,        // warpMergeSortKVInPlace(keys, slices, slice size, ..., values, ...)
  kTopK,              // gatherTopK(input, slice size, k, largest, slices, ...): topk's selection
  kPoolFlat,          // max_pool_forward_nchw / avg_pool2d_out_cuda_frame[_nhwc](int outputs,
                      // in, C, H, W, PH, PW, ...)
  kPoolBackward,      // avg_pool2d_backward_*(index inputs, grad, C, H, W, PH, PW, ...): one
                      // thread per input element
  kMaxPoolForward,    // max_pool_forward_nhwc(in, N, C, H, W, PH, PW, ...)
  kMaxPoolBackward,   // max_pool_backward_nchw / _nhwc(grad, indices, N, C, H, W, PH, PW, ...)
  kDepthwiseForward,  // conv_depthwise2d_forward_kernel(..., outputs, K, multiplier, W, H, Q, P)
  kDepthwiseData,     // conv_depthwise2d_backward_kernel(..., inputs, C, multiplier, K, W, H, Q, P)
  kDepthwiseFilter,   // conv_depthwise2d_grad_weight_kernel(..., N, C, K, multiplier, W, H, Q, P)
  kNormChannelsLast,  // batch_norm_*_channels_last_kernel(..., int reduction size, int stride)
  kRecurrentCell,     // lstm_cell_* / gru_cell_*(tensors..., hidden size, elements)
  kMultiOutput,       // unrolled_elementwise_kernel_for_multi_outputs<outputs, f, ...>(int N, ...)
  kConstant,          // a single-thread or fixed-size kernel: the launch itself is the cost
};

struct CountedKernel {
  CountedKind kind = CountedKind::kConstant;
  wire::WorkKind work = wire::WorkKind::kElementwise;  // what the cost model prices it as
  // The parameters the kind reads (see the .cpp), and their widths.
  std::array<int, 7> args{-1, -1, -1, -1, -1, -1, -1};
  std::array<int, 7> arg_bytes{};
  // Element sizes the kind's formula uses, from the name (see the .cpp per kind).
  std::array<int, 4> bytes{0, 0, 0, 0};
};

// From the function's qualified name (no template arguments) and the whole demangled name;
// nullopt when the kernel is not one of these or its parameters are not where expected.
std::optional<CountedKernel> classify_counted(std::string_view base, std::string_view demangled);

struct Traffic {
  uint64_t read = 0, written = 0;
};
// The i-th count the kind reads (CountedKernel::args), nullopt when its parameter is missing or
// the value is implausible (negative, or past 2^40 items).
std::optional<uint64_t> counted_count(const CountedKernel& k, void* const* args, int i);
// What one launch moves; nullopt when a count read from the arguments is implausible.
std::optional<Traffic> counted_traffic(const CountedKernel& k, void* const* args,
                                       const std::array<uint32_t, 3>& grid);

}  // namespace phantora::shim
