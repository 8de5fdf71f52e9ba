// cuDNN's legacy batch normalization as the simulator prices it: the per-channel tensors' shape
// for an input, the checks of a call's descriptors, and the bytes each pass moves. Each pass
// runs as one memory-bound kernel (wire::WorkKind::kNorm, api_cudnn_batch_norm.cpp). Pure data
// work over the shim's tensor descriptors (cudnn_tensor.hpp): no CUDA, no process state.
//
// The bytes follow the memory model's convention that each operand is read once and each
// result written once (docs/cost-model.md, "Memory-bound kernels"). That is what the persistent
// spatial mode (CUDNN_BATCHNORM_SPATIAL_PERSISTENT, PyTorch's choice for channels-last training)
// is meant to do, keeping the activation on chip between the statistics and the normalization;
// the other modes may read it a second time, mostly from L2 for small activations, which is not
// counted.
#pragma once

#include <cudnn_ops.h>

#include <cstdint>
#include <initializer_list>
#include <optional>

#include "cudnn_tensor.hpp"

namespace phantora::shim {

// Whether `mode` normalizes each activation over the batch (its per-channel tensors are
// 1 x C x H x W ...) rather than each channel over the batch and the spatial dimensions
// (1 x C x 1 x 1 ...: the spatial modes); nullopt for a value that is no mode.
std::optional<bool> batch_norm_per_activation(cudnnBatchNormMode_t mode);

// The per-channel tensors' descriptor for input `x` (cudnnDeriveBNTensorDescriptor): x's rank,
// packed, float unless x is double (half and bfloat16 inputs keep float statistics).
cudnnStatus_t derive_batch_norm_tensor(CudnnTensor& derived, const CudnnTensor& x,
                                       bool per_activation);

// A call's descriptors as cuDNN checks them: x set and 4- or 5-d (NOT_SUPPORTED otherwise),
// each of `like_x` (y, dy, dx, z as the call has them; null entries are skipped) set with x's
// dimensions, and `channel` (the scale, bias, mean and variance descriptor) of x's rank with
// x's channels and, per activation, x's other non-batch dimensions, else 1 (BAD_PARAM
// otherwise).
cudnnStatus_t check_batch_norm(const CudnnTensor& x,
                               std::initializer_list<const CudnnTensor*> like_x,
                               const CudnnTensor& channel, bool per_activation);

struct BatchNormTraffic {
  uint64_t read = 0;
  uint64_t written = 0;
};

// A forward pass, by the bytes of its tensors (CudnnTensor::bytes).
struct BatchNormForward {
  uint64_t x = 0, y = 0;
  uint64_t z = 0;        // added before the activation (CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION)
  uint64_t channel = 0;  // one per-channel tensor: the scale, bias, a mean or a variance
  bool blend = false;    // beta != 0: y is blended into, so read as well
  bool running = false;  // training: the running mean and variance, read and updated
  bool saved = false;    // training: the batch's mean and inverse variance, saved for backward
};
// Training reads x (and z), the scale and bias, and the running statistics it updates; it
// writes y, the running statistics and the saved ones.
BatchNormTraffic batch_norm_training_traffic(const BatchNormForward& f);
// Inference reads x, the scale, bias and the estimated mean and variance; it writes y.
BatchNormTraffic batch_norm_inference_traffic(const BatchNormForward& f);

// A backward pass, by the bytes of its tensors.
struct BatchNormBackward {
  uint64_t x = 0, dy = 0, dx = 0;
  uint64_t y = 0;   // read for the activation's gradient (the fused-activation ops), else 0
  uint64_t dz = 0;  // the gradient of z, written (CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION), else 0
  uint64_t channel = 0;
  bool blend_data = false;    // betaDataDiff != 0: dx is read as well
  bool blend_params = false;  // betaParamDiff != 0: the scale and bias gradients are read too
  bool bias = false;          // the bias is read (the activation's gradient needs it)
  bool saved = false;         // the saved mean and inverse variance are read, not recomputed
};
// Backward reads x, dy and the scale (and the saved statistics); it writes dx and the scale
// and bias gradients.
BatchNormTraffic batch_norm_backward_traffic(const BatchNormBackward& b);

}  // namespace phantora::shim
