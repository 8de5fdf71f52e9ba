#include "small_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

#include "phantora/float_formats.hpp"
#include "shadow.hpp"

namespace phantora::shim {
namespace {

// ---- element values -------------------------------------------------------------------------

enum class Elem : uint8_t { kUnknown, kBool, kU8, kI8, kI16, kI32, kI64, kF16, kBF16, kF32, kF64 };

Elem elem_of(std::string_view t) {
  struct Name {
    std::string_view name;
    Elem elem;
  };
  static constexpr Name kNames[] = {
      {"bool", Elem::kBool},      {"unsigned char", Elem::kU8},
      {"signed char", Elem::kI8}, {"char", Elem::kI8},
      {"short", Elem::kI16},      {"int", Elem::kI32},
      {"long", Elem::kI64},       {"long long", Elem::kI64},
      {"c10::Half", Elem::kF16},  {"c10::BFloat16", Elem::kBF16},
      {"float", Elem::kF32},      {"double", Elem::kF64},
  };
  for (const Name& n : kNames) {
    if (t == n.name) return n.elem;
  }
  return Elem::kUnknown;
}

// PyTorch's opmath_type: half precision computes (and keeps functor scalars) in float.
Elem opmath(Elem e) {
  return e == Elem::kF16 || e == Elem::kBF16 ? Elem::kF32 : e;
}

bool is_float(Elem e) {
  return e == Elem::kF16 || e == Elem::kBF16 || e == Elem::kF32 || e == Elem::kF64;
}

// One element: integers exactly, floating point as double.
struct Value {
  bool floating = false;
  int64_t i = 0;
  double f = 0;
  double as_double() const { return floating ? f : static_cast<double>(i); }
  int64_t as_int() const { return floating ? static_cast<int64_t>(f) : i; }
};

int elem_bytes(Elem e) {
  switch (e) {
    case Elem::kBool:
    case Elem::kU8:
    case Elem::kI8:
      return 1;
    case Elem::kI16:
    case Elem::kF16:
    case Elem::kBF16:
      return 2;
    case Elem::kI32:
    case Elem::kF32:
      return 4;
    case Elem::kI64:
    case Elem::kF64:
      return 8;
    case Elem::kUnknown:
      break;
  }
  return 0;
}

template <typename T>
T raw(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

Value load(Elem e, const uint8_t* p) {
  Value v;
  v.floating = is_float(e);
  switch (e) {
    case Elem::kBool:
      v.i = raw<uint8_t>(p) != 0;
      break;
    case Elem::kU8:
      v.i = raw<uint8_t>(p);
      break;
    case Elem::kI8:
      v.i = raw<int8_t>(p);
      break;
    case Elem::kI16:
      v.i = raw<int16_t>(p);
      break;
    case Elem::kI32:
      v.i = raw<int32_t>(p);
      break;
    case Elem::kI64:
      v.i = raw<int64_t>(p);
      break;
    case Elem::kF16:
      v.f = half_to_float(raw<uint16_t>(p));
      break;
    case Elem::kBF16:
      v.f = bf16_to_float(raw<uint16_t>(p));
      break;
    case Elem::kF32:
      v.f = raw<float>(p);
      break;
    case Elem::kF64:
      v.f = raw<double>(p);
      break;
    case Elem::kUnknown:
      break;
  }
  return v;
}

template <typename T>
void put(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

void store(Elem e, uint8_t* p, const Value& v) {
  switch (e) {
    case Elem::kBool:
      return put<uint8_t>(p, v.floating ? v.f != 0 : v.i != 0);
    case Elem::kU8:
      return put(p, static_cast<uint8_t>(v.as_int()));
    case Elem::kI8:
      return put(p, static_cast<int8_t>(v.as_int()));
    case Elem::kI16:
      return put(p, static_cast<int16_t>(v.as_int()));
    case Elem::kI32:
      return put(p, static_cast<int32_t>(v.as_int()));
    case Elem::kI64:
      return put(p, v.as_int());
    case Elem::kF16:
      return put(p, float_to_half(static_cast<float>(v.as_double())));
    case Elem::kBF16:
      return put(p, float_to_bf16(static_cast<float>(v.as_double())));
    case Elem::kF32:
      return put(p, static_cast<float>(v.as_double()));
    case Elem::kF64:
      return put(p, v.as_double());
    case Elem::kUnknown:
      return;
  }
}

Value add(const Value& a, const Value& b, const Value& alpha) {
  Value r;
  r.floating = a.floating || b.floating || alpha.floating;
  if (r.floating) {
    r.f = a.as_double() + alpha.as_double() * b.as_double();
  } else {
    r.i = a.i + alpha.i * b.i;
  }
  return r;
}

Value mul(const Value& a, const Value& b) {
  Value r;
  r.floating = a.floating || b.floating;
  if (r.floating) {
    r.f = a.as_double() * b.as_double();
  } else {
    r.i = a.i * b.i;
  }
  return r;
}

// Bytes of [addr, addr + bytes) from the shadow store.
std::vector<uint8_t> read_range(uint64_t addr, uint64_t bytes) {
  std::vector<uint8_t> buf(bytes);
  ShadowStore::get().read(addr, buf.data(), bytes);
  return buf;
}

// Whether a launch over n elements is computed: always up to kMaxEmulatedElements, up to
// kMaxEmulatedKnownElements where an input holds stored bytes (small_kernels.hpp).
bool worth_computing(uint64_t n, const std::vector<ByteRange>& inputs) {
  if (n <= kMaxEmulatedElements) return true;
  if (n > kMaxEmulatedKnownElements) return false;
  return std::any_of(inputs.begin(), inputs.end(), [](const ByteRange& r) {
    return ShadowStore::get().stores_any(r.addr, r.bytes);
  });
}

// ---- elementwise ----------------------------------------------------------------------------

enum class Op : uint8_t { kNone, kFill, kAdd, kMul, kCopy, kCompare, kEqual };
// CompareKernels.cu's OpType, in its declaration order.
enum class Comparison : int32_t { kGE = 0, kGT = 1, kLE = 2, kLT = 3 };
// CompareEQKernel.cu's EqOpType (CompareEqFunctor<T>{EqOpType op_}: eq and ne).
enum class Equality : int32_t { kEQ = 0, kNE = 1 };

struct ElementwiseOp {
  Op op = Op::kNone;
  Elem out = Elem::kUnknown, in = Elem::kUnknown;
  Elem math = Elem::kUnknown;  // the functor's own type (alpha, the scalar operand)
  bool scalar_first = false;   // AUnaryFunctor: the scalar is the left operand
  bool scalar_second = false;  // BUnaryFunctor: the scalar is the right operand
  bool scalar_leads = false;   // the scalar is the functor's first member, alpha its second
};

Op binary_op_of(std::string_view f) {
  if (f.find("CUDAFunctor_add<") != std::string_view::npos) return Op::kAdd;
  if (f.find("MulFunctor<") != std::string_view::npos) return Op::kMul;
  if (f.find("CompareEqFunctor<") != std::string_view::npos) return Op::kEqual;
  return Op::kNone;
}

// Bytes of the wrapped functor before a unary wrapper's scalar: CUDAFunctor_add's alpha,
// CompareEqFunctor's EqOpType, nothing (an empty functor, one byte) for the others.
size_t functor_bytes(Op op, int math_bytes) {
  if (op == Op::kAdd) return static_cast<size_t>(math_bytes);
  if (op == Op::kEqual) return sizeof(Equality);
  return 1;
}

// The copy kernels' lambdas (direct_copy_kernel_cuda, converting_copy_kernel_cuda,
// bfloat16_copy_kernel_cuda, ...) return their argument converted to the output type.
bool is_copy_lambda(const TorchKernel& k) {
  const std::string_view f = k.functor;
  return f.find("copy_kernel_cuda") != std::string_view::npos && k.operands == 2 &&
         f.find("{lambda(") != std::string_view::npos;
}

ElementwiseOp elementwise_op(const TorchKernel& k) {
  ElementwiseOp e;
  const std::string_view f = k.functor;
  if (f.find("at::native::FillFunctor<") == 0 && k.operands == 1) {
    e.op = Op::kFill;
    e.out = e.math = elem_of(k.out_type);
  } else if (f.find("at::native::CUDAFunctor_add<") == 0 && k.operands == 3) {
    // ufunc-generated {opmath alpha}: self + alpha * other.
    e.op = Op::kAdd;
    e.out = e.in = elem_of(template_args(f).at(0));
    e.math = opmath(e.in);
  } else if ((f.find("at::native::CUDAFunctorOnSelf_add<") == 0 ||
              f.find("at::native::CUDAFunctorOnOther_add<") == 0) &&
             k.operands == 2) {
    // {opmath other, opmath alpha}: self + alpha * other with the tensor as self, or
    // {opmath self, opmath alpha} with the tensor as other.
    e.op = Op::kAdd;
    e.out = e.in = elem_of(template_args(f).at(0));
    e.math = opmath(e.in);
    e.scalar_second = f.find("OnSelf") != std::string_view::npos;
    e.scalar_first = !e.scalar_second;
    e.scalar_leads = true;
  } else if ((f.find("at::native::AUnaryFunctor<") == 0 ||
              f.find("at::native::BUnaryFunctor<") == 0) &&
             k.operands == 2) {
    const auto a = template_args(f);  // <arg1, arg2, return, func>
    if (a.size() != 4) return e;
    e.op = binary_op_of(a[3]);
    const auto inner = template_args(a[3]);
    if (inner.size() != 1) return {};
    e.math = elem_of(inner[0]);
    e.scalar_first = f.find("AUnary") != std::string_view::npos;
    e.scalar_second = !e.scalar_first;
    e.in = elem_of(e.scalar_first ? a[1] : a[0]);
    e.out = elem_of(a[2]);
  } else if (f.find("at::native::BinaryFunctor<") == 0 && k.operands == 3) {
    const auto a = template_args(f);
    if (a.size() != 4) return e;
    e.op = binary_op_of(a[3]);
    e.in = elem_of(a[0]);
    e.out = elem_of(a[2]);
    const auto inner = template_args(a[3]);
    e.math = inner.size() == 1 ? elem_of(inner[0]) : e.in;
    if (elem_of(a[1]) != e.in) return {};
  } else if (f.find("CompareFunctor<") != std::string_view::npos &&
             f.find("CompareFunctor<") == f.rfind("CompareFunctor<") && k.operands == 3) {
    // CompareFunctor<T>{OpType op}: bool out = a (op) b.
    const auto a = template_args(f.substr(f.find("CompareFunctor<")));
    if (a.size() != 1) return e;
    e.op = Op::kCompare;
    e.in = elem_of(a[0]);
    e.out = Elem::kBool;
  } else if (is_copy_lambda(k)) {
    // direct_copy_kernel_cuda and converting_copy_kernel_cuda: the lambda returns its argument,
    // converted to the output type.
    e.op = Op::kCopy;
    e.in = elem_of(k.in_type);
    e.out = elem_of(k.out_type);
  }
  if (e.out == Elem::kUnknown || (e.op != Op::kFill && e.in == Elem::kUnknown)) return {};
  if ((e.op == Op::kAdd || e.op == Op::kMul || e.op == Op::kFill) && e.math == Elem::kUnknown)
    return {};
  return e;
}

std::optional<SmallKernelPlan> plan_elementwise(const TorchKernel& k,
                                                const std::optional<ElementwiseArgs>& a) {
  if (!a || a->data.empty()) return std::nullopt;  // strided: operands unknown
  SmallKernelPlan plan;
  const uint64_t n = a->n;
  // Where the output's element type is not known, neither is its extent: nothing is touched.
  if (!k.out_type_known) return plan;
  ElementwiseOp e = elementwise_op(k);
  uint64_t out_bytes = static_cast<uint64_t>(k.out_bytes);
  if (!a->scalar_types.empty()) {
    // A casting launch: the element types are the loader's and storer's, and the functor
    // computes in its own parameter type.
    out_bytes = static_cast<uint64_t>(scalar_type_bytes(a->scalar_types[0]));
    e.out = elem_of(scalar_type_name(a->scalar_types[0]));
    Elem in = elem_of(scalar_type_name(a->scalar_types[1]));
    for (size_t i = 2; i < a->scalar_types.size(); ++i) {
      if (elem_of(scalar_type_name(a->scalar_types[i])) != in) in = Elem::kUnknown;
    }
    e.in = in;
    if (e.op == Op::kNone && is_copy_lambda(k)) e.op = Op::kCopy;
    if (e.in == Elem::kUnknown || e.out == Elem::kUnknown) e.op = Op::kNone;
  }
  plan.outputs.push_back({a->data[0], n * out_bytes});
  if (e.op == Op::kNone || !a->contiguous || n > kMaxEmulatedKnownElements) return plan;
  for (size_t i = 1; i < a->data.size(); ++i) {
    plan.inputs.push_back({a->data[i], n * static_cast<uint64_t>(elem_bytes(e.in))});
  }
  if (!worth_computing(n, plan.inputs)) {
    plan.inputs.clear();
    return plan;
  }
  plan.outputs[0].bytes = n * static_cast<uint64_t>(elem_bytes(e.out));
  // The functor's bytes: FillFunctor{value}; CUDAFunctor_add{alpha}; the unary wrappers
  // {func f; scalar}, the scalar after f (aligned to its own size).
  const auto* functor = static_cast<const uint8_t*>(a->functor);
  const int math_bytes = elem_bytes(e.math);
  Value alpha;
  alpha.i = 1;
  Value scalar;
  if (e.scalar_leads) {
    scalar = load(e.math, functor);
    alpha = load(e.math, functor + math_bytes);
  } else if (e.op == Op::kAdd) {
    alpha = load(e.math, functor);
  }
  if (!e.scalar_leads && (e.scalar_first || e.scalar_second)) {
    const size_t f_bytes = functor_bytes(e.op, math_bytes);
    const size_t at = (f_bytes + math_bytes - 1) / math_bytes * math_bytes;
    scalar = load(e.math, functor + at);
  }
  const Value fill = e.op == Op::kFill ? load(e.math, functor) : Value{};
  Comparison comparison{};
  if (e.op == Op::kCompare) {
    std::memcpy(&comparison, functor, sizeof(comparison));
    if (comparison < Comparison::kGE || comparison > Comparison::kLT) return plan;
  }
  Equality equality{};
  if (e.op == Op::kEqual) {
    std::memcpy(&equality, functor, sizeof(equality));
    if (equality != Equality::kEQ && equality != Equality::kNE) return plan;
  }
  const ByteRange out = plan.outputs[0];
  const std::vector<ByteRange> ins = plan.inputs;
  plan.run = [e, n, out, ins, alpha, scalar, fill, comparison, equality] {
    std::vector<std::vector<uint8_t>> in;
    for (const ByteRange& r : ins) in.push_back(read_range(r.addr, r.bytes));
    std::vector<uint8_t> result(out.bytes);
    const int ib = elem_bytes(e.in), ob = elem_bytes(e.out);
    // A binary functor's two operands at element i: the wrapper's scalar on its side.
    const auto operands = [&](uint64_t i) -> std::pair<Value, Value> {
      if (e.scalar_first) return {scalar, load(e.in, in[0].data() + i * ib)};
      if (e.scalar_second) return {load(e.in, in[0].data() + i * ib), scalar};
      return {load(e.in, in[0].data() + i * ib), load(e.in, in[1].data() + i * ib)};
    };
    for (uint64_t i = 0; i < n; ++i) {
      Value v;
      switch (e.op) {
        case Op::kFill:
          v = fill;
          break;
        case Op::kCopy:
          v = load(e.in, in[0].data() + i * ib);
          break;
        case Op::kAdd:
        case Op::kMul: {
          const auto [lhs, rhs] = operands(i);
          v = e.op == Op::kAdd ? add(lhs, rhs, alpha) : mul(lhs, rhs);
          break;
        }
        case Op::kEqual: {
          const auto [lhs, rhs] = operands(i);
          // Integers compared exactly, floating point as the kernel's T (held as double).
          const bool equal =
              lhs.floating || rhs.floating ? lhs.as_double() == rhs.as_double() : lhs.i == rhs.i;
          v.i = (equality == Equality::kEQ) == equal;
          break;
        }
        case Op::kCompare: {
          const double a = load(e.in, in[0].data() + i * ib).as_double();
          const double b = load(e.in, in[1].data() + i * ib).as_double();
          v.i = comparison == Comparison::kGE   ? a >= b
                : comparison == Comparison::kGT ? a > b
                : comparison == Comparison::kLE ? a <= b
                                                : a < b;
          break;
        }
        case Op::kNone:
          break;
      }
      store(e.out, result.data() + i * ob, v);
    }
    ShadowStore::get().write(out.addr, result.data(), result.size());
  };
  return plan;
}

// ---- reductions -----------------------------------------------------------------------------

Value combine(std::string_view op, const Value& acc, const Value& v) {
  Value r;
  r.floating = acc.floating || v.floating;
  const double a = acc.as_double(), b = v.as_double();
  if (op == "sum") return add(acc, v, Value{false, 1, 0});
  if (op == "prod") return mul(acc, v);
  if (op == "max" || op == "min") {
    const bool take_v = std::isnan(b) || (op == "max" ? b > a : b < a);
    return std::isnan(a) ? acc : (take_v ? v : acc);
  }
  r.floating = false;
  if (op == "or") r.i = (a != 0) || (b != 0);
  if (op == "and") r.i = (a != 0) && (b != 0);
  return r;
}

std::optional<SmallKernelPlan> plan_reduce(const TorchKernel& k,
                                           const std::optional<ReduceArgs>& r) {
  if (!r) return std::nullopt;
  SmallKernelPlan plan;
  const Elem in = elem_of(k.scalar.name), acc = elem_of(k.accumulator.name),
             out = elem_of(k.out_scalar.name);
  const uint64_t total = r->num_inputs * r->num_outputs;
  const bool known = !k.reduce_op.empty() && k.reduce_op != "mean" && in != Elem::kUnknown &&
                     acc != Elem::kUnknown && out != Elem::kUnknown && r->noutputs == 1 &&
                     !r->accumulate && r->final_output;
  if (!known ||
      !worth_computing(total, {{r->src, total * static_cast<uint64_t>(elem_bytes(in))}})) {
    plan.outputs.push_back({r->dst, r->num_outputs * static_cast<uint64_t>(k.out_scalar.bytes)});
    return plan;
  }
  // Where each output and each of its inputs lie, in bytes from dst and src.
  std::vector<uint64_t> out_at(r->num_outputs), in_at(total);
  uint64_t in_end = 0, out_end = 0;
  for (uint64_t o = 0; o < r->num_outputs; ++o) {
    const auto off = r->output_calc.offsets(o);
    out_at[o] = off[0];
    out_end = std::max(out_end, off[0] + elem_bytes(out));
    for (uint64_t i = 0; i < r->num_inputs; ++i) {
      const uint64_t at = off[1] + r->input_calc.offsets(i)[0];
      in_at[o * r->num_inputs + i] = at;
      in_end = std::max(in_end, at + elem_bytes(in));
    }
  }
  if (in_end > ShadowStore::kMaxWrite || out_end > ShadowStore::kMaxWrite) {
    plan.outputs.push_back({r->dst, r->num_outputs * static_cast<uint64_t>(k.out_scalar.bytes)});
    return plan;
  }
  plan.inputs.push_back({r->src, in_end});
  plan.outputs.push_back({r->dst, out_end});
  const Value ident = load(acc, r->ident.data());
  const std::string op = k.reduce_op;
  const uint64_t src = r->src, dst = r->dst, per_output = r->num_inputs;
  plan.run = [=] {
    const std::vector<uint8_t> data = read_range(src, in_end);
    std::vector<uint8_t> result = read_range(dst, out_end);
    for (size_t o = 0; o < out_at.size(); ++o) {
      Value a = ident;
      for (uint64_t i = 0; i < per_output; ++i) {
        a = combine(op, a, load(in, data.data() + in_at[o * per_output + i]));
      }
      store(out, result.data() + out_at[o], a);
    }
    ShadowStore::get().write(dst, result.data(), result.size());
  };
  return plan;
}

// ---- concatenation --------------------------------------------------------------------------

// Element offset of the `linear`-th element of a slice along `concat_dim` whose extent there is
// `dim_size`, in a tensor of the given sizes and strides (row-major index order).
uint64_t slice_offset(const std::array<uint32_t, 4>& size, const std::array<uint32_t, 4>& stride,
                      uint32_t dim_size, int concat_dim, int dims, uint64_t linear) {
  uint64_t offset = 0;
  for (int d = dims - 1; d >= 1; --d) {
    const uint64_t extent = d == concat_dim ? dim_size : size[d];
    if (extent == 0) return offset;
    offset += (linear % extent) * stride[d];
    linear /= extent;
  }
  return offset + linear * stride[0];
}

// The vectorized variant in its own units: vectors of `alignment` bytes, each input's offset and
// concatenated extent scaled by the trailing size (its last argument) over the elements per
// vector, as the kernel computes them. Its inputs are contiguous. Positions are computed for
// the one-dimensional (collapsed) case, the one PyTorch's stack and cat of contiguous tensors
// launch; other ranks leave the output unknown.
std::optional<CatArgs> in_vector_units(const TorchKernel& k, CatArgs c) {
  if (k.cat_dims != 1 || k.cat_elems_per_vec <= 0) return std::nullopt;
  const auto per_vec = static_cast<uint64_t>(k.cat_elems_per_vec);
  const uint64_t trailing = c.dim_stride;
  for (CatInput& in : c.inputs) {
    if (in.elements % per_vec != 0 || (uint64_t{in.offset} * trailing) % per_vec != 0 ||
        (uint64_t{in.dim_size} * trailing) % per_vec != 0)
      return std::nullopt;
    in.elements = static_cast<uint32_t>(in.elements / per_vec);
    in.offset = static_cast<uint32_t>(uint64_t{in.offset} * trailing / per_vec);
    in.dim_size = static_cast<uint32_t>(uint64_t{in.dim_size} * trailing / per_vec);
    in.contiguous = true;
  }
  c.dim_stride = 1;  // offsets are already in vectors
  return c;
}

// A concatenation whose result is not computed: its output, up to the largest slice end the
// arguments give (offsets in dim_stride units, elements of `eb` bytes), is unknown from here on.
SmallKernelPlan cat_output_unknown(const CatArgs& c, uint64_t eb) {
  SmallKernelPlan plan;
  uint64_t end = 0;
  for (const CatInput& in : c.inputs) {
    end = std::max(end, (uint64_t{in.offset} * c.dim_stride + in.elements) * eb);
  }
  if (end > 0) plan.outputs.push_back({c.output, end});
  return plan;
}

std::optional<SmallKernelPlan> plan_cat(const TorchKernel& k, const std::optional<CatArgs>& given) {
  if (!given) return std::nullopt;
  std::optional<CatArgs> c = given;
  uint64_t eb = static_cast<uint64_t>(k.cat_element_bytes);
  if (k.cat_vectorized) {
    c = in_vector_units(k, *given);
    if (!c) return cat_output_unknown(*given, eb);  // positions not computed
    eb = static_cast<uint64_t>(k.cat_alignment);
  }
  SmallKernelPlan plan;
  uint64_t total = 0;
  struct Move {
    uint64_t from, to;  // byte addresses
  };
  std::vector<Move> moves;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const CatInput& in : c->inputs) total += in.elements;
  const bool small = total <= kMaxEmulatedElements;
  for (const CatInput& in : c->inputs) {
    const uint64_t base = uint64_t{in.offset} * c->dim_stride;
    for (uint64_t t = 0; small && t < in.elements; ++t) {
      const uint64_t to = base + slice_offset(c->out_size, c->out_stride, in.dim_size,
                                              c->concat_dim, k.cat_dims, t);
      const uint64_t from = in.contiguous ? t
                                          : slice_offset(in.size, in.stride, in.dim_size,
                                                         c->concat_dim, k.cat_dims, t);
      moves.push_back({in.data + from * eb, c->output + to * eb});
      lo = std::min(lo, to);
      hi = std::max(hi, to + 1);
    }
    if (in.elements > 0) plan.inputs.push_back({in.data, uint64_t{in.elements} * eb});
  }
  if (!small || moves.empty()) return cat_output_unknown(*c, eb);
  plan.outputs.push_back({c->output + lo * eb, (hi - lo) * eb});
  const ByteRange out = plan.outputs.back();
  plan.run = [moves = std::move(moves), out, eb] {
    std::vector<uint8_t> result = read_range(out.addr, out.bytes);
    for (const Move& m : moves) {
      ShadowStore::get().read(m.from, result.data() + (m.to - out.addr), eb);
    }
    ShadowStore::get().write(out.addr, result.data(), result.size());
  };
  return plan;
}

}  // namespace

// ---- index fills ----------------------------------------------------------------------------

// elementwise_kernel_with_index(N, f, out): arange's lambda captures [xstart, xstep] in
// at::acc_type<T, /*is_cuda=*/true> (int64 for the integer types, float for half, bfloat16 and
// float, double for double) and writes T(xstart + xstep * i) (RangeFactories.cu,
// arange_cuda_out). Other index fills (linspace, logspace) forget their output.
std::optional<SmallKernelPlan> plan_indexed_fill(const TorchKernel& k,
                                                 const std::optional<IndexedFillArgs>& a) {
  if (!a) return std::nullopt;
  const Elem out = elem_of(k.out_type);
  if (out == Elem::kUnknown) return std::nullopt;
  SmallKernelPlan plan;
  plan.outputs.push_back({a->out, a->n * static_cast<uint64_t>(elem_bytes(out))});
  if (k.functor.find("arange_cuda_out") == std::string::npos || a->n > kMaxEmulatedElements) {
    return plan;
  }
  const Elem acc = is_float(out) ? (out == Elem::kF64 ? Elem::kF64 : Elem::kF32) : Elem::kI64;
  const auto* f = static_cast<const uint8_t*>(a->functor);
  const Value start = load(acc, f), step = load(acc, f + elem_bytes(acc));
  const ByteRange range = plan.outputs[0];
  const uint64_t n = a->n;
  plan.run = [out, acc, start, step, range, n] {
    std::vector<uint8_t> result(range.bytes);
    const int ob = elem_bytes(out);
    for (uint64_t i = 0; i < n; ++i) {
      Value v;
      if (acc == Elem::kI64) {
        v.i = start.i + step.i * static_cast<int64_t>(i);
      } else if (acc == Elem::kF32) {  // the kernel's float arithmetic, not double's
        v.floating = true;
        v.f = static_cast<float>(start.f) +
              static_cast<float>(step.f) * static_cast<float>(static_cast<int64_t>(i));
      } else {
        v.floating = true;
        v.f = start.f + step.f * static_cast<double>(i);
      }
      store(out, result.data() + i * ob, v);
    }
    ShadowStore::get().write(range.addr, result.data(), result.size());
  };
  return plan;
}

// ---- scans ------------------------------------------------------------------------------------

// cub's DeviceScanKernel with std::plus and no initial value: an inclusive prefix sum (cumsum
// of a contiguous tensor), computed when one launch covers every item (start tile 0); any other
// scan forgets its output.
std::optional<SmallKernelPlan> plan_scan(const TorchKernel& k, const std::optional<ScanArgs>& a) {
  if (!a) return std::nullopt;
  const Elem in = elem_of(k.in_type), out = elem_of(k.out_type);
  if (in == Elem::kUnknown || out == Elem::kUnknown) return std::nullopt;
  SmallKernelPlan plan;
  plan.outputs.push_back({a->out, a->n * static_cast<uint64_t>(elem_bytes(out))});
  if (k.functor.find("std::plus<") != 0 || a->start_tile != 0 || a->n > kMaxEmulatedElements) {
    return plan;
  }
  plan.inputs.push_back({a->in, a->n * static_cast<uint64_t>(elem_bytes(in))});
  const ByteRange src = plan.inputs[0], dst = plan.outputs[0];
  const uint64_t n = a->n;
  plan.run = [in, out, src, dst, n] {
    const std::vector<uint8_t> data = read_range(src.addr, src.bytes);
    std::vector<uint8_t> result(dst.bytes);
    Value sum;
    Value one;
    one.i = 1;
    one.f = 1;
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t* at = result.data() + i * elem_bytes(out);
      store(out, at, add(sum, load(in, data.data() + i * elem_bytes(in)), one));
      sum = load(out, at);  // the running sum in the output type, as the kernel carries it
    }
    ShadowStore::get().write(dst.addr, result.data(), result.size());
  };
  return plan;
}

std::optional<SmallKernelPlan> plan_small_kernel(const TorchKernel& k, const DecodedArgs& d) {
  switch (k.family) {
    case TorchFamily::kVectorized:
    case TorchFamily::kUnrolled:
      return plan_elementwise(k, d.elementwise);
    case TorchFamily::kReduce:
      return plan_reduce(k, d.reduce);
    case TorchFamily::kCat:
      return plan_cat(k, d.cat);
    case TorchFamily::kCounted:
      if (d.scan) return plan_scan(k, d.scan);
      return plan_indexed_fill(k, d.indexed_fill);
    default:
      return std::nullopt;
  }
}

std::optional<SmallKernelPlan> plan_small_kernel(const TorchKernel& k, void* const* args,
                                                 const std::array<uint32_t, 3>& grid) {
  return plan_small_kernel(k, decode_args(k, args, grid));
}

void run_small_kernel(const SmallKernelPlan& plan) {
  if (plan.run) return plan.run();
  for (const ByteRange& r : plan.outputs) ShadowStore::get().discard(r.addr, r.bytes);
}

}  // namespace phantora::shim
