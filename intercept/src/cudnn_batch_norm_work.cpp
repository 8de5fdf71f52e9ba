#include "cudnn_batch_norm_work.hpp"

#include <vector>

namespace phantora::shim {

namespace {

// The per-channel tensors' dimensions for input dimensions `x`.
std::vector<int> channel_dims(const std::vector<int>& x, bool per_activation) {
  std::vector<int> d(x.size(), 1);
  for (size_t i = 1; i < x.size(); ++i) {
    if (i == 1 || per_activation) d[i] = x[i];
  }
  return d;
}

}  // namespace

std::optional<bool> batch_norm_per_activation(cudnnBatchNormMode_t mode) {
  switch (mode) {
    case CUDNN_BATCHNORM_PER_ACTIVATION:
      return true;
    case CUDNN_BATCHNORM_SPATIAL:
    case CUDNN_BATCHNORM_SPATIAL_PERSISTENT:
      return false;
  }
  return std::nullopt;
}

cudnnStatus_t derive_batch_norm_tensor(CudnnTensor& derived, const CudnnTensor& x,
                                       bool per_activation) {
  if (!x.is_set()) return CUDNN_STATUS_BAD_PARAM;
  const std::vector<int> dims = channel_dims(x.dims, per_activation);
  const cudnnDataType_t type = x.type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  return set_cudnn_tensor_packed(derived, CUDNN_TENSOR_NCHW, type, static_cast<int>(dims.size()),
                                 dims.data());
}

cudnnStatus_t check_batch_norm(const CudnnTensor& x,
                               std::initializer_list<const CudnnTensor*> like_x,
                               const CudnnTensor& channel, bool per_activation) {
  if (!x.is_set()) return CUDNN_STATUS_BAD_PARAM;
  if (x.dims.size() != 4 && x.dims.size() != 5) return CUDNN_STATUS_NOT_SUPPORTED;
  for (const CudnnTensor* t : like_x) {
    if (t != nullptr && !t->same_dims(x)) return CUDNN_STATUS_BAD_PARAM;
  }
  if (channel.dims != channel_dims(x.dims, per_activation)) return CUDNN_STATUS_BAD_PARAM;
  return CUDNN_STATUS_SUCCESS;
}

BatchNormTraffic batch_norm_training_traffic(const BatchNormForward& f) {
  BatchNormTraffic t;
  const uint64_t running = f.running ? 2 * f.channel : 0;              // mean and variance
  t.read = f.x + f.z + (f.blend ? f.y : 0) + 2 * f.channel + running;  // scale and bias
  t.written = f.y + running + (f.saved ? 2 * f.channel : 0);
  return t;
}

BatchNormTraffic batch_norm_inference_traffic(const BatchNormForward& f) {
  BatchNormTraffic t;
  // The scale, bias, estimated mean and estimated variance.
  t.read = f.x + (f.blend ? f.y : 0) + 4 * f.channel;
  t.written = f.y;
  return t;
}

BatchNormTraffic batch_norm_backward_traffic(const BatchNormBackward& b) {
  BatchNormTraffic t;
  const uint64_t params = 2 * b.channel;                             // the scale and bias gradients
  t.read = b.x + b.dy + b.y + (b.blend_data ? b.dx : 0) + b.channel  // the scale
           + (b.bias ? b.channel : 0) + (b.saved ? 2 * b.channel : 0) +
           (b.blend_params ? params : 0);
  t.written = b.dx + b.dz + params;
  return t;
}

}  // namespace phantora::shim
