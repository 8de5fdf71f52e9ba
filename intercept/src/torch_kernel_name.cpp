#include "torch_kernel_name.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace phantora::shim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool opens(char c) {
  return c == '<' || c == '(' || c == '{' || c == '[';
}
bool closes(char c) {
  return c == '>' || c == ')' || c == '}' || c == ']';
}

// Index of the bracket closing the one at `open`, or npos.
size_t matching(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    // "operator()" and "->" inside names are not brackets that nest.
    if (s.compare(i, 10, "operator()") == 0) {
      i += 9;
      continue;
    }
    if (opens(s[i])) ++depth;
    if (closes(s[i]) && --depth == 0) return i;
  }
  return std::string_view::npos;
}

std::vector<std::string_view> split_top(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 10, "operator()") == 0) {
      i += 9;
      continue;
    }
    if (opens(s[i])) ++depth;
    if (closes(s[i])) --depth;
    if (s[i] == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) out.push_back(trim(s.substr(start)));
  return out;
}

// K of "std::array<char*, 3ul>", or of "at::detail::Array<char*, 3>" (PyTorch 2.5 and earlier
// pass the operands in c10's own array type).
int array_size(std::string_view arg) {
  if (arg.find("std::array<char*") != 0 && arg.find("at::detail::Array<char*") != 0) return 0;
  const std::vector<std::string_view> a = template_args(arg);
  if (a.size() != 2) return 0;
  return std::atoi(std::string(a[1]).c_str());
}

// Every scalar type named in `text`, in order of appearance (c10::BFloat16, float, long, ...).
std::vector<ScalarType> scalar_types_in(std::string_view text) {
  std::vector<ScalarType> out;
  size_t i = 0;
  auto is_ident = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == ':';
  };
  while (i < text.size()) {
    if (!is_ident(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_ident(text[j])) ++j;
    std::string_view word = text.substr(i, j - i);
    // Two-word types.
    for (std::string_view two : {"unsigned char", "signed char", "unsigned int", "unsigned long",
                                 "long long", "unsigned short"}) {
      if (text.substr(i, two.size()) == two &&
          (i + two.size() == text.size() || !is_ident(text[i + two.size()]))) {
        word = text.substr(i, two.size());
        j = i + two.size();
        break;
      }
    }
    if (const int b = scalar_bytes(word); b > 0) out.push_back({std::string(word), b});
    i = j;
  }
  return out;
}

}  // namespace

// Parameter types of the last "{lambda(T1, T2)#n}" in `text` (a functor defined as a lambda).
std::vector<std::string_view> lambda_params(std::string_view text) {
  const size_t at = text.rfind("{lambda(");
  if (at == std::string_view::npos) return {};
  const size_t open = at + 7;
  const size_t close = matching(text, open);
  if (close == std::string_view::npos) return {};
  return split_top(text.substr(open + 1, close - open - 1));
}

namespace {

// Element sizes of an elementwise functor's operands. A lambda functor names its input types
// in its parameter list; functor structs (BinaryFunctor<a, b, out, op>, FillFunctor<T>, ...)
// name them as template arguments. A converting copy reads one type and writes the other.
void element_sizes(std::string_view functor, TorchKernel& k) {
  const std::vector<ScalarType> types = scalar_types_in(functor);
  const std::vector<std::string_view> params = lambda_params(functor);
  if (!params.empty()) {
    k.in_type = std::string(params.front());
    k.out_type = k.in_type;
    // A converting copy writes the first named type that is not the one it reads; the
    // half-precision copies name their output in the function name; a copy that names no
    // other type (direct_copy_kernel_cuda behind a casting loader, say) writes an unknown type.
    if (functor.find("copy") != std::string_view::npos) {
      k.out_type.clear();
      for (const ScalarType& t : types) {
        if (t.name != k.in_type) {
          k.out_type = t.name;
          break;
        }
      }
      if (functor.find("bfloat16_copy_kernel_cuda") != std::string_view::npos) {
        k.out_type = "c10::BFloat16";
      } else if (functor.find("float16_copy_kernel_cuda") != std::string_view::npos) {
        k.out_type = "c10::Half";
      } else if (k.out_type.empty() &&
                 functor.find("direct_copy_kernel_cuda") != std::string_view::npos) {
        k.out_type = k.in_type;  // same type, unless the launch casts (then not trivial)
      }
    }
  } else if (!types.empty()) {
    k.in_type = k.out_type = types.front().name;
    // BinaryFunctor<a, b, out, op> and the unary wrappers name the output third.
    if (functor.find("BinaryFunctor<") != std::string_view::npos ||
        functor.find("UnaryFunctor<") != std::string_view::npos) {
      const std::vector<std::string_view> a = template_args(functor);
      if (a.size() >= 3 && scalar_bytes(a[2]) > 0) k.out_type = std::string(a[2]);
    }
  }
  // Comparisons write bool whatever they compare.
  if (functor.find("CompareFunctor<") != std::string_view::npos ||
      functor.find("compare_scalar_kernel<") != std::string_view::npos) {
    k.out_type = "bool";
  }
  k.in_bytes = scalar_bytes(k.in_type);
  k.out_bytes = scalar_bytes(k.out_type);
  k.out_type_known = k.out_bytes > 0;
  if (k.out_bytes == 0) k.out_bytes = k.in_bytes;  // for the traffic estimate only
}

// Operands of an elementwise functor when the launch does not name them (kStrided).
int operand_count(std::string_view functor) {
  if (functor.find("FillFunctor<") != std::string_view::npos) return 1;
  if (functor.find("BinaryFunctor<") != std::string_view::npos) return 3;
  // BinaryOps' add functors: (self, other), or one tensor with the other a CPU scalar.
  if (functor.find("CUDAFunctor_add<") != std::string_view::npos) return 3;
  if (functor.find("CUDAFunctorOnSelf_add<") != std::string_view::npos ||
      functor.find("CUDAFunctorOnOther_add<") != std::string_view::npos) {
    return 2;
  }
  if (functor.find("UnaryFunctor<") != std::string_view::npos) return 2;
  // CompareKernels.cu: two tensors compared (a CPU scalar operand is wrapped in a unary functor
  // instead), a bool written.
  if (functor.find("CompareFunctor<") != std::string_view::npos) return 3;
  const std::vector<std::string_view> params = lambda_params(functor);
  if (!params.empty()) return static_cast<int>(params.size()) + 1;
  return 0;
}

std::string reduce_op_of(std::string_view ops) {
  struct Op {
    std::string_view marker, name;
  };
  for (const Op& o :
       {Op{"sum_functor", "sum"}, Op{"prod_functor", "prod"}, Op{"MaxOps<", "max"},
        Op{"MinOps<", "min"}, Op{"MaxNanFunctor<", "max"}, Op{"MinNanFunctor<", "min"},
        Op{"max_values_kernel", "max"}, Op{"min_values_kernel", "min"}, Op{"or_kernel_cuda", "or"},
        Op{"and_kernel_cuda", "and"}, Op{"MeanOps<", "mean"}}) {
    if (ops.find(o.marker) != std::string_view::npos) return std::string(o.name);
  }
  return "";
}

// Size of the ops object a ReduceOp starts with. Captureless functor wrappers and the stateless
// Max/Min ops are empty (size 1); MeanOps holds its factor (its third template argument).
int ops_size(std::string_view ops) {
  if (ops.find("at::native::func_wrapper_t<") == 0) {
    // A lambda with captures would not be empty; PyTorch's reduction lambdas capture nothing
    // (they are written as [] or [=] with nothing used from the scope).
    return 1;
  }
  // SharedReduceOps.h's stateless ops structs: empty, so one byte.
  for (const std::string_view empty :
       {"at::native::MaxOps<", "at::native::MinOps<", "at::native::NormTwoOps<",
        "at::native::NormOneOps<", "at::native::NormZeroOps<", "at::native::AbsMaxOps<",
        "at::native::AbsMinOps<", "at::native::NanSumOps<", "at::native::ArgMaxOps<",
        "at::native::ArgMinOps<", "at::native::MinMaxOps<"}) {
    if (ops.find(empty) == 0) return 1;
  }
  if (ops.find("at::native::NormOps<") == 0) {
    // NormOps<scalar_t, acc_t = scalar_t, ...> holds the order p as acc_t norm_.
    const std::vector<std::string_view> a = template_args(ops);
    if (!a.empty()) return scalar_bytes(a.size() >= 2 ? a[1] : a[0]);
  }
  if (ops.find("at::native::MeanOps<") == 0) {
    const std::vector<std::string_view> a = template_args(ops);
    if (a.size() >= 3) return scalar_bytes(a[2]);
  }
  return 0;
}

void classify_reduce(std::string_view d, TorchKernel& k) {
  const std::vector<std::string_view> targs = template_args(d);
  if (targs.size() < 3 || targs[2].find("at::native::ReduceOp<") != 0) return;
  const std::vector<std::string_view> r = template_args(targs[2]);
  // ReduceOp<scalar_t, ops_t, index_t, out_scalar_t, vt0, input_vec_size>
  if (r.size() < 4) return;
  k.scalar = {std::string(r[0]), scalar_bytes(r[0])};
  k.out_scalar = {std::string(r[3]), scalar_bytes(r[3])};
  k.functor = std::string(r[1]);
  k.reduce_op = reduce_op_of(r[1]);
  k.ops_bytes = ops_size(r[1]);
  // The accumulator (ReduceOp's arg_t, the type of ident): the combining lambda's parameter
  // for func_wrapper_t<scalar, F> (a bf16 sum accumulates in float: {lambda(float, float)}),
  // MeanOps<scalar, acc, factor, out>'s second argument, and for the ops that track an index
  // (MaxOps / MinOps / ArgMaxOps / ArgMinOps, SharedReduceOps.h) a pair<T, int64>: 16 bytes,
  // 8-aligned, named so that it is never computed with.
  const std::vector<std::string_view> o = template_args(r[1]);
  if (!o.empty()) {
    std::string_view acc = o[0];
    if (r[1].find("at::native::MeanOps<") == 0 && o.size() >= 2) acc = o[1];
    if (r[1].find("at::native::func_wrapper_t<") == 0) {
      const std::vector<std::string_view> params = lambda_params(r[1]);
      if (!params.empty() && scalar_bytes(params[0]) > 0) acc = params[0];
    }
    k.accumulator = {std::string(acc), scalar_bytes(acc)};
    for (std::string_view indexed : {"at::native::MaxOps<", "at::native::MinOps<",
                                     "at::native::ArgMaxOps<", "at::native::ArgMinOps<"}) {
      if (r[1].find(indexed) == 0) k.accumulator = {"at::native::pair<value, long>", 16};
    }
    // aminmax (MinMaxOps<scalar, acc, index>, ReduceMinMaxKernel.cu): a pair of accumulators,
    // the minimum and the maximum, written as two outputs of the output type.
    if (r[1].find("at::native::MinMaxOps<") == 0 && o.size() >= 2) {
      k.accumulator = {"at::native::pair<min, max>", 2 * scalar_bytes(o[1])};
      k.second_output_bytes = k.out_scalar.bytes;
    }
  }
  if (k.scalar.bytes == 0 || k.out_scalar.bytes == 0) return;
  k.family = TorchFamily::kReduce;
}

void classify_cat(std::string_view base, std::string_view d, TorchKernel& k) {
  // The _vectorized variant writes through a char* with offsets of its own: its element counts
  // price it, but it is not computed.
  k.cat_vectorized = ends_with(base, "CatArrayBatchedCopy_vectorized");
  if (!ends_with(base, "CatArrayBatchedCopy") && !ends_with(base, "_contig") && !k.cat_vectorized)
    return;
  const std::vector<std::string_view> targs = template_args(d);
  // CatArrayBatchedCopy*<OpaqueType<bytes>, index_t, dims, batch, stride[, alignment]>
  if (targs.size() < 5) return;
  const std::vector<std::string_view> opaque = template_args(targs[0]);
  if (targs[0].find("OpaqueType<") == std::string_view::npos || opaque.size() != 1) return;
  k.cat_element_bytes = std::atoi(std::string(opaque[0]).c_str());
  k.cat_index_bytes = scalar_bytes(targs[1]);
  k.cat_dims = std::atoi(std::string(targs[2]).c_str());
  k.cat_batch = std::atoi(std::string(targs[3]).c_str());
  k.cat_stride_size = std::atoi(std::string(targs[4]).c_str());
  k.cat_contiguous = base.find("_contig") != std::string_view::npos;
  if (k.cat_vectorized) {
    if (targs.size() < 7) return;
    k.cat_alignment = std::atoi(std::string(targs[5]).c_str());
    k.cat_elems_per_vec = std::atoi(std::string(targs[6]).c_str());
    if (k.cat_alignment <= 0 || k.cat_elems_per_vec <= 0 ||
        k.cat_alignment != k.cat_elems_per_vec * std::atoi(std::string(opaque[0]).c_str()))
      return;
  }
  if (k.cat_element_bytes <= 0 || k.cat_index_bytes != 4 || k.cat_dims <= 0 || k.cat_dims > 4 ||
      k.cat_batch <= 0 || k.cat_stride_size <= 0) {
    return;
  }
  k.family = TorchFamily::kCat;
}

// Kernels whose sizes are plain integer parameters (IndexKernelUtils.cu, EmbeddingBag.cu):
//   vectorized_gather_kernel<align, index_t>(char* out, char* in, index_t* idx, int num_ind,
//       int64_t slice_size /* bytes */, ...)                       -- index_select, gather
//   EmbeddingBag_updateOutputKernel_{sum_mean,max}<T, index_t>(input, offsets, weight, output,
//       offset2bag, numIndices, numBags, featureSize, ...)
// FSDP2's copy-in and copy-out (c10d's fsdp kernels, built into ATen as at::native::detail):
//   split_with_sizes_copy_out_contiguous_no_cast_kernel(char** dst, char** src, int64* sizes,
//       int64* block_to_split, int64* block_cumsums, int64 src_stride, int64 num_chunks)
//       -- num_chunks rows of src_stride bytes, each split into its parameters
//   chunk_cat_cuda_kernel<dst_t, src_t>(src_t** src, dst_t* dst, int64* x6, int64 slice_size,
//       int64 chunk_size, int64 dst_to_src_ratio)  -- grid z slices of slice_size bytes written
void classify_indexed(std::string_view base, std::string_view d, TorchKernel& k) {
  const std::vector<std::string_view> params = parameter_types(d);
  const std::vector<std::string_view> targs = template_args(d);
  auto width = [&](size_t i) { return i < params.size() ? scalar_bytes(params[i]) : 0; };
  std::string_view functor;
  if (ends_with(base, "vectorized_gather_kernel") && targs.size() >= 2) {
    k.index_bytes = scalar_bytes(targs[1]);
    k.size_args = {3, 4, -1};
    functor = "gather";
  } else if (ends_with(base, "::split_with_sizes_copy_out_contiguous_no_cast_kernel")) {
    k.size_args = {5, 6, -1};
    functor = "split_copy";
  } else if (base.find("GammaBetaBackward") != std::string_view::npos && targs.size() >= 2 &&
             params.size() == 8) {
    // layer_norm_kernel.cu's weight and bias gradients: (int64 M, int64 N, T* dY, T* X,
    // T_ACC* mean, T_ACC* rstd, T* dgamma, T* dbeta) for M rows of N.
    k.in_bytes = k.out_bytes = scalar_bytes(targs[0]);
    k.accumulator.bytes = scalar_bytes(targs[1]);
    if (k.in_bytes == 0 || k.accumulator.bytes == 0) return;
    k.size_args = {0, 1, -1};
    functor = "gamma_beta";
  } else if (ends_with(base, "::compute_grad_weight") && targs.size() == 2 && params.size() == 9) {
    // Embedding backward's per-segment sums (EmbeddingBackwardKernel.cu): (index* indices,
    // T* grad_output, index* count, int64 numel, int64 stride, ...).
    k.in_bytes = scalar_bytes(targs[0]);
    k.index_bytes = scalar_bytes(targs[1]);
    if (k.in_bytes == 0 || k.index_bytes == 0) return;
    k.size_args = {3, 4, -1};
    functor = "embedding_grad";
  } else if (ends_with(base, "::chunk_cat_cuda_kernel") && targs.size() == 2) {
    k.out_bytes = scalar_bytes(targs[0]);
    k.in_bytes = scalar_bytes(targs[1]);
    if (k.out_bytes == 0 || k.in_bytes == 0) return;
    k.size_args = {8, 9, 10};
    functor = "chunk_cat";
  } else if ((ends_with(base, "EmbeddingBag_updateOutputKernel_sum_mean") ||
              ends_with(base, "EmbeddingBag_updateOutputKernel_max")) &&
             targs.size() >= 2) {
    k.in_bytes = k.out_bytes = scalar_bytes(targs[0]);
    k.index_bytes = scalar_bytes(targs[1]);
    k.size_args = {5, 6, 7};
    functor = "embedding_bag";
  } else {
    return;
  }
  for (int i = 0; i < 3; ++i) {
    if (k.size_args[i] < 0) continue;
    k.size_arg_bytes[i] = width(static_cast<size_t>(k.size_args[i]));
    if (k.size_arg_bytes[i] != 4 && k.size_arg_bytes[i] != 8) return;
  }
  if ((functor == "gather" || functor == "embedding_bag") && k.index_bytes == 0) return;
  k.functor = std::string(functor);
  k.family = TorchFamily::kIndexed;
}

// Row-wise kernels: one block per row; the row length is one argument, the element types
// the kernel's first template arguments.
void classify_rowwise(std::string_view base, std::string_view d, TorchKernel& k) {
  struct Row {
    std::string_view name;
    int length_arg;
    int streams;  // row-sized tensors read or written
    wire::WorkKind kind;
  };
  static constexpr Row kRows[] = {
      {"vectorized_layer_norm_kernel", 0, 2, wire::WorkKind::kNorm},
      {"layer_norm_grad_input_kernel_vectorized", 6, 3, wire::WorkKind::kNorm},
      {"layer_norm_grad_input_kernel", 6, 3, wire::WorkKind::kNorm},
      {"cunn_SoftMaxForward", 2, 2, wire::WorkKind::kSoftmax},
      {"cunn_SoftMaxForwardSmem", 2, 2, wire::WorkKind::kSoftmax},
      // (output, input, classes): rows short enough for registers, as log_softmax of a small
      // vocabulary's logits
      {"cunn_SoftMaxForwardReg", 2, 2, wire::WorkKind::kSoftmax},
      {"cunn_SoftMaxBackward", 3, 3, wire::WorkKind::kSoftmax},
      {"cunn_SoftMaxBackwardSmem", 3, 3, wire::WorkKind::kSoftmax},
  };
  for (const Row& r : kRows) {
    if (!ends_with(base, r.name)) continue;
    const std::vector<ScalarType> types = scalar_types_in(d.substr(0, d.find('(')));
    if (types.empty()) return;
    const std::vector<std::string_view> params = parameter_types(d);
    if (r.length_arg >= static_cast<int>(params.size())) return;
    k.row_length_bytes = scalar_bytes(params[r.length_arg]);
    if (k.row_length_bytes != 4 && k.row_length_bytes != 8) return;
    k.in_bytes = k.out_bytes = types.front().bytes;
    k.operands = r.streams;
    k.row_length_arg = r.length_arg;
    k.row_kind = r.kind;
    k.family = TorchFamily::kRowwise;
    return;
  }
}

// pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<hdim, kBlockM, kBlockN, warps, ...,
// elem, ...>, Is_dropout, Is_causal, ...> and the backward kernels, whose traits start
// <hdim, kBlockM, kBlockN, ...> too (flash_fwd_kernel.h, flash_bwd_launch_template.h).
void classify_flash(std::string_view base, std::string_view d, TorchKernel& k) {
  struct Kind {
    std::string_view name;
    FlashKernel kind;
    int causal_arg;  // the template argument holding the causal flag (-1: none)
  };
  static constexpr Kind kKinds[] = {
      // <traits, Is_dropout, Is_causal, ...>
      {"pytorch_flash::flash_fwd_kernel", FlashKernel::kForward, 2},
      {"pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", FlashKernel::kBackward, 2},
      {"pytorch_flash::flash_bwd_dq_dk_dv_loop_kernel", FlashKernel::kBackward, 2},
      {"pytorch_flash::flash_bwd_dot_do_o_kernel", FlashKernel::kDotDoO, -1},
      {"pytorch_flash::flash_bwd_convert_dq_kernel", FlashKernel::kConvertDq, -1},
      // <traits, Is_causal, Is_local, Has_alibi, Is_even_MN, Is_even_K, Is_softcap, Split, ...>
      {"pytorch_flash::flash_fwd_splitkv_kernel", FlashKernel::kForwardSplitKv, 1},
      // <traits, kBlockM, Log_max_splits, Is_even_K>
      {"pytorch_flash::flash_fwd_splitkv_combine_kernel", FlashKernel::kSplitKvCombine, -1},
  };
  for (const Kind& kind : kKinds) {
    if (base != kind.name) continue;
    const std::vector<std::string_view> targs = template_args(d);
    // The traits are the first template argument that names *_kernel_traits.
    std::string_view traits;
    for (std::string_view a : targs) {
      if (a.find("_kernel_traits<") != std::string_view::npos) {
        traits = a;
        break;
      }
    }
    const std::vector<std::string_view> t = template_args(traits);
    if (t.size() < 3) return;
    k.flash_head_dim = std::atoi(std::string(t[0]).c_str());
    k.flash_block_m = std::atoi(std::string(t[1]).c_str());
    k.flash_block_n = std::atoi(std::string(t[2]).c_str());
    if (k.flash_head_dim <= 0 || k.flash_block_m <= 0 || k.flash_block_n <= 0) return;
    k.flash_bf16 = traits.find("bfloat16") != std::string_view::npos;
    if (kind.causal_arg >= 0) {
      if (targs.size() <= static_cast<size_t>(kind.causal_arg)) return;
      k.flash_causal = targs[kind.causal_arg] == "true";
    }
    if (kind.kind == FlashKernel::kForwardSplitKv) {
      if (targs.size() < 8) return;
      k.flash_split = targs[7] == "true";
    }
    if (kind.kind == FlashKernel::kSplitKvCombine) {
      if (targs.size() < 3) return;
      k.flash_combine_rows = std::atoi(std::string(targs[1]).c_str());
      const int log_splits = std::atoi(std::string(targs[2]).c_str());
      if (k.flash_combine_rows <= 0 || log_splits < 0 || log_splits > 10) return;
      k.flash_max_splits = 1 << log_splits;
    }
    k.flash = kind.kind;
    k.family = TorchFamily::kFlashAttention;
    return;
  }
}

}  // namespace

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

std::string_view base_name(std::string_view d) {
  if (d.substr(0, 5) == "void ") d.remove_prefix(5);
  const size_t cut = d.find_first_of("<(");
  return d.substr(0, cut);
}

int integer_bytes(std::string_view t) {
  for (std::string_view i : {"int", "unsigned int"}) {
    if (t == i) return 4;
  }
  for (std::string_view l : {"long", "unsigned long", "long long", "unsigned long long"}) {
    if (t == l) return 8;
  }
  return 0;
}

int scalar_bytes(std::string_view t) {
  t = trim(t);
  if (t.substr(0, 7) == "c10::Fl" && t.find("Float8_") != std::string_view::npos) return 1;
  struct Size {
    std::string_view name;
    int bytes;
  };
  static constexpr Size kSizes[] = {
      {"bool", 1},
      {"unsigned char", 1},
      {"signed char", 1},
      {"char", 1},
      {"short", 2},
      {"unsigned short", 2},
      {"int", 4},
      {"unsigned int", 4},
      {"long", 8},
      {"unsigned long", 8},
      {"long long", 8},
      {"unsigned long long", 8},
      {"float", 4},
      {"double", 8},
      {"c10::Half", 2},
      {"c10::BFloat16", 2},
      {"__half", 2},
      {"__nv_bfloat16", 2},
      {"c10::complex<float>", 8},
      {"c10::complex<double>", 16},
      {"c10::complex<c10::Half>", 4},
  };
  for (const Size& s : kSizes) {
    if (t == s.name) return s.bytes;
  }
  return 0;
}

namespace {

// The first '(' of `d` from `from` that opens a parameter list: "(anonymous namespace)" is a
// scope. npos when there is none.
size_t parameters_open(std::string_view d, size_t from) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  size_t paren = d.find('(', from);
  while (paren != std::string_view::npos && d.compare(paren, kAnonymous.size(), kAnonymous) == 0) {
    paren = d.find('(', paren + kAnonymous.size());
  }
  return paren;
}

// Where a name's template argument list opens: its first '<', unless the parameter list opened
// before it (a non-template function whose parameters are templates, such as
// "f(long*, at::cuda::detail::IntDivider<unsigned int>)"). npos when there is none.
size_t template_open(std::string_view d) {
  const size_t angle = d.find('<');
  return parameters_open(d, 0) < angle ? std::string_view::npos : angle;
}

}  // namespace

std::vector<std::string_view> parameter_types(std::string_view d) {
  const size_t targs_open = template_open(d);
  const size_t targs_close = targs_open == std::string_view::npos ? 0 : matching(d, targs_open);
  if (targs_close == std::string_view::npos) return {};
  const size_t open = parameters_open(d, targs_close);
  const size_t close = open == std::string_view::npos ? open : matching(d, open);
  if (close == std::string_view::npos) return {};
  return split_top(d.substr(open + 1, close - open - 1));
}

std::vector<std::string_view> template_args(std::string_view text) {
  const size_t open = template_open(text);
  if (open == std::string_view::npos) return {};
  const size_t close = matching(text, open);
  if (close == std::string_view::npos) return {};
  return split_top(text.substr(open + 1, close - open - 1));
}

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(mangled);
}

namespace {

// elementwise_kernel_with_index<index_t, func_t>(index_t N, func_t f, result_type* out)
// (RangeFactories.cu): the lambda as the functor. The output type is the lambda's result,
// which the name does not spell; for arange it is the dispatch case the lambda was
// instantiated in: AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16, ...) numbers
// its cases' lambdas in the order of ATen/Dispatch.h (the integral types, the floating types,
// then the two added ones), so `arange_cuda_out(...)::{lambda()#1}::operator()() const::
// {lambda()#4}` is the int64 case: so named by torch 2.15 and 2.8 for arange of each of the nine
// dtypes (tests/intercept-unit/torch_kernels_test.cpp, ArangeOutputTypeFromItsDispatchCase).
void classify_with_index(std::string_view d, TorchKernel& k) {
  const std::vector<std::string_view> t = template_args(d);
  if (t.size() != 2) return;  // fill_reverse_indices_kernel, the other index fill, has none
  k.functor = std::string(t[1]);
  if (t[1].find("arange_cuda_out(") == std::string_view::npos) return;
  static constexpr std::string_view kCases[] = {"unsigned char", "signed char", "int",
                                                "long",          "short",       "double",
                                                "float",         "c10::Half",   "c10::BFloat16"};
  constexpr std::string_view kLambda = "::{lambda()#";
  const size_t first = t[1].find(kLambda);
  const size_t second = first == std::string_view::npos ? first : t[1].find(kLambda, first + 1);
  if (second == std::string_view::npos) return;
  size_t at = second + kLambda.size(), index = 0;
  while (at < t[1].size() && t[1][at] >= '0' && t[1][at] <= '9') {
    index = index * 10 + static_cast<size_t>(t[1][at++] - '0');
  }
  if (at >= t[1].size() || t[1][at] != '}' || index < 1 || index > std::size(kCases)) return;
  k.out_type = std::string(kCases[index - 1]);
  k.out_bytes = scalar_bytes(k.out_type);
  k.out_type_known = k.out_bytes > 0;
}

// cub's DeviceScanKernel(in, out, tile state, start tile, scan op, init value, num_items):
// the element types of in and out, and the scan operation as the functor ("std::plus<long>";
// an inclusive scan when the init value is cub's NullType), for small_kernels.cpp.
void classify_scan_types(std::string_view d, TorchKernel& k) {
  const std::vector<std::string_view> p = parameter_types(d);
  if (p.size() != 7 || p[5].find("NullType") == std::string_view::npos) return;
  constexpr std::string_view kConst = " const*";
  std::string_view in = p[0], out = p[1];
  if (in.size() <= kConst.size() || in.substr(in.size() - kConst.size()) != kConst) return;
  if (out.empty() || out.back() != '*') return;
  k.in_type = std::string(in.substr(0, in.size() - kConst.size()));
  k.out_type = std::string(out.substr(0, out.size() - 1));
  k.functor = std::string(p[4]);
  k.out_bytes = scalar_bytes(k.out_type);
  k.out_type_known = k.out_bytes > 0 && scalar_bytes(k.in_type) > 0;
}

}  // namespace

TorchKernel classify_torch_kernel(std::string_view demangled) {
  // "(anonymous namespace)::" would read as a parameter list; the families are known without it.
  std::string text(demangled);
  for (size_t at; (at = text.find("(anonymous namespace)::")) != std::string::npos;) {
    text.erase(at, 23);
  }
  const std::string_view d = text;
  TorchKernel k;
  const std::string_view base = base_name(d);
  if (base == "at::native::vectorized_elementwise_kernel" ||
      base == "at::native::unrolled_elementwise_kernel") {
    const bool vectorized = base == "at::native::vectorized_elementwise_kernel";
    const std::vector<std::string_view> targs = template_args(d);
    const size_t f = vectorized ? 1 : 0;
    if (targs.size() < f + 2) return k;
    k.functor = std::string(targs[f]);
    k.operands = array_size(targs[f + 1]);
    if (k.operands == 0) return k;
    element_sizes(k.functor, k);
    k.family = vectorized ? TorchFamily::kVectorized : TorchFamily::kUnrolled;
    if (!vectorized) {
      // <F, array, [vt,] input calc, output calc, loader, storer>: positions vary by version.
      int trivial = 0;
      bool plain_load = false, plain_store = false, cast_load = false, cast_store = false;
      for (size_t i = f + 2; i < targs.size(); ++i) {
        trivial += targs[i].find("TrivialOffsetCalculator<") != std::string_view::npos;
        plain_load |= targs[i].find("LoadWithoutCast") != std::string_view::npos;
        plain_store |= targs[i].find("StoreWithoutCast") != std::string_view::npos;
        cast_load |= targs[i].find("LoadWithCast<") != std::string_view::npos;
        cast_store |= targs[i].find("StoreWithCast<") != std::string_view::npos;
      }
      k.unrolled_trivial = trivial == 2 && plain_load && plain_store;
      k.unrolled_cast = trivial == 2 && cast_load && cast_store;
      if (k.unrolled_cast) k.out_type_known = true;  // the storer says
    }
  } else if (base == "at::native::elementwise_kernel") {
    const std::vector<std::string_view> targs = template_args(d);
    if (targs.size() < 3) return k;
    // gpu_kernel_impl_nocast<F>(...)::{lambda(int)#1} or gpu_kernel_impl<F>(...)::{...}
    const std::vector<std::string_view> inner = template_args(targs[2]);
    k.functor = std::string(inner.empty() ? targs[2] : inner.front());
    k.operands = operand_count(k.functor);
    element_sizes(k.functor, k);
    k.family = TorchFamily::kStrided;
  } else if (base == "at::native::reduce_kernel") {
    classify_reduce(d, k);
  } else if (base.find("CatArrayBatchedCopy") != std::string_view::npos) {
    classify_cat(base, d, k);
  } else if (base == "at::native::multi_tensor_apply_kernel") {
    const std::vector<std::string_view> targs = template_args(d);
    const auto mt = targs.size() >= 2 ? classify_multi_tensor(targs[0], targs[1]) : std::nullopt;
    if (mt) {
      k.multi_tensor = *mt;
      k.family = TorchFamily::kMultiTensor;
    }
  } else if (base.substr(0, 15) == "pytorch_flash::") {
    classify_flash(base, d, k);
  } else if (auto m = classify_mem_efficient(base, d)) {
    k.mem_efficient = *m;
    k.family = TorchFamily::kMemEfficientAttention;
  } else {
    classify_rowwise(base, d, k);
    if (k.family == TorchFamily::kUnknown) classify_indexed(base, d, k);
    if (k.family == TorchFamily::kUnknown) {
      if (auto c = classify_counted(base, d)) {
        k.counted = *c;
        k.family = TorchFamily::kCounted;
        if (c->kind == CountedKind::kIndexFill) classify_with_index(d, k);
        if (c->kind == CountedKind::kScan) classify_scan_types(d, k);
      }
    }
  }
  k.grouped_mm_setup = classify_grouped_mm_setup(base, d);
  return k;
}

}  // namespace phantora::shim
