// cuDNN operation graphs of attention, built by hand as cuDNN's frontend builds them (the
// shapes, tensor flags and operations seen from PyTorch 2.15 with cuDNN 9.26 and PyTorch 2.8
// with cuDNN 9.10), decoded into the attention call they compute.
#include "cudnn_graph.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <memory>

namespace {

using phantora::shim::CudnnAttribute;
using phantora::shim::CudnnDescriptor;
using phantora::shim::decode_cudnn_attention;
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

}  // namespace
