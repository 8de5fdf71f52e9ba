#include "torch_kernel_args.hpp"

#include <algorithm>
#include <cstring>

#include "byte_reads.hpp"
#include "safe_read.hpp"

namespace phantora::shim {
namespace {

constexpr int kMaxDims = 25;  // OffsetCalculator's MAX_DIMS for CUDA builds
// OffsetCalculator<NARGS, uint32_t>: int dims; IntDivider<uint32_t> sizes_[25] (divisor, m1,
// shift); uint32_t strides_[25][NARGS].
constexpr size_t kDividerBytes = 12;
constexpr size_t offset_calc_bytes(int nargs) {
  return 4 + kMaxDims * kDividerBytes + kMaxDims * 4 * static_cast<size_t>(nargs);
}
// ReduceConfig: 14 ints, a bool and an int (64 bytes, 4-byte aligned).
constexpr size_t kReduceConfigBytes = 64;

std::optional<OffsetCalc> read_calc(const uint8_t* p, int nargs) {
  OffsetCalc c;
  c.nargs = nargs;
  c.dims = load<int32_t>(p, 0);
  if (c.dims < 0 || c.dims > kMaxDims) return std::nullopt;
  for (int d = 0; d < c.dims; ++d) {
    c.sizes[d] = load<uint32_t>(p, 4 + d * kDividerBytes);
    if (c.sizes[d] == 0) return std::nullopt;
    for (int a = 0; a < nargs; ++a) {
      c.strides[d][a] = load<uint32_t>(p, 4 + kMaxDims * kDividerBytes + (d * nargs + a) * 4);
    }
  }
  return c;
}

// The sizes in FlashAttention-2's Flash_fwd_params / Flash_bwd_params, which PyTorch's flash
// kernels take by value as their only parameter (pytorch_flash namespace; the layout of
// flash-attention 2.5 and later, csrc/flash_attn/src/flash.h: Qkv_params' three pointers, nine
// int64 strides and the head counts, then O's pointers and strides, the P and log-sum-exp
// pointers, then the int dimensions). Read only when the fields agree with each other and with
// the launch (grid, the kernel's head dim and tile), so a different layout falls back to the
// grid's square shape instead of pricing garbage.
struct FlashSizes {
  uint32_t batch, heads, heads_kv, seq_q, seq_k;
};
// `split`: a split-KV forward, whose grid puts the splits on y and batch x heads on z.
std::optional<FlashSizes> read_flash_sizes(const TorchKernel& k, bool split, const void* params,
                                           const std::array<uint32_t, 3>& grid) {
  constexpr size_t kHeads = 96, kBatch = 176;
  const auto* p = static_cast<const uint8_t*>(params);
  const int32_t h = load<int32_t>(p, kHeads), h_k = load<int32_t>(p, kHeads + 4);
  const int32_t ratio = load<int32_t>(p, kHeads + 8);
  const int32_t b = load<int32_t>(p, kBatch), sq = load<int32_t>(p, kBatch + 4);
  const int32_t sk = load<int32_t>(p, kBatch + 8), d = load<int32_t>(p, kBatch + 16);
  const int32_t sq_rounded = load<int32_t>(p, kBatch + 20);
  const int32_t sk_rounded = load<int32_t>(p, kBatch + 24);
  const int32_t d_rounded = load<int32_t>(p, kBatch + 28);
  const auto round128 = [](int64_t v) { return (v + 127) / 128 * 128; };
  if (h < 1 || h_k < 1 || h % h_k != 0 || ratio != h / h_k || b < 1 || sq < 1 || sk < 1 || d < 1 ||
      d > d_rounded || d_rounded > k.flash_head_dim || d_rounded % 8 != 0 ||
      sq_rounded != round128(sq) || sk_rounded != round128(sk)) {
    return std::nullopt;
  }
  // Grid: (query blocks, batch, heads) forward, (key blocks, batch, heads) backward.
  const bool backward = k.flash == FlashKernel::kBackward;
  const int64_t rows = backward ? sk : sq;
  const int64_t tile = backward ? k.flash_block_n : k.flash_block_m;
  const bool grid_agrees =
      split ? int64_t{grid[2]} == int64_t{b} * h
            : grid[1] == static_cast<uint32_t>(b) && grid[2] == static_cast<uint32_t>(h);
  if (!grid_agrees || int64_t{grid[0]} != (rows + tile - 1) / tile) return std::nullopt;
  return FlashSizes{static_cast<uint32_t>(b), static_cast<uint32_t>(h), static_cast<uint32_t>(h_k),
                    static_cast<uint32_t>(sq), static_cast<uint32_t>(sk)};
}

}  // namespace

std::array<uint64_t, 2> OffsetCalc::offsets(uint64_t linear) const {
  std::array<uint64_t, 2> out{0, 0};
  for (int d = 0; d < dims; ++d) {
    const uint64_t index = linear % sizes[d];
    linear /= sizes[d];
    for (int a = 0; a < nargs; ++a) out[a] += index * strides[d][a];
  }
  return out;
}

const char* scalar_type_name(int8_t code) {
  // c10::ScalarType's codes (c10/core/ScalarType.h): Byte 0, Char 1, Short 2, Int 3, Long 4,
  // Half 5, Float 6, Double 7, complex 8-10, Bool 11, quantized 12-14, BFloat16 15.
  switch (code) {
    case 0:
      return "unsigned char";
    case 1:
      return "signed char";
    case 2:
      return "short";
    case 3:
      return "int";
    case 4:
      return "long";
    case 5:
      return "c10::Half";
    case 6:
      return "float";
    case 7:
      return "double";
    case 11:
      return "bool";
    case 15:
      return "c10::BFloat16";
    default:
      return "";
  }
}

int scalar_type_bytes(int8_t code) {
  return scalar_bytes(scalar_type_name(code));
}

std::optional<ReduceArgs> read_reduce(const TorchKernel& k, void* const* args) {
  if (k.family != TorchFamily::kReduce || k.ops_bytes == 0 || args == nullptr) return std::nullopt;
  const int acc = k.accumulator.bytes;
  if (acc <= 0 || acc > 16) return std::nullopt;
  const int acc_align = std::min(acc, 8);  // pair<T, int64> and complex<double>: 8-aligned
  const auto* p = static_cast<const uint8_t*>(args[0]);
  // ReduceOp: ops, ident, config, input_calc, output_calc, src, dst[2], acc_buf, cta_buf,
  // semaphores, base_idx, accumulate, final_output, noutputs.
  const size_t ident = align_up(static_cast<size_t>(k.ops_bytes), static_cast<size_t>(acc_align));
  const size_t config = align_up(ident + acc, 4);
  const size_t input_calc = config + kReduceConfigBytes;
  const size_t output_calc = input_calc + offset_calc_bytes(1);
  const size_t src = align_up(output_calc + offset_calc_bytes(2), 8);
  ReduceArgs r;
  std::memcpy(r.ident.data(), p + ident, acc);
  r.element_size = load<int32_t>(p, config);
  const int32_t num_inputs = load<int32_t>(p, config + 4);
  const int32_t num_outputs = load<int32_t>(p, config + 8);
  // ReduceConfig holds sizeof(arg_t), the accumulator's size (Reduce.cuh: setReduceConfig), not
  // the input element's: a bf16 sum says 4.
  if (r.element_size != acc || num_inputs < 1 || num_outputs < 1) return std::nullopt;
  r.num_inputs = static_cast<uint64_t>(num_inputs);
  r.num_outputs = static_cast<uint64_t>(num_outputs);
  auto in = read_calc(p + input_calc, 1);
  auto out = read_calc(p + output_calc, 2);
  if (!in || !out) return std::nullopt;
  r.input_calc = *in;
  r.output_calc = *out;
  r.src = load<uint64_t>(p, src);
  r.dst = load<uint64_t>(p, src + 8);
  r.accumulate = load<uint8_t>(p, src + 56) != 0;
  r.final_output = load<uint8_t>(p, src + 57) != 0;
  r.noutputs = load<int32_t>(p, src + 60);
  if (r.src == 0 || r.dst == 0 || r.noutputs < 1 || r.noutputs > 2) return std::nullopt;
  return r;
}

std::optional<CatArgs> read_cat(const TorchKernel& k, void* const* args, uint32_t grid_y) {
  if (k.family != TorchFamily::kCat || args == nullptr) return std::nullopt;
  const auto batch = static_cast<uint32_t>(k.cat_batch);
  if (grid_y == 0 || grid_y > batch) return std::nullopt;
  CatArgs c;
  c.output = load<uint64_t>(static_cast<const uint8_t*>(args[0]), 0);
  // CatArrInputTensorMetadata<T, uint32_t, batch, stride_size>: input[batch] pointers, then
  // offset, dimSize and nElements (uint32_t[batch] each), isContiguous (bool[batch]), then
  // stride_size records of {uint32_t size[4]; uint32_t stride[4]}.
  const auto* m = static_cast<const uint8_t*>(args[1]);
  const size_t offsets = 8 * batch;
  const size_t dim_sizes = offsets + 4 * batch;
  const size_t elements = dim_sizes + 4 * batch;
  const size_t contiguous = elements + 4 * batch;
  const size_t strides = align_up(contiguous + batch, 4);
  for (uint32_t b = 0; b < grid_y; ++b) {
    CatInput in;
    in.data = load<uint64_t>(m, 8 * b);
    in.offset = load<uint32_t>(m, offsets + 4 * b);
    in.dim_size = load<uint32_t>(m, dim_sizes + 4 * b);
    in.elements = load<uint32_t>(m, elements + 4 * b);
    in.contiguous = k.cat_contiguous || load<uint8_t>(m, contiguous + b) != 0;
    const uint32_t record = k.cat_stride_size > 1 ? b : 0;
    for (int d = 0; d < 4; ++d) {
      in.size[d] = load<uint32_t>(m, strides + 32 * record + 4 * d);
      in.stride[d] = load<uint32_t>(m, strides + 32 * record + 16 + 4 * d);
    }
    if (in.elements > 0 && in.data == 0) return std::nullopt;
    c.inputs.push_back(in);
  }
  const auto* os = static_cast<const uint8_t*>(args[2]);
  for (int d = 0; d < 4; ++d) {
    c.out_size[d] = load<uint32_t>(os, 4 * d);
    c.out_stride[d] = load<uint32_t>(os, 16 + 4 * d);
  }
  c.concat_dim = load<int32_t>(static_cast<const uint8_t*>(args[3]), 0);
  c.dim_stride = load<uint32_t>(static_cast<const uint8_t*>(args[4]), 0);
  if (c.output == 0 || c.concat_dim < 0 || c.concat_dim >= k.cat_dims) return std::nullopt;
  return c;
}

std::optional<ElementwiseArgs> read_elementwise(const TorchKernel& k, void* const* args) {
  const bool has_data = k.family == TorchFamily::kVectorized || k.family == TorchFamily::kUnrolled;
  if ((!has_data && k.family != TorchFamily::kStrided) || args == nullptr) return std::nullopt;
  const int32_t n = load<int32_t>(static_cast<const uint8_t*>(args[0]), 0);
  if (n < 0) return std::nullopt;
  ElementwiseArgs e;
  e.n = static_cast<uint64_t>(n);
  e.functor = args[1];
  if (!has_data) return e;
  const auto* data = static_cast<const uint8_t*>(args[2]);
  for (int i = 0; i < k.operands; ++i) e.data.push_back(load<uint64_t>(data, 8 * i));
  // The vectorized kernel only runs on contiguous operands; the unrolled one does when its
  // offset calculators are the trivial ones (a name-level fact).
  e.contiguous = k.family == TorchFamily::kVectorized || k.unrolled_trivial || k.unrolled_cast;
  if (k.unrolled_cast) {
    // (N, f, data, input calc, output calc, LoadWithCast<I>, StoreWithCast<1>); each of
    // loader and storer is {ScalarType dtypes[n]; uint32_t element_sizes[n]}.
    const auto* store = static_cast<const uint8_t*>(args[6]);
    const auto* load_ = static_cast<const uint8_t*>(args[5]);
    e.scalar_types.push_back(load<int8_t>(store, 0));
    for (int i = 1; i < k.operands; ++i) e.scalar_types.push_back(load<int8_t>(load_, i - 1));
    for (int8_t t : e.scalar_types) {
      if (scalar_type_bytes(t) == 0) return std::nullopt;
    }
    if (load<uint32_t>(store, 4) != static_cast<uint32_t>(scalar_type_bytes(e.scalar_types[0])))
      return std::nullopt;
  }
  return e;
}

namespace {

// elementwise_kernel_with_index(index_t N, func_t f, T* out): N is the kind's count.
std::optional<IndexedFillArgs> read_indexed_fill(const TorchKernel& k, void* const* args) {
  const std::optional<uint64_t> n = counted_count(k.counted, args, 0);
  if (!k.out_type_known || !n || args[1] == nullptr || args[2] == nullptr) return std::nullopt;
  IndexedFillArgs a;
  a.n = *n;
  a.functor = args[1];
  std::memcpy(&a.out, args[2], sizeof(a.out));
  return a;
}

// DeviceScanKernel's pointers and start tile; num_items is the kind's count.
std::optional<ScanArgs> read_scan(const TorchKernel& k, void* const* args) {
  const std::optional<uint64_t> n = counted_count(k.counted, args, 0);
  if (!k.out_type_known || !n) return std::nullopt;
  for (int i : {0, 1, 3}) {
    if (args[i] == nullptr) return std::nullopt;
  }
  ScanArgs a;
  a.n = *n;
  std::memcpy(&a.in, args[0], sizeof(a.in));
  std::memcpy(&a.out, args[1], sizeof(a.out));
  std::memcpy(&a.start_tile, args[3], sizeof(a.start_tile));
  return a;
}

}  // namespace

DecodedArgs decode_args(const TorchKernel& k, void* const* args,
                        const std::array<uint32_t, 3>& grid) {
  DecodedArgs d;
  if (args == nullptr) return d;
  switch (k.family) {
    case TorchFamily::kVectorized:
    case TorchFamily::kUnrolled:
    case TorchFamily::kStrided:
      d.elementwise = read_elementwise(k, args);
      break;
    case TorchFamily::kReduce:
      d.reduce = read_reduce(k, args);
      break;
    case TorchFamily::kCat:
      d.cat = read_cat(k, args, grid[1]);
      break;
    case TorchFamily::kCounted:
      if (k.counted.kind == CountedKind::kIndexFill) d.indexed_fill = read_indexed_fill(k, args);
      if (k.counted.kind == CountedKind::kScan) d.scan = read_scan(k, args);
      break;
    default:
      break;
  }
  return d;
}

std::optional<LaunchWork> launch_work(const TorchKernel& k, void* const* args,
                                      const std::array<uint32_t, 3>& grid) {
  return launch_work(k, decode_args(k, args, grid), args, grid);
}

std::optional<LaunchWork> launch_work(const TorchKernel& k, const DecodedArgs& decoded,
                                      void* const* args, const std::array<uint32_t, 3>& grid) {
  if (args == nullptr) return std::nullopt;
  LaunchWork w;
  switch (k.family) {
    case TorchFamily::kVectorized:
    case TorchFamily::kUnrolled:
    case TorchFamily::kStrided: {
      const auto& e = decoded.elementwise;
      if (!e || k.operands <= 0 || k.in_bytes <= 0) return std::nullopt;
      w.kind = wire::WorkKind::kElementwise;
      w.bytes_read = e->n * static_cast<uint64_t>(k.in_bytes) * (k.operands - 1);
      w.bytes_written = e->n * static_cast<uint64_t>(k.out_bytes);
      return w;
    }
    case TorchFamily::kReduce: {
      const auto& r = decoded.reduce;
      if (!r) return std::nullopt;
      w.kind = wire::WorkKind::kReduce;
      w.bytes_read = r->num_inputs * r->num_outputs * static_cast<uint64_t>(k.scalar.bytes);
      w.bytes_written = r->num_outputs * static_cast<uint64_t>(k.out_scalar.bytes);
      if (r->noutputs == 2) {
        w.bytes_written += r->num_outputs * static_cast<uint64_t>(k.second_output_bytes);
      }
      return w;
    }
    case TorchFamily::kCat: {
      const auto& c = decoded.cat;
      if (!c) return std::nullopt;
      w.kind = wire::WorkKind::kCat;
      for (const CatInput& in : c->inputs) {
        w.bytes_read += uint64_t{in.elements} * static_cast<uint64_t>(k.cat_element_bytes);
      }
      w.bytes_written = w.bytes_read;
      return w;
    }
    case TorchFamily::kRowwise: {
      const auto* p = static_cast<const uint8_t*>(args[k.row_length_arg]);
      const int64_t length = k.row_length_bytes == 8 ? load<int64_t>(p, 0) : load<int32_t>(p, 0);
      if (length <= 0) return std::nullopt;
      const uint64_t rows = uint64_t{grid[0]} * grid[1] * grid[2];
      const uint64_t row_bytes = static_cast<uint64_t>(length) * k.in_bytes;
      w.kind = k.row_kind;
      w.bytes_read = rows * row_bytes * (k.operands - 1);
      w.bytes_written = rows * row_bytes;
      return w;
    }
    case TorchFamily::kIndexed: {
      auto arg = [&](int i) -> int64_t {
        const int at = k.size_args[i];
        const auto* p = static_cast<const uint8_t*>(args[at]);
        return k.size_arg_bytes[i] == 8 ? load<int64_t>(p, 0) : load<int32_t>(p, 0);
      };
      const int64_t count = arg(0), size = arg(1);
      if (count < 0 || size < 0) return std::nullopt;
      if (k.functor == "split_copy") {
        // num_chunks (size) rows of src_stride (count) bytes, every split of a row copied out:
        // exact for FSDP2's all-gather copy-out, an upper bound for a copy of fewer splits.
        w.kind = wire::WorkKind::kCat;
        w.bytes_read = w.bytes_written = static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
        return w;
      }
      if (k.functor == "embedding_grad") {
        // numel (count) gradient rows of stride (size) elements read with their indices; one
        // fp32 partial sum per segment of equal indices written, at most one per row (the
        // bound is taken: the number of segments lives on the device).
        const auto rows = static_cast<uint64_t>(count), width = static_cast<uint64_t>(size);
        w.kind = wire::WorkKind::kReduce;
        w.bytes_read = rows * (width * static_cast<uint64_t>(k.in_bytes) +
                               static_cast<uint64_t>(k.index_bytes));
        w.bytes_written = rows * width * 4;
        return w;
      }
      if (k.functor == "gamma_beta") {
        // dY and X (M x N) and the rows' mean and rstd read; dgamma and dbeta (N) written.
        const auto m = static_cast<uint64_t>(count), n = static_cast<uint64_t>(size);
        w.kind = wire::WorkKind::kReduce;
        w.bytes_read = 2 * m * n * static_cast<uint64_t>(k.in_bytes) +
                       2 * m * static_cast<uint64_t>(k.accumulator.bytes);
        w.bytes_written = 2 * n * static_cast<uint64_t>(k.out_bytes);
        return w;
      }
      if (k.functor == "chunk_cat") {
        // grid z slices of slice_size (count) output bytes, chunks of chunk_size (size) each;
        // the source is dst_to_src_ratio times narrower (bf16 gradients into fp32).
        const int64_t ratio = arg(2);
        if (size == 0 || count < size || ratio < 1 || ratio > 8) return std::nullopt;
        w.kind = wire::WorkKind::kCat;
        w.bytes_written = uint64_t{grid[2]} * static_cast<uint64_t>(count);
        w.bytes_read = w.bytes_written / static_cast<uint64_t>(ratio);
        return w;
      }
      const auto idx = static_cast<uint64_t>(k.index_bytes);
      if (k.functor == "gather") {
        // num_ind slices of slice_size bytes each, and the indices.
        w.kind = wire::WorkKind::kElementwise;
        w.bytes_read = static_cast<uint64_t>(count) * (static_cast<uint64_t>(size) + idx);
        w.bytes_written = static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
        return w;
      }
      // numIndices rows of featureSize read (with their indices), numBags rows written.
      const int64_t feature = arg(2);
      if (feature < 0) return std::nullopt;
      const auto e = static_cast<uint64_t>(k.in_bytes);
      w.kind = wire::WorkKind::kElementwise;
      w.bytes_read = static_cast<uint64_t>(count) * (static_cast<uint64_t>(feature) * e + idx);
      w.bytes_written = static_cast<uint64_t>(size) * static_cast<uint64_t>(feature) * e;
      return w;
    }
    case TorchFamily::kFlashAttention: {
      // The sizes from the params struct (read_flash_sizes), else from the grid (sequence
      // blocks, batch, heads), which knows the sequence to a block.
      const uint64_t b = grid[1], h = grid[2];
      const uint64_t d = static_cast<uint64_t>(k.flash_head_dim);
      const uint64_t e = static_cast<uint64_t>(k.flash_elem_bytes);
      const uint64_t seq_m = uint64_t{grid[0]} * static_cast<uint64_t>(k.flash_block_m);
      switch (k.flash) {
        case FlashKernel::kForward:
        case FlashKernel::kBackward:
        case FlashKernel::kForwardSplitKv: {
          const uint64_t seq = k.flash != FlashKernel::kBackward
                                   ? seq_m
                                   : uint64_t{grid[0]} * static_cast<uint64_t>(k.flash_block_n);
          const bool split = k.flash == FlashKernel::kForwardSplitKv && k.flash_split;
          wire::AttentionShape& a = w.attention;
          if (const std::optional<FlashSizes> f = read_flash_sizes(k, split, args[0], grid)) {
            a.batch = f->batch, a.heads_q = f->heads, a.heads_kv = f->heads_kv;
            a.seq_q = f->seq_q, a.seq_k = f->seq_k;
          } else {
            // The grid alone: self-attention as in training, the other length taken to be the
            // same. A split launch spreads the keys over grid y and folds batch into heads
            // (grid z): the whole attention is still this one launch's work.
            a.batch = static_cast<uint32_t>(split ? 1 : b);
            a.heads_q = a.heads_kv = static_cast<uint32_t>(h);
            a.seq_q = a.seq_k = static_cast<uint32_t>(seq);
          }
          a.head_dim = static_cast<uint32_t>(d);
          a.causal = k.flash_causal ? 1 : 0;
          a.dtype = k.flash_bf16 ? wire::DataType::kBF16 : wire::DataType::kF16;
          a.impl = wire::AttentionImpl::kFlash2;
          w.kind = k.flash == FlashKernel::kBackward ? wire::WorkKind::kAttentionBackward
                                                     : wire::WorkKind::kAttentionForward;
          return w;
        }
        case FlashKernel::kDotDoO:
          // Reads dO and O, writes the fp32 row sums (and clears the fp32 dQ accumulator).
          w.kind = wire::WorkKind::kElementwise;
          w.bytes_read = 2 * b * h * seq_m * d * e;
          w.bytes_written = b * h * seq_m * 4 + b * h * seq_m * d * 4;
          return w;
        case FlashKernel::kConvertDq:
          w.kind = wire::WorkKind::kElementwise;
          w.bytes_read = b * h * seq_m * d * 4;
          w.bytes_written = b * h * seq_m * d * e;
          return w;
        case FlashKernel::kSplitKvCombine: {
          // Rows of batch x heads x queries, kBlockM per block: every split's fp32 partial
          // output and row sum read (the split count is on the device: its maximum is taken),
          // the output row written.
          const uint64_t rows = uint64_t{grid[0]} * static_cast<uint64_t>(k.flash_combine_rows);
          w.kind = wire::WorkKind::kElementwise;
          w.bytes_read = rows * static_cast<uint64_t>(k.flash_max_splits) * (d * 4 + 4);
          w.bytes_written = rows * d * e;
          return w;
        }
      }
      return std::nullopt;
    }
    case TorchFamily::kMultiTensor: {
      // The metadata is the first parameter, by value; one block per chunk. Its layout is the
      // build's (torch_multi_tensor.hpp): the process's CUDA major says which first, the other
      // is tried when that one does not decode. Read without faulting: the 25 KB layout read
      // over a 3 KB struct runs past its caller's stack.
      std::optional<uint64_t> elements;
      for (const MultiTensorLimits& limits :
           {k.multi_tensor_limits, k.multi_tensor_limits.other()}) {
        const size_t bytes = limits.metadata_bytes(k.multi_tensor);
        const std::string metadata = read_up_to(args[0], bytes);
        if (metadata.size() < bytes) continue;
        elements = multi_tensor_elements(k.multi_tensor, limits, metadata.data(), grid[0]);
        if (elements) break;
      }
      if (!elements) return std::nullopt;
      w.kind = wire::WorkKind::kForeach;
      w.bytes_read = *elements * static_cast<uint64_t>(k.multi_tensor.read_bytes_per_element);
      w.bytes_written = *elements * static_cast<uint64_t>(k.multi_tensor.written_bytes_per_element);
      return w;
    }
    case TorchFamily::kCounted: {
      const std::optional<Traffic> t = counted_traffic(k.counted, args, grid);
      if (!t) return std::nullopt;
      w.kind = k.counted.work;
      w.bytes_read = t->read;
      w.bytes_written = t->written;
      return w;
    }
    case TorchFamily::kMemEfficientAttention: {
      const std::optional<wire::AttentionShape> a =
          read_mem_efficient(k.mem_efficient, args[0], grid);
      if (!a) return std::nullopt;
      w.attention = *a;
      w.kind = k.mem_efficient.backward ? wire::WorkKind::kAttentionBackward
                                        : wire::WorkKind::kAttentionForward;
      return w;
    }
    case TorchFamily::kUnknown:
      break;
  }
  return std::nullopt;
}

}  // namespace phantora::shim
