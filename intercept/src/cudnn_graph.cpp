#include "cudnn_graph.hpp"

#include <cstring>
#include <utility>

namespace phantora::shim {

const CudnnAttribute* CudnnDescriptor::find(int name) const {
  const auto it = attributes.find(name);
  return it == attributes.end() ? nullptr : &it->second;
}

std::optional<int64_t> CudnnDescriptor::integer(int name) const {
  const CudnnAttribute* a = find(name);
  if (a == nullptr || a->count < 1) return std::nullopt;
  const size_t bytes = cudnn_element_bytes(a->type);
  if (a->bytes.size() < bytes) return std::nullopt;
  switch (bytes) {
    case 8: {
      int64_t v;
      std::memcpy(&v, a->bytes.data(), 8);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, a->bytes.data(), 4);
      return v;
    }
    case 1:
      return a->bytes[0];
    default:
      return std::nullopt;
  }
}

std::vector<int64_t> CudnnDescriptor::integers(int name) const {
  std::vector<int64_t> out;
  const CudnnAttribute* a = find(name);
  if (a == nullptr || a->type != CUDNN_TYPE_INT64) return out;
  out.resize(a->bytes.size() / 8);
  std::memcpy(out.data(), a->bytes.data(), out.size() * 8);
  return out;
}

const CudnnDescriptor* CudnnDescriptor::descriptor(int name, size_t i) const {
  const CudnnAttribute* a = find(name);
  if (a == nullptr || i >= a->descriptors.size()) return nullptr;
  return a->descriptors[i].get();
}

size_t cudnn_element_bytes(cudnnBackendAttributeType_t type) {
  switch (type) {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
      return 8;
    case CUDNN_TYPE_BOOLEAN:
    case CUDNN_TYPE_CHAR:
      return 1;
    case CUDNN_TYPE_FRACTION:  // int64 numerator and denominator
      return 16;
    default:  // the enums and CUDNN_TYPE_INT32
      return 4;
  }
}

namespace {

struct Tensor {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // empty when the program set none
  bool is_virtual = false;
  int64_t data_type = -1;
};

std::optional<Tensor> tensor(const CudnnDescriptor* d) {
  if (d == nullptr || d->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR) return std::nullopt;
  Tensor t;
  t.dims = d->integers(CUDNN_ATTR_TENSOR_DIMENSIONS);
  t.strides = d->integers(CUDNN_ATTR_TENSOR_STRIDES);
  t.is_virtual = d->integer(CUDNN_ATTR_TENSOR_IS_VIRTUAL).value_or(0) != 0;
  t.data_type = d->integer(CUDNN_ATTR_TENSOR_DATA_TYPE).value_or(-1);
  return t;
}

std::optional<wire::DataType> data_type(int64_t cudnn_type) {
  switch (cudnn_type) {
    case CUDNN_DATA_BFLOAT16:
      return wire::DataType::kBF16;
    case CUDNN_DATA_HALF:
      return wire::DataType::kF16;
    case CUDNN_DATA_FLOAT:
      return wire::DataType::kF32;
    case CUDNN_DATA_FP8_E4M3:
      return wire::DataType::kFP8E4M3;
    case CUDNN_DATA_FP8_E5M2:
      return wire::DataType::kFP8E5M2;
    default:
      return std::nullopt;
  }
}

std::vector<const CudnnDescriptor*> operations(const CudnnDescriptor& graph) {
  std::vector<const CudnnDescriptor*> ops;
  if (const CudnnAttribute* a = graph.find(CUDNN_ATTR_OPERATIONGRAPH_OPS)) {
    for (const auto& d : a->descriptors) ops.push_back(d.get());
  }
  return ops;
}

// The masks of a graph and of the score subgraphs of its SDPA operations: a diagonal band kept
// below the diagonal (row >= column: causal), above it, or row and column indices generated for
// a pointwise comparison (how earlier frontends build the causal mask).
struct Masks {
  bool lower = false, upper = false, generated_index = false;
};
void find_masks(const CudnnDescriptor& graph, Masks& m, int depth = 0) {
  if (depth > 4) return;
  for (const CudnnDescriptor* op : operations(graph)) {
    if (op == nullptr) continue;
    if (op->type == kCudnnDiagonalBandMaskOperation) {
      const int64_t mode = op->integer(kCudnnDiagonalBandMaskMode).value_or(-1);
      m.lower |= mode == CUDNN_POINTWISE_CMP_GE || mode == CUDNN_POINTWISE_CMP_GT;
      m.upper |= mode == CUDNN_POINTWISE_CMP_LE || mode == CUDNN_POINTWISE_CMP_LT;
    } else if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) {
      const CudnnDescriptor* pw = op->descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);
      if (pw != nullptr && pw->integer(CUDNN_ATTR_POINTWISE_MODE) == CUDNN_POINTWISE_GEN_INDEX) {
        m.generated_index = true;
      }
    } else if (op->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR) {
      if (const CudnnDescriptor* sub = op->descriptor(kCudnnSdpaFwdSubgraph)) {
        find_masks(*sub, m, depth + 1);
      }
    }
  }
}

// Q [b, hq, sq, d], K [b, hkv, sk, d] (or Kᵀ [b, hkv, d, sk] when `k_transposed`), V's head
// dim dv: the shape, or nullopt when they do not fit together.
std::optional<wire::AttentionShape> shape_of(const Tensor& q, const Tensor& k, bool k_transposed,
                                             int64_t dv) {
  if (q.dims.size() != 4 || k.dims.size() != 4) return std::nullopt;
  const int64_t b = q.dims[0], hq = q.dims[1], sq = q.dims[2], d = q.dims[3];
  const int64_t hkv = k.dims[1];
  const int64_t sk = k_transposed ? k.dims[3] : k.dims[2];
  const int64_t kd = k_transposed ? k.dims[2] : k.dims[3];
  const auto fits = [](int64_t v) { return v >= 1 && v <= int64_t{UINT32_MAX}; };
  if (!fits(b) || !fits(hq) || !fits(hkv) || !fits(sq) || !fits(sk) || !fits(d) || !fits(dv) ||
      k.dims[0] != b || kd != d || hq % hkv != 0) {
    return std::nullopt;
  }
  const std::optional<wire::DataType> type = data_type(q.data_type);
  if (!type) return std::nullopt;
  wire::AttentionShape a;
  a.batch = static_cast<uint32_t>(b);
  a.heads_q = static_cast<uint32_t>(hq);
  a.heads_kv = static_cast<uint32_t>(hkv);
  a.seq_q = static_cast<uint32_t>(sq);
  a.seq_k = static_cast<uint32_t>(sk);
  // Q·Kᵀ's FLOPs go with d, P·V's with dv: the model's 4·sq·sk·head_dim with their mean.
  a.head_dim = static_cast<uint32_t>((d + dv) / 2);
  a.dtype = *type;
  a.impl = wire::AttentionImpl::kCudnn;
  return a;
}

// A native SDPA operation (forward or backward): its Q, K and V descriptors.
std::optional<CudnnAttention> native(const CudnnDescriptor& op, bool backward) {
  const int q_name =
      backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC : CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC;
  const int k_name =
      backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC : CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC;
  const int v_name =
      backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC : CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC;
  const auto q = tensor(op.descriptor(q_name)), k = tensor(op.descriptor(k_name));
  const auto v = tensor(op.descriptor(v_name));
  if (!q || !k || !v || v->dims.size() != 4) return std::nullopt;
  const auto a = shape_of(*q, *k, false, v->dims[3]);
  if (!a) return std::nullopt;
  return CudnnAttention{*a, backward};
}

// The composite: two matrix products forward (S = Q·Kᵀ, O = P·V), five backward (S again,
// dP = dO·Vᵀ, dV = Pᵀ·dO, dQ = dS·K, dK = dSᵀ·Q). The first product of two graph inputs into a
// virtual tensor is Q·Kᵀ (or dO·Vᵀ, of the same shape); forward, the product of a virtual
// [.., sq, sk] and an input [b, hkv, sk, dv] gives V's head dim.
std::optional<CudnnAttention> composite(const std::vector<const CudnnDescriptor*>& ops) {
  std::vector<const CudnnDescriptor*> matmuls;
  for (const CudnnDescriptor* op : ops) {
    if (op != nullptr && op->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) {
      matmuls.push_back(op);
    }
  }
  if (matmuls.size() != 2 && matmuls.size() != 5) return std::nullopt;
  const bool backward = matmuls.size() == 5;
  std::optional<Tensor> q, kt;
  for (const CudnnDescriptor* m : matmuls) {
    const auto a = tensor(m->descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC));
    const auto b = tensor(m->descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC));
    const auto c = tensor(m->descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC));
    if (!a || !b || !c) return std::nullopt;
    if (!a->is_virtual && !b->is_virtual && c->is_virtual) {
      q = a, kt = b;
      break;
    }
  }
  if (!q || !kt || q->dims.size() != 4 || kt->dims.size() != 4) return std::nullopt;
  int64_t dv = q->dims[3];
  if (!backward) {
    const auto b = tensor(matmuls[1]->descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC));
    if (b && b->dims.size() == 4 && !b->is_virtual) dv = b->dims[3];
  }
  const auto a = shape_of(*q, *kt, true, dv);
  if (!a) return std::nullopt;
  return CudnnAttention{*a, backward};
}

}  // namespace

std::optional<CudnnAttention> decode_cudnn_attention(const CudnnDescriptor& graph) {
  if (graph.type != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) return std::nullopt;
  const std::vector<const CudnnDescriptor*> ops = operations(graph);
  std::optional<CudnnAttention> call;
  for (const CudnnDescriptor* op : ops) {
    if (op == nullptr) continue;
    if (op->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR) call = native(*op, false);
    if (op->type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR) call = native(*op, true);
    if (call) break;
  }
  if (!call) call = composite(ops);
  if (!call) return std::nullopt;
  Masks m;
  find_masks(graph, m);
  // A band bounded on both sides (a sliding window) is priced as causal: an upper bound.
  call->shape.causal = m.lower || m.generated_index ? 1 : 0;
  return call;
}

namespace {

// The attribute names of one convolution operation: its tensors as (input, filter, output)
// whichever of them it computes, and its convolution descriptor.
struct ConvOperation {
  int type;
  wire::ConvPass pass;
  int x, w, y, conv;
};
constexpr ConvOperation kConvOperations[] = {
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, wire::ConvPass::kForward,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, wire::ConvPass::kBackwardData,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
     wire::ConvPass::kBackwardFilter, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC},
};

// [N, C, spatial...] dims (cuDNN orders a backend tensor's dimensions so whatever its strides)
// as N, C and a 2-D extent: one spatial dim is a height of 1, a third is folded into the height.
struct Extent {
  int64_t n = 0, c = 0, h = 0, w = 0;
};
std::optional<Extent> extent(const std::vector<int64_t>& dims) {
  if (dims.size() < 3 || dims.size() > 5) return std::nullopt;
  Extent e{dims[0], dims[1], 1, dims.back()};
  for (size_t i = 2; i + 1 < dims.size(); ++i) e.h *= dims[i];
  return e;
}

// Strides likewise: the last spatial one is the width's, the others' product the height's.
std::pair<int64_t, int64_t> stride_hw(const std::vector<int64_t>& strides) {
  if (strides.empty()) return {1, 1};
  int64_t h = 1;
  for (size_t i = 0; i + 1 < strides.size(); ++i) h *= strides[i];
  return {h, strides.back()};
}

}  // namespace

std::optional<CudnnConvolution> decode_cudnn_convolution(const CudnnDescriptor& graph) {
  if (graph.type != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) return std::nullopt;
  const std::vector<const CudnnDescriptor*> ops = operations(graph);
  if (ops.size() != 1 || ops[0] == nullptr) return std::nullopt;
  const CudnnDescriptor& op = *ops[0];
  const ConvOperation* kind = nullptr;
  for (const ConvOperation& c : kConvOperations) {
    if (c.type == op.type) kind = &c;
  }
  if (kind == nullptr) return std::nullopt;
  const auto x = tensor(op.descriptor(kind->x)), w = tensor(op.descriptor(kind->w));
  const auto y = tensor(op.descriptor(kind->y));
  const CudnnDescriptor* conv = op.descriptor(kind->conv);
  if (!x || !w || !y || conv == nullptr) return std::nullopt;
  const auto in = extent(x->dims), filter = extent(w->dims), out = extent(y->dims);
  const std::optional<wire::DataType> type = data_type(x->data_type);
  if (!in || !filter || !out || !type || x->dims.size() != w->dims.size() ||
      x->dims.size() != y->dims.size()) {
    return std::nullopt;
  }
  // The filter is [K, C / groups, taps...]; the output [N, K, ...].
  if (filter->c < 1 || in->c % filter->c != 0 || out->n != in->n || out->c != filter->n) {
    return std::nullopt;
  }
  const auto [stride_h, stride_w] =
      stride_hw(conv->integers(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES));
  const auto fits = [](int64_t v) { return v >= 1 && v <= int64_t{UINT32_MAX}; };
  for (int64_t v : {in->n, in->c, in->h, in->w, filter->n, filter->h, filter->w, out->h, out->w,
                    stride_h, stride_w}) {
    if (!fits(v)) return std::nullopt;
  }
  wire::ConvShape s;
  const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  s.n = u(in->n), s.c = u(in->c), s.h = u(in->h), s.w = u(in->w);
  s.k = u(filter->n), s.r = u(filter->h), s.s = u(filter->w), s.p = u(out->h), s.q = u(out->w);
  s.groups = u(in->c / filter->c), s.stride_h = u(stride_h), s.stride_w = u(stride_w);
  s.dtype = *type;
  s.pass = kind->pass;
  // Channels-first when the channel dimension is not the innermost (a tensor with one pixel,
  // or no strides given, is taken as channels-last: nothing to transpose).
  s.channels_first = x->strides.size() == x->dims.size() && x->strides[1] != 1 ? 1 : 0;
  return CudnnConvolution{s};
}

std::optional<CudnnCall> decode_cudnn_call(const CudnnDescriptor& graph) {
  if (auto a = decode_cudnn_attention(graph)) return CudnnCall{*a};
  if (auto c = decode_cudnn_convolution(graph)) return CudnnCall{*c};
  return std::nullopt;
}

namespace {

// Names of the operations a message may meet (cudnn_graph.h's descriptor types, less their
// CUDNN_BACKEND_ prefix and _DESCRIPTOR suffix); others are given by number.
struct OperationName {
  int type;
  const char* name;
};
constexpr OperationName kOperationNames[] = {
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "OPERATION_CONVOLUTION_FORWARD"},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
     "OPERATION_CONVOLUTION_BACKWARD_FILTER"},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
     "OPERATION_CONVOLUTION_BACKWARD_DATA"},
    {CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "OPERATION_POINTWISE"},
    {CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "OPERATION_MATMUL"},
    {CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "OPERATION_REDUCTION"},
    {CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "OPERATION_RESHAPE"},
    {CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, "OPERATION_NORM_FORWARD"},
    {CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR, "OPERATION_NORM_BACKWARD"},
    {CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR, "OPERATION_RNG"},
    {CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, "OPERATION_SDPA_FWD"},
    {CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, "OPERATION_SDPA_BWD"},
    {kCudnnDiagonalBandMaskOperation, "OPERATION_DIAGONAL_BAND_MASK"},
    {kCudnnSoftmaxOperation, "OPERATION_SOFTMAX"},
};

}  // namespace

std::string describe_cudnn_graph(const CudnnDescriptor& graph) {
  std::map<int, int> count;
  for (const CudnnDescriptor* op : operations(graph)) {
    if (op != nullptr) ++count[static_cast<int>(op->type)];
  }
  std::string out;
  for (const auto& [type, n] : count) {
    std::string name = "descriptor type " + std::to_string(type);
    for (const OperationName& o : kOperationNames) {
      if (o.type == type) name = o.name;
    }
    out += (out.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  }
  return out.empty() ? "no operations" : out;
}

}  // namespace phantora::shim
