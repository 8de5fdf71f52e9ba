// cuDNN's backend (graph) API as data: the descriptors a program builds with
// cudnnBackendCreateDescriptor / SetAttribute / Finalize (api_cudnn.cpp keeps them), and the
// call an operation graph describes: a convolution, or scaled-dot-product attention. cuDNN's
// frontend (which PyTorch's cuDNN attention uses) builds such graphs either as one native
// SDPA operation (cuDNN 9.20 and later for the forward: CUDNN_BACKEND_OPERATION_SDPA_FWD,
// its mask a diagonal-band subgraph) or as the composite of matrix products, pointwise
// operations and reductions it lowers SDPA to (the backward; older releases' forward). Pure
// data work: no CUDA, no process state.
#pragma once

#include <cudnn_graph.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "phantora/protocol.hpp"

namespace phantora::shim {

struct CudnnDescriptor;

// One attention call: its shape and pass.
struct CudnnAttention {
  wire::AttentionShape shape;  // impl kCudnn
  bool backward = false;
};

// One convolution: its shape, and which of its products (ConvShape::pass) the graph computes.
struct CudnnConvolution {
  wire::ConvShape shape;
};

// What an executed graph computes: the calls the simulator stands in for.
using CudnnCall = std::variant<CudnnAttention, CudnnConvolution>;

// One attribute as set: its element type, count and bytes; descriptor-valued attributes hold
// copies of the descriptors (cuDNN copies them when they are set: a program may destroy its
// own afterwards).
struct CudnnAttribute {
  cudnnBackendAttributeType_t type{};
  int64_t count = 0;
  std::vector<uint8_t> bytes;
  std::vector<std::shared_ptr<const CudnnDescriptor>> descriptors;
};

struct CudnnDescriptor {
  cudnnBackendDescriptorType_t type{};
  std::map<int, CudnnAttribute> attributes;  // by cudnnBackendAttributeName_t
  bool finalized = false;
  // An execution plan's call, decoded once when the plan is finalized (a program executes one
  // plan many times).
  std::optional<CudnnCall> call;

  const CudnnAttribute* find(int name) const;
  // The attribute's first int64 (or int32, for those types) element; nullopt when unset.
  std::optional<int64_t> integer(int name) const;
  std::vector<int64_t> integers(int name) const;  // every int64 element
  // The i-th descriptor held by a descriptor-valued attribute; null when unset.
  const CudnnDescriptor* descriptor(int name, size_t i = 0) const;
};

// Bytes of one element of an attribute type (cudnn_graph.h's cudnnBackendAttributeType_t).
size_t cudnn_element_bytes(cudnnBackendAttributeType_t type);

// Names of newer releases than the headers the shim is built with (cuDNN 9.19): the native
// SDPA forward's score subgraph and softmax (9.20, 9.21), the diagonal-band mask operation.
inline constexpr int kCudnnDiagonalBandMaskOperation = 44;  // OPERATION_DIAGONAL_BAND_MASK
inline constexpr int kCudnnSoftmaxOperation = 45;           // OPERATION_SOFTMAX
inline constexpr int kCudnnSdpaFwdSubgraph = 2811;          // OPERATION_SDPA_FWD_SUBGRAPH
inline constexpr int kCudnnDiagonalBandMaskMode = 3007;     // ..._BAND_MASK_COMPARISON_MODE

// The attention call an operation graph (a finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
// computes; nullopt when it is not one this decoder knows (docs/kernels.md, "cuDNN").
std::optional<CudnnAttention> decode_cudnn_attention(const CudnnDescriptor& operation_graph);

// The convolution a graph of one convolution operation computes (forward, data or filter
// gradient; PyTorch's cuDNN convolutions, aten/src/ATen/native/cudnn/Conv_v8.cpp); nullopt for
// any other graph. A 3-D convolution is described with its depth folded into the height (what
// it costs depends on the products of its spatial extents, its taps and strides).
std::optional<CudnnConvolution> decode_cudnn_convolution(const CudnnDescriptor& operation_graph);

// The call a graph computes: attention or convolution; nullopt when neither decoder knows it.
std::optional<CudnnCall> decode_cudnn_call(const CudnnDescriptor& operation_graph);

// The operations of a graph by descriptor type, for messages ("OPERATION_MATMUL x2, ...").
std::string describe_cudnn_graph(const CudnnDescriptor& operation_graph);

}  // namespace phantora::shim
