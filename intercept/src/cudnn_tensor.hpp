// cuDNN's legacy tensor descriptor (cudnnTensorDescriptor_t) as the shim keeps it: an element
// type, dimensions and strides, as cudnnSetTensorNdDescriptor and its 4-d and layout-named
// siblings set them (api_cudnn_tensor.cpp), for the legacy calls that take one (batch
// normalization, api_cudnn_batch_norm.cpp). Pure data: no CUDA, no process state.
#pragma once

#include <cudnn_graph.h>

#include <cstdint>
#include <vector>

namespace phantora::shim {

// Bytes of one element of `type` as a tensor stores it; 0 for the types the shim's descriptors
// do not take: the vector types of the NCHW_VECT_C layout (INT8x4, UINT8x4, INT8x32), the
// sub-byte ones (FP4, INT4, UINT4) and FAST_FLOAT_FOR_FP8 (a compute type, not a storage one).
uint64_t cudnn_data_type_bytes(cudnnDataType_t type);

struct CudnnTensor {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<int> dims;     // empty until set
  std::vector<int> strides;  // in elements, one per dimension

  bool is_set() const { return !dims.empty(); }
  uint64_t elements() const;  // the product of the dimensions; 0 until set
  // What a kernel that visits each element once moves: elements times the element's bytes.
  uint64_t bytes() const;
  // The memory the tensor spans, from its first element to its last (padding between rows
  // included): cudnnGetTensorSizeInBytes's answer, and the range a kernel writing it covers.
  uint64_t span_bytes() const;
  bool same_dims(const CudnnTensor& other) const { return dims == other.dims; }
};

// The setters behind cuDNN's entry points, checking their arguments as those do: SUCCESS, or
// BAD_PARAM (no dimensions, a null array, a dimension or stride below 1, an unknown type) or
// NOT_SUPPORTED (more than CUDNN_DIM_MAX dimensions, a type or layout listed above, a tensor
// too large to address), and then `t` is left as it was.
cudnnStatus_t set_cudnn_tensor(CudnnTensor& t, cudnnDataType_t type, int nb_dims, const int dims[],
                               const int strides[]);
// Packed in the layout `format` names: NCHW row-major; NHWC with the channels (dimension 1)
// innermost, then the spatial dimensions, then the batch.
cudnnStatus_t set_cudnn_tensor_packed(CudnnTensor& t, cudnnTensorFormat_t format,
                                      cudnnDataType_t type, int nb_dims, const int dims[]);

}  // namespace phantora::shim

// The opaque type cudnnTensorDescriptor_t points at (cudnn_ops.h only declares it): the shim
// owns its layout.
struct cudnnTensorStruct : phantora::shim::CudnnTensor {};
