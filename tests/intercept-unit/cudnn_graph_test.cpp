// cuDNN operation graphs of attention and convolutions, built by hand as cuDNN's frontend
// builds them (the shapes, tensor flags and operations seen from PyTorch 2.15 with cuDNN 9.26
// and PyTorch 2.8 with cuDNN 9.10), decoded into the call they compute.
#include "cudnn_graph.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <memory>
#include <utility>
#include <variant>

namespace {

using phantora::shim::CudnnAttribute;
using phantora::shim::CudnnDescriptor;
using phantora::shim::decode_cudnn_attention;
using phantora::shim::decode_cudnn_call;
using phantora::shim::decode_cudnn_convolution;
namespace wire = phantora::wire;
using Ptr = std::shared_ptr<const CudnnDescriptor>;

void set_integers(CudnnDescriptor& d, int name, cudnnBackendAttributeType_t type,
                  std::initializer_list<int64_t> values) {
  CudnnAttribute a;
  a.type = type;
  a.count = static_cast<int64_t>(values.size());
  for (int64_t v : values) {
    const size_t bytes = phantora::shim::cudnn_element_bytes(type);
    const size_t at = a.bytes.size();
    a.bytes.resize(at + bytes);
    std::memcpy(a.bytes.data() + at, &v, bytes);  // little-endian: the low bytes
  }
  d.attributes[name] = a;
}

void set_descriptors(CudnnDescriptor& d, int name, std::initializer_list<Ptr> values) {
  CudnnAttribute a;
  a.type = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  a.count = static_cast<int64_t>(values.size());
  a.descriptors = values;
  d.attributes[name] = a;
}

Ptr tensor(std::initializer_list<int64_t> dims, bool is_virtual = false,
           int64_t type = CUDNN_DATA_BFLOAT16) {
  auto t = std::make_shared<CudnnDescriptor>();
  t->type = CUDNN_BACKEND_TENSOR_DESCRIPTOR;
  set_integers(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims);
  set_integers(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, {type});
  if (is_virtual) set_integers(*t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, {1});
  return t;
}

Ptr matmul(Ptr a, Ptr b, Ptr c) {
  auto m = std::make_shared<CudnnDescriptor>();
  m->type = CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR;
  set_descriptors(*m, CUDNN_ATTR_OPERATION_MATMUL_ADESC, {a});
  set_descriptors(*m, CUDNN_ATTR_OPERATION_MATMUL_BDESC, {b});
  set_descriptors(*m, CUDNN_ATTR_OPERATION_MATMUL_CDESC, {c});
  return m;
}

Ptr pointwise(cudnnPointwiseMode_t mode) {
  auto pw = std::make_shared<CudnnDescriptor>();
  pw->type = CUDNN_BACKEND_POINTWISE_DESCRIPTOR;
  set_integers(*pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, {mode});
  auto op = std::make_shared<CudnnDescriptor>();
  op->type = CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
  set_descriptors(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, {pw});
  return op;
}

Ptr band_mask(int64_t mode) {
  auto m = std::make_shared<CudnnDescriptor>();
  m->type =
      static_cast<cudnnBackendDescriptorType_t>(phantora::shim::kCudnnDiagonalBandMaskOperation);
  set_integers(*m, phantora::shim::kCudnnDiagonalBandMaskMode, CUDNN_TYPE_POINTWISE_MODE, {mode});
  return m;
}

CudnnDescriptor graph(std::initializer_list<Ptr> ops) {
  CudnnDescriptor g;
  g.type = CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR;
  set_descriptors(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, ops);
  return g;
}

TEST(CudnnGraph, NativeForwardWithACausalSubgraph) {
  // PyTorch 2.15, cuDNN 9.26: one SDPA_FWD operation; Q [2, 16, 2048, 64], K and V with 4
  // heads; its score subgraph holds a diagonal-band mask kept where row >= column.
  auto sdpa = std::make_shared<CudnnDescriptor>();
  sdpa->type = CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR;
  set_descriptors(*sdpa, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, {tensor({2, 16, 2048, 64})});
  set_descriptors(*sdpa, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, {tensor({2, 4, 1000, 64})});
  set_descriptors(*sdpa, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, {tensor({2, 4, 1000, 64})});
  const CudnnDescriptor full = graph({sdpa});
  auto a = decode_cudnn_attention(full);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->backward);
  EXPECT_EQ(a->shape.batch, 2u);
  EXPECT_EQ(a->shape.heads_q, 16u);
  EXPECT_EQ(a->shape.heads_kv, 4u);
  EXPECT_EQ(a->shape.seq_q, 2048u);
  EXPECT_EQ(a->shape.seq_k, 1000u);
  EXPECT_EQ(a->shape.head_dim, 64u);
  EXPECT_EQ(a->shape.causal, 0);
  EXPECT_EQ(a->shape.dtype, wire::DataType::kBF16);
  EXPECT_EQ(a->shape.impl, wire::AttentionImpl::kCudnn);

  auto masked = std::make_shared<CudnnDescriptor>(*sdpa);
  auto sub = std::make_shared<CudnnDescriptor>(graph({band_mask(CUDNN_POINTWISE_CMP_GE)}));
  set_descriptors(*masked, phantora::shim::kCudnnSdpaFwdSubgraph, {sub});
  a = decode_cudnn_attention(graph({masked}));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->shape.causal, 1);
  // A band kept above the diagonal alone is not causal.
  set_descriptors(*masked, phantora::shim::kCudnnSdpaFwdSubgraph,
                  {std::make_shared<CudnnDescriptor>(graph({band_mask(CUDNN_POINTWISE_CMP_LE)}))});
  EXPECT_EQ(decode_cudnn_attention(graph({masked}))->shape.causal, 0);
}

TEST(CudnnGraph, CompositeForwardAndBackward) {
  // Q [1, 8, 512, 128], Kᵀ [1, 8, 128, 512]; V's head dim 64 (the forward's P·V says it).
  const Ptr q = tensor({1, 8, 512, 128}), kt = tensor({1, 8, 128, 512}),
            v = tensor({1, 8, 512, 64}), o = tensor({1, 8, 512, 64});
  const Ptr s = tensor({1, 8, 512, 512}, true), p = tensor({1, 8, 512, 512}, true);
  // PyTorch 2.8, cuDNN 9.10: the forward as two products and pointwise operations; the causal
  // mask from generated row and column indices.
  auto a = decode_cudnn_attention(
      graph({matmul(q, kt, s), pointwise(CUDNN_POINTWISE_MUL), pointwise(CUDNN_POINTWISE_GEN_INDEX),
             pointwise(CUDNN_POINTWISE_CMP_GE), matmul(p, v, o)}));
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->backward);
  EXPECT_EQ(a->shape.seq_q, 512u);
  EXPECT_EQ(a->shape.seq_k, 512u);
  EXPECT_EQ(a->shape.head_dim, 96u);  // (128 + 64) / 2: the two products' FLOPs
  EXPECT_EQ(a->shape.causal, 1);
  // The backward: five products (S recomputed, dV, dP, dQ, dK), no mask.
  const Ptr d_o = tensor({1, 8, 512, 128}), vt = tensor({1, 8, 128, 512});
  const Ptr ds = tensor({1, 8, 512, 512}, true), pt = tensor({1, 8, 512, 512}, true);
  a = decode_cudnn_attention(graph({matmul(q, kt, s), matmul(pt, d_o, tensor({1, 8, 512, 128})),
                                    matmul(d_o, vt, tensor({1, 8, 512, 512}, true)),
                                    matmul(ds, tensor({1, 8, 512, 128}), tensor({1, 8, 512, 128})),
                                    matmul(ds, q, tensor({1, 8, 512, 128}))}));
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->backward);
  EXPECT_EQ(a->shape.heads_q, 8u);
  EXPECT_EQ(a->shape.head_dim, 128u);
  EXPECT_EQ(a->shape.causal, 0);
}

TEST(CudnnGraph, OtherGraphsAreNotAttention) {
  // One product (a GEMM), a convolution-free pointwise graph, an empty graph, and products
  // whose batch or head dim disagree.
  const Ptr q = tensor({1, 8, 512, 128}), kt = tensor({1, 8, 128, 512});
  EXPECT_FALSE(decode_cudnn_attention(graph({matmul(q, kt, tensor({1, 8, 512, 512}, true))})));
  EXPECT_FALSE(decode_cudnn_attention(graph({pointwise(CUDNN_POINTWISE_ADD)})));
  EXPECT_FALSE(decode_cudnn_attention(graph({})));
  const Ptr s = tensor({1, 8, 512, 512}, true);
  EXPECT_FALSE(
      decode_cudnn_attention(graph({matmul(q, tensor({2, 8, 128, 512}), s),
                                    matmul(s, tensor({1, 8, 512, 64}), tensor({1, 8, 512, 64}))})));
  EXPECT_FALSE(
      decode_cudnn_attention(graph({matmul(q, tensor({1, 8, 64, 512}), s),
                                    matmul(s, tensor({1, 8, 512, 64}), tensor({1, 8, 512, 64}))})));
}

// A convolution operation of `type` over (input, filter, output) as its attributes name them,
// with a convolution descriptor of these filter strides.
Ptr convolution(cudnnBackendDescriptorType_t type, Ptr x, Ptr w, Ptr y,
                std::initializer_list<int64_t> strides) {
  auto conv = std::make_shared<CudnnDescriptor>();
  conv->type = CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR;
  set_integers(*conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, strides);
  set_integers(*conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64,
               {static_cast<int64_t>(strides.size())});
  auto op = std::make_shared<CudnnDescriptor>();
  op->type = type;
  int names[4] = {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC};
  if (type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) {
    names[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
    names[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
    names[2] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
    names[3] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC;
  } else if (type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR) {
    names[0] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
    names[1] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
    names[2] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
    names[3] = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC;
  }
  set_descriptors(*op, names[0], {x});
  set_descriptors(*op, names[1], {w});
  set_descriptors(*op, names[2], {y});
  set_descriptors(*op, names[3], {conv});
  return op;
}

TEST(CudnnGraph, ConvolutionsInEachPass) {
  // ResNet-50's first downsampling 3 x 3: x [32, 128, 56, 56], w [128, 128, 3, 3], stride 2,
  // y [32, 128, 28, 28] (PyTorch's Conv_v8.cpp sends one operation per graph).
  const Ptr x = tensor({32, 128, 56, 56}), w = tensor({128, 128, 3, 3}),
            y = tensor({32, 128, 28, 28});
  const std::pair<cudnnBackendDescriptorType_t, wire::ConvPass> passes[] = {
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, wire::ConvPass::kForward},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, wire::ConvPass::kBackwardData},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
       wire::ConvPass::kBackwardFilter}};
  for (const auto& [type, pass] : passes) {
    const auto c = decode_cudnn_convolution(graph({convolution(type, x, w, y, {2, 2})}));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->shape.pass, pass);
    EXPECT_EQ(c->shape.n, 32u);
    EXPECT_EQ(c->shape.c, 128u);
    EXPECT_EQ(c->shape.h, 56u);
    EXPECT_EQ(c->shape.w, 56u);
    EXPECT_EQ(c->shape.k, 128u);
    EXPECT_EQ(c->shape.r, 3u);
    EXPECT_EQ(c->shape.s, 3u);
    EXPECT_EQ(c->shape.p, 28u);
    EXPECT_EQ(c->shape.q, 28u);
    EXPECT_EQ(c->shape.groups, 1u);
    EXPECT_EQ(c->shape.stride_h, 2u);
    EXPECT_EQ(c->shape.stride_w, 2u);
    EXPECT_EQ(c->shape.dtype, wire::DataType::kBF16);
    // The call decoder finds it as a convolution, not as attention.
    const auto call = decode_cudnn_call(graph({convolution(type, x, w, y, {2, 2})}));
    ASSERT_TRUE(call.has_value());
    EXPECT_TRUE(std::holds_alternative<phantora::shim::CudnnConvolution>(*call));
  }
}

TEST(CudnnGraph, ConvolutionLayoutFromTheInputsStrides) {
  // PyTorch's default NCHW: x [8, 64, 32, 32] with strides [65536, 1024, 32, 1]; channels-last
  // [65536, 1, 2048, 64]; a tensor without strides is taken as channels-last.
  const auto fwd = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
  auto strided = [](std::initializer_list<int64_t> strides) {
    auto t = std::make_shared<CudnnDescriptor>(*tensor({8, 64, 32, 32}));
    set_integers(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides);
    return Ptr(t);
  };
  const Ptr w = tensor({64, 64, 3, 3}), y = tensor({8, 64, 32, 32});
  auto c = decode_cudnn_convolution(
      graph({convolution(fwd, strided({65536, 1024, 32, 1}), w, y, {1, 1})}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->shape.channels_first, 1);
  c = decode_cudnn_convolution(
      graph({convolution(fwd, strided({65536, 1, 2048, 64}), w, y, {1, 1})}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->shape.channels_first, 0);
  c = decode_cudnn_convolution(graph({convolution(fwd, tensor({8, 64, 32, 32}), w, y, {1, 1})}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->shape.channels_first, 0);
}

TEST(CudnnGraph, GroupedThreeDAndMalformedConvolutions) {
  const auto fwd = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
  // Depthwise: 64 channels, filter [64, 1, 3, 3]: 64 groups; fp32 tensors.
  auto c = decode_cudnn_convolution(
      graph({convolution(fwd, tensor({8, 64, 32, 32}, false, CUDNN_DATA_FLOAT),
                         tensor({64, 1, 3, 3}, false, CUDNN_DATA_FLOAT),
                         tensor({8, 64, 32, 32}, false, CUDNN_DATA_FLOAT), {1, 1})}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->shape.groups, 64u);
  EXPECT_EQ(c->shape.dtype, wire::DataType::kF32);
  // 3-D: x [2, 16, 8, 32, 32], w [32, 16, 3, 3, 3], y [2, 32, 4, 16, 16], strides 2: the depth
  // folds into the height (8 x 32 = 256 rows in, 3 x 3 = 9 filter rows, 4 x 16 out, stride 4).
  c = decode_cudnn_convolution(
      graph({convolution(fwd, tensor({2, 16, 8, 32, 32}), tensor({32, 16, 3, 3, 3}),
                         tensor({2, 32, 4, 16, 16}), {2, 2, 2})}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->shape.h, 256u);
  EXPECT_EQ(c->shape.r, 9u);
  EXPECT_EQ(c->shape.p, 64u);
  EXPECT_EQ(c->shape.stride_h, 4u);
  EXPECT_EQ(c->shape.stride_w, 2u);
  // Channels that do not divide into the filter's, an output batch or channel count that
  // disagrees, tensors of different ranks, and a graph with a second operation: not decoded.
  EXPECT_FALSE(decode_cudnn_convolution(graph({convolution(
      fwd, tensor({8, 64, 32, 32}), tensor({64, 48, 3, 3}), tensor({8, 64, 32, 32}), {1, 1})})));
  EXPECT_FALSE(decode_cudnn_convolution(graph({convolution(
      fwd, tensor({8, 64, 32, 32}), tensor({64, 64, 3, 3}), tensor({4, 64, 32, 32}), {1, 1})})));
  EXPECT_FALSE(decode_cudnn_convolution(graph({convolution(
      fwd, tensor({8, 64, 32, 32}), tensor({64, 64, 3, 3}), tensor({8, 32, 32, 32}), {1, 1})})));
  EXPECT_FALSE(decode_cudnn_convolution(graph({convolution(
      fwd, tensor({8, 64, 32, 32}), tensor({64, 64, 3, 3, 3}), tensor({8, 64, 32, 32}), {1, 1})})));
  EXPECT_FALSE(decode_cudnn_convolution(
      graph({convolution(fwd, tensor({8, 64, 32, 32}), tensor({64, 64, 3, 3}),
                         tensor({8, 64, 32, 32}), {1, 1}),
             pointwise(CUDNN_POINTWISE_RELU_FWD)})));
  // Neither a convolution nor attention: no call.
  EXPECT_FALSE(decode_cudnn_call(graph({pointwise(CUDNN_POINTWISE_ADD)})));
}

}  // namespace
