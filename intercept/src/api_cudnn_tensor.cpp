// cuDNN's legacy tensor descriptors (cudnnCreateTensorDescriptor, cudnnSet/GetTensor*), which
// PyTorch builds for its cuDNN batch normalization (aten/src/ATen/cudnn/Descriptors.cpp): kept
// as the shim's own data (cudnn_tensor.hpp) for the calls that read them
// (api_cudnn_batch_norm.cpp). Nothing here touches the GPU.
#include <cudnn_ops.h>

#include <algorithm>

#include "cudnn_tensor.hpp"

using namespace phantora::shim;

extern "C" {

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensor) {
  if (tensor == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *tensor = new cudnnTensorStruct{};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensor) {
  delete tensor;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensor, cudnnDataType_t type,
                                         int nb_dims, const int dims[], const int strides[]) {
  if (tensor == nullptr) return CUDNN_STATUS_BAD_PARAM;
  return set_cudnn_tensor(*tensor, type, nb_dims, dims, strides);
}

cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t tensor,
                                           cudnnTensorFormat_t format, cudnnDataType_t type,
                                           int nb_dims, const int dims[]) {
  if (tensor == nullptr) return CUDNN_STATUS_BAD_PARAM;
  return set_cudnn_tensor_packed(*tensor, format, type, nb_dims, dims);
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensor, cudnnTensorFormat_t format,
                                         cudnnDataType_t type, int n, int c, int h, int w) {
  if (tensor == nullptr) return CUDNN_STATUS_BAD_PARAM;
  const int dims[] = {n, c, h, w};
  return set_cudnn_tensor_packed(*tensor, format, type, 4, dims);
}

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t tensor, cudnnDataType_t type,
                                           int n, int c, int h, int w, int n_stride, int c_stride,
                                           int h_stride, int w_stride) {
  if (tensor == nullptr) return CUDNN_STATUS_BAD_PARAM;
  const int dims[] = {n, c, h, w};
  const int strides[] = {n_stride, c_stride, h_stride, w_stride};
  return set_cudnn_tensor(*tensor, type, 4, dims, strides);
}

cudnnStatus_t cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t tensor,
                                         cudnnDataType_t* type, int* n, int* c, int* h, int* w,
                                         int* n_stride, int* c_stride, int* h_stride,
                                         int* w_stride) {
  if (tensor == nullptr || tensor->dims.size() != 4 || type == nullptr || n == nullptr ||
      c == nullptr || h == nullptr || w == nullptr || n_stride == nullptr || c_stride == nullptr ||
      h_stride == nullptr || w_stride == nullptr) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  *type = tensor->type;
  *n = tensor->dims[0], *c = tensor->dims[1], *h = tensor->dims[2], *w = tensor->dims[3];
  *n_stride = tensor->strides[0], *c_stride = tensor->strides[1];
  *h_stride = tensor->strides[2], *w_stride = tensor->strides[3];
  return CUDNN_STATUS_SUCCESS;
}

// Up to `requested` dimensions and strides; `nb_dims` gets how many the tensor has.
cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensor, int requested,
                                         cudnnDataType_t* type, int* nb_dims, int dims[],
                                         int strides[]) {
  if (tensor == nullptr || !tensor->is_set() || requested < 0 || type == nullptr ||
      nb_dims == nullptr || (requested > 0 && (dims == nullptr || strides == nullptr))) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  *type = tensor->type;
  *nb_dims = static_cast<int>(tensor->dims.size());
  const int n = std::min(requested, *nb_dims);
  std::copy_n(tensor->dims.begin(), n, dims);
  std::copy_n(tensor->strides.begin(), n, strides);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t tensor, size_t* size) {
  if (tensor == nullptr || size == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *size = tensor->span_bytes();
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
