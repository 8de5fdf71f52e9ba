#include "cudnn_tensor.hpp"

#include <climits>
#include <cstddef>

namespace phantora::shim {

namespace {

// Whether `type` is one of cudnnDataType_t's enumerators (of the headers the shim is built
// with), whether or not a tensor here takes it.
bool known_type(cudnnDataType_t type) {
  return type >= CUDNN_DATA_FLOAT && type <= CUDNN_DATA_COMPLEX_FP64;
}

// The span in bytes of dims and strides of `bytes`-byte elements, or 0 when it overflows the
// int64 range (a tensor no kernel could address).
uint64_t span_of(const std::vector<int>& dims, const std::vector<int>& strides, uint64_t bytes) {
  uint64_t last = 0;  // offset of the last element, in elements
  for (size_t i = 0; i < dims.size(); ++i) {
    uint64_t step = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(dims[i] - 1),
                               static_cast<uint64_t>(strides[i]), &step) ||
        __builtin_add_overflow(last, step, &last)) {
      return 0;
    }
  }
  uint64_t span = 0;
  if (__builtin_mul_overflow(last + 1, bytes, &span) || span > uint64_t{INT64_MAX}) return 0;
  return span;
}

}  // namespace

uint64_t cudnn_data_type_bytes(cudnnDataType_t type) {
  switch (type) {
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN:
    case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2:
    case CUDNN_DATA_FP8_E8M0:
      return 1;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
      return 2;
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_INT32:
    case CUDNN_DATA_UINT32:
      return 4;
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64:
    case CUDNN_DATA_COMPLEX_FP32:
      return 8;
    case CUDNN_DATA_COMPLEX_FP64:
      return 16;
    default:
      return 0;
  }
}

uint64_t CudnnTensor::elements() const {
  if (dims.empty()) return 0;
  uint64_t n = 1;
  for (int d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

uint64_t CudnnTensor::bytes() const {
  return elements() * cudnn_data_type_bytes(type);
}

uint64_t CudnnTensor::span_bytes() const {
  return dims.empty() ? 0 : span_of(dims, strides, cudnn_data_type_bytes(type));
}

cudnnStatus_t set_cudnn_tensor(CudnnTensor& t, cudnnDataType_t type, int nb_dims, const int dims[],
                               const int strides[]) {
  if (nb_dims < 1 || dims == nullptr || strides == nullptr || !known_type(type)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (nb_dims > CUDNN_DIM_MAX) return CUDNN_STATUS_NOT_SUPPORTED;
  for (int i = 0; i < nb_dims; ++i) {
    if (dims[i] < 1 || strides[i] < 1) return CUDNN_STATUS_BAD_PARAM;
  }
  const uint64_t bytes = cudnn_data_type_bytes(type);
  if (bytes == 0) return CUDNN_STATUS_NOT_SUPPORTED;
  std::vector<int> d(dims, dims + nb_dims), s(strides, strides + nb_dims);
  if (span_of(d, s, bytes) == 0) return CUDNN_STATUS_NOT_SUPPORTED;
  t.type = type;
  t.dims = std::move(d);
  t.strides = std::move(s);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t set_cudnn_tensor_packed(CudnnTensor& t, cudnnTensorFormat_t format,
                                      cudnnDataType_t type, int nb_dims, const int dims[]) {
  if (nb_dims < 1 || dims == nullptr) return CUDNN_STATUS_BAD_PARAM;
  if (nb_dims > CUDNN_DIM_MAX) return CUDNN_STATUS_NOT_SUPPORTED;
  if (format == CUDNN_TENSOR_NCHW_VECT_C) return CUDNN_STATUS_NOT_SUPPORTED;
  if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC) return CUDNN_STATUS_BAD_PARAM;
  for (int i = 0; i < nb_dims; ++i) {
    if (dims[i] < 1) return CUDNN_STATUS_BAD_PARAM;
  }
  // The dimensions from the innermost out: the last first (NCHW), or the channels first, then
  // the spatial dimensions last to first, then the batch (NHWC).
  std::vector<int> order;
  if (format == CUDNN_TENSOR_NHWC && nb_dims > 2) {
    order.push_back(1);
    for (int i = nb_dims - 1; i >= 2; --i) order.push_back(i);
    order.push_back(0);
  } else {
    for (int i = nb_dims - 1; i >= 0; --i) order.push_back(i);
  }
  std::vector<int> strides(nb_dims);
  int64_t stride = 1;
  for (int i : order) {
    if (stride > INT_MAX) return CUDNN_STATUS_NOT_SUPPORTED;  // strides are ints
    strides[i] = static_cast<int>(stride);
    stride *= dims[i];
  }
  return set_cudnn_tensor(t, type, nb_dims, dims, strides.data());
}

}  // namespace phantora::shim
