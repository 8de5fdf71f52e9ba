// What a PyTorch kernel is, read from its demangled name: the family of launch code that
// generated it (elementwise loops, reductions, concatenation, row-wise norms and softmax) and the
// element types it works on. The family tells the shim how to read the launch's arguments
// (torch_kernel_args.hpp) for the element count that prices the launch and, for tiny tensors,
// for the operands that let it compute the result (small_kernels.hpp).
//
// Names come from PyTorch's ATen/native/cuda sources (Loops.cuh, CUDALoops.cuh, Reduce.cuh,
// Shape.cu, layer_norm_kernel.cu, SoftMax.cu); docs/kernels.md lists the families and what each
// reads. Pure string work: no CUDA, no process state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torch_counted_kernels.hpp"
#include "torch_grouped_mm.hpp"
#include "torch_mem_efficient_attention.hpp"
#include "torch_multi_tensor.hpp"

namespace phantora::shim {

enum class TorchFamily : uint8_t {
  kUnknown = 0,
  // vectorized_elementwise_kernel<vec, F, std::array<char*, K>>(int N, F f, array data)
  kVectorized,
  // unrolled_elementwise_kernel<F, array, ...>(int N, F f, array data, in_calc, out_calc, ...)
  kUnrolled,
  // elementwise_kernel<threads, vt, lambda>(int N, lambda): strided operands behind the lambda
  kStrided,
  // reduce_kernel<threads, outputs, ReduceOp<...>>(ReduceOp op)
  kReduce,
  // CatArrayBatchedCopy*<OpaqueType<bytes>, index, dims, batch, ...>(out, inputs, os, dim, stride)
  kCat,
  // One block per row: vectorized_layer_norm_kernel(int N, ...), cunn_SoftMax*(..., classes)
  kRowwise,
  // Sizes in plain integer parameters: vectorized_gather_kernel, EmbeddingBag_updateOutput*
  kIndexed,
  // PyTorch's FlashAttention-2 (pytorch_flash::*): shapes from the grid (query or key blocks,
  // batch, heads) and the kernel traits in the name (head dim, block sizes, causal).
  kFlashAttention,
  // multi_tensor_apply_kernel<Metadata, Functor, ...>(Metadata, Functor, ...): _foreach_* ops
  // and fused optimizers over lists of tensors (torch_multi_tensor.hpp).
  kMultiTensor,
  // An item count in one integer parameter (or the grid) and item sizes in the name: random
  // numbers, nll_loss, arange, CUB sort / scan / select, embedding backward's segment kernels
  // (torch_counted_kernels.hpp).
  kCounted,
  // PyTorch's memory-efficient attention (fmha_cutlassF_* / fmha_cutlassB_*): the shape from
  // the Params struct (torch_mem_efficient_attention.hpp).
  kMemEfficientAttention,
};

enum class FlashKernel : uint8_t {
  kForward,    // flash_fwd_kernel: grid (query blocks, batch, heads)
  kBackward,   // flash_bwd_dq_dk_dv_loop[_seqk_parallel]_kernel: grid (key blocks, batch, heads)
  kDotDoO,     // flash_bwd_dot_do_o_kernel: rowsum(dO * O), grid (query blocks, batch, heads)
  kConvertDq,  // flash_bwd_convert_dq_kernel: fp32 dQ accumulator to dQ
  // flash_fwd_splitkv_kernel: the forward with the keys split across blocks (chosen when the
  // query blocks alone would not fill the GPU); grid (query blocks, splits, batch x heads), or
  // (query blocks, batch, heads) when it is not split.
  kForwardSplitKv,
  // flash_fwd_splitkv_combine_kernel<traits, kBlockM, log2 max splits, ...>: the splits'
  // partial outputs and row sums (fp32) merged; grid (ceil(batch x heads x queries / kBlockM)).
  kSplitKvCombine,
};

struct ScalarType {
  std::string name;  // as demangled: float, c10::BFloat16, long, bool, ...
  int bytes = 0;
};

struct TorchKernel {
  TorchFamily family = TorchFamily::kUnknown;
  std::string functor;  // elementwise: the functor's text; reduce: the ops type's text;
                        // elementwise_kernel_with_index: its lambda; cub's scan: its op
  wire::WorkKind row_kind = wire::WorkKind::kNone;  // row-wise: kNorm or kSoftmax
  int operands = 0;  // elementwise: K of std::array<char*, K> (output first), 0 if unknown
  // unrolled_elementwise_kernel with trivial offset calculators and no casting loads: every
  // operand is dense from its base address.
  bool unrolled_trivial = false;
  // Likewise dense, but loading and storing through LoadWithCast / StoreWithCast: the element
  // types are in the loader's and storer's arguments (c10::ScalarType codes), not the name.
  bool unrolled_cast = false;
  int out_bytes = 0;              // element size of the output
  int in_bytes = 0;               // element size of each input
  std::string out_type, in_type;  // their names where the name says (elementwise functors)
  bool out_type_known = false;    // out_type is named (else out_bytes is the input's size)
  // Reductions: the element type read, the accumulator (ident) type, the one written, and the
  // operation ("sum", "prod", "max", "min", "or", "and", "mean", ... or "" when not known).
  ScalarType scalar, accumulator, out_scalar;
  std::string reduce_op;
  int ops_bytes = 0;  // sizeof of the ops object, which precedes ident in ReduceOp; 0 if unknown
  // A reduction writing two outputs (ReduceOp's noutputs 2): the second's element size, the
  // int64 index of max / min(dim), or the maximum of aminmax.
  int second_output_bytes = 8;
  // Concatenation: bytes per element (OpaqueType<bytes>), index width and tensor rank.
  int cat_element_bytes = 0;
  int cat_index_bytes = 0;
  int cat_dims = 0;
  int cat_batch = 0;            // inputs per launch the metadata has room for
  int cat_stride_size = 0;      // size/stride records in the metadata (1: all contiguous)
  bool cat_contiguous = false;  // the _contig variants: inputs are contiguous
  // CatArrayBatchedCopy_vectorized<T, index, dims, batch, stride, alignment, elems_per_vec>:
  // moves `alignment`-byte vectors of elems_per_vec elements, and its last argument is the
  // trailing size (elements after the concatenated dimension) instead of the dimension stride.
  bool cat_vectorized = false;
  int cat_alignment = 0;
  int cat_elems_per_vec = 0;
  // kIndexed: which parameters hold (count, size, width) and their byte widths (-1: none);
  // functor is "gather", "embedding_bag", "split_copy", "chunk_cat", "gamma_beta" or
  // "embedding_grad".
  std::array<int, 3> size_args{-1, -1, -1};
  std::array<int, 3> size_arg_bytes{0, 0, 0};
  int index_bytes = 0;
  // FlashAttention kernels.
  FlashKernel flash = FlashKernel::kForward;
  int flash_head_dim = 0;
  int flash_block_m = 0, flash_block_n = 0;
  bool flash_causal = false;
  int flash_elem_bytes = 2;
  bool flash_bf16 = true;
  bool flash_split = false;    // kForwardSplitKv: the Split template flag
  int flash_combine_rows = 0;  // kSplitKvCombine: kBlockM
  int flash_max_splits = 0;    // kSplitKvCombine: 2^Log_max_splits
  // kMultiTensor: the metadata and lists the functor touches, and the array sizes of the
  // PyTorch build (set by the shim for the process: registry.cpp).
  MultiTensorKernel multi_tensor;
  MultiTensorLimits multi_tensor_limits;
  // kCounted: which parameters hold the count and what an item moves.
  CountedKernel counted;
  // kMemEfficientAttention: the pass, element type and tiles.
  MemEfficientKernel mem_efficient;
  // Row-wise kernels: which argument holds the row length (-1: none) and its width in bytes.
  int row_length_arg = -1;
  int row_length_bytes = 0;
  // torch._grouped_mm's set-up kernel (a kCounted launch of its own): its parameters describe
  // the grouped GEMM launched next (torch_grouped_mm.hpp).
  std::optional<GroupedMmSetup> grouped_mm_setup;
};

// Classifies a demangled name (abi::__cxa_demangle's output); kUnknown if not a known family.
TorchKernel classify_torch_kernel(std::string_view demangled);
// Demangles a mangled device-function name; the input itself when it is not a C++ name.
std::string demangle(const char* mangled);

// The function's qualified name in a demangled name: the text before its first template or
// parameter bracket, without a leading return type ("void ").
std::string_view base_name(std::string_view demangled);
// Whether `s` ends with `tail` (qualified names: "...::sum_and_scatter").
bool ends_with(std::string_view s, std::string_view tail);
// Width of an integer parameter type as demangled ("int", "unsigned long", ...): 4 or 8, 0 for
// anything else.
int integer_bytes(std::string_view type);
// Size of an element type as demangled (0 when not a scalar type the shim knows).
int scalar_bytes(std::string_view type);
// Top-level template arguments of `name<...>(...)`, split on depth-0 commas and trimmed.
std::vector<std::string_view> template_args(std::string_view text);
// The parameter types of the last lambda named in `text` ("{lambda(float, float)#1}"); empty
// when it names none.
std::vector<std::string_view> lambda_params(std::string_view text);
// The parameter list's types of a demangled function: "(int, float, float const*, ...)" after its
// template arguments, split and trimmed.
std::vector<std::string_view> parameter_types(std::string_view demangled);

}  // namespace phantora::shim
