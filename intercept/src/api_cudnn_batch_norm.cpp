// cuDNN's legacy batch normalization (cudnnBatchNormalization*), which PyTorch calls for
// BatchNorm with torch.backends.cudnn.enabled = True (aten/src/ATen/native/cudnn/BatchNorm.cpp).
// Each pass sends one memory-bound kernel (wire::WorkKind::kNorm) on the handle's stream, its
// bytes from the call's descriptors (cudnn_batch_norm_work.hpp); values are not computed.
#include <cudnn_ops.h>

#include <initializer_list>

#include "capture.hpp"
#include "context.hpp"
#include "cudnn_batch_norm_work.hpp"
#include "cudnn_handle.hpp"
#include "cudnn_tensor.hpp"
#include "runtime.hpp"
#include "shadow.hpp"

using namespace phantora;
using namespace phantora::shim;

namespace {

// Whether a host scaling factor (alpha, beta) is non-zero: a double for double data, a float
// otherwise, as cuDNN reads it.
bool nonzero(const void* factor, const CudnnTensor& data) {
  if (data.type == CUDNN_DATA_DOUBLE) return *static_cast<const double*>(factor) != 0;
  return *static_cast<const float*>(factor) != 0;
}

bool valid_ops(cudnnBatchNormOps_t ops) {
  return ops == CUDNN_BATCHNORM_OPS_BN || ops == CUDNN_BATCHNORM_OPS_BN_ACTIVATION ||
         ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
}

// Both or neither: the optional pairs (running mean and variance, saved mean and inverse
// variance) are given together.
bool paired(const void* a, const void* b) {
  return (a == nullptr) == (b == nullptr);
}

// A tensor a kernel writes: its data and descriptor.
struct Output {
  void* data;
  const CudnnTensor* tensor;
};

// Sends the pass's kernel on the handle's stream, or adds it to the stream's capture.
void run_batch_norm(cudnnHandle_t handle, uint32_t kernel, const CudnnTensor& x,
                    const BatchNormTraffic& traffic, std::initializer_list<Output> outputs) {
  CUstream_st* s = resolve_stream_on(handle->ordinal, handle->stream);
  wire::Launch l{};
  l.stream = s->id;
  l.device = s->device;
  l.kernel = kernel;
  // The grid only tells the daemon how many SMs the kernel asks for when it shares the GPU
  // with a collective (simcore gpu_sharing.hpp); the time is the bytes'. One block per channel,
  // as PyTorch's own kernel for the per-channel statistics is launched.
  l.grid[0] = static_cast<uint32_t>(x.dims[1]), l.grid[1] = l.grid[2] = 1;
  l.block[0] = 256, l.block[1] = l.block[2] = 1;
  l.work.kind = wire::WorkKind::kNorm;
  l.work.bytes_read = traffic.read;
  l.work.bytes_written = traffic.written;
  // Kernels are not executed: what this one writes must not read back as what an earlier host
  // write or computed kernel left there (shadow.hpp), such as the running variance's initial
  // ones; it reads as zeros, as the outputs of the PyTorch kernels the shim does not compute do
  // (small_kernels.hpp).
  for (const Output& o : outputs) {
    if (o.data != nullptr && o.tensor != nullptr) {
      ShadowStore::get().discard(reinterpret_cast<uint64_t>(o.data), o.tensor->span_bytes());
    }
  }
  if (s->capture != nullptr) {
    capture_launch(s, l);
    return;
  }
  Runtime::get().submit(wire::RecordType::kLaunch, &l, sizeof(l));
}

cudnnStatus_t forward_training(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
                               cudnnBatchNormOps_t ops, const void* alpha, const void* beta,
                               const CudnnTensor* x_desc, const void* x, const CudnnTensor* z_desc,
                               const void* z, const CudnnTensor* y_desc, void* y,
                               const CudnnTensor* channel_desc, const void* scale, const void* bias,
                               void* running_mean, void* running_var, void* saved_mean,
                               void* saved_inv_var) {
  if (handle == nullptr || alpha == nullptr || beta == nullptr || x_desc == nullptr ||
      x == nullptr || y_desc == nullptr || y == nullptr || channel_desc == nullptr ||
      scale == nullptr || bias == nullptr || !valid_ops(ops) ||
      !paired(running_mean, running_var) || !paired(saved_mean, saved_inv_var)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  const bool adds = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
  if (adds && (z_desc == nullptr || z == nullptr)) return CUDNN_STATUS_BAD_PARAM;
  const std::optional<bool> per_activation = batch_norm_per_activation(mode);
  if (!per_activation) return CUDNN_STATUS_BAD_PARAM;
  const CudnnTensor* z_used = adds ? z_desc : nullptr;
  if (cudnnStatus_t st =
          check_batch_norm(*x_desc, {y_desc, z_used}, *channel_desc, *per_activation)) {
    return st;
  }
  BatchNormForward f;
  f.x = x_desc->bytes();
  f.y = y_desc->bytes();
  f.z = z_used ? z_used->bytes() : 0;
  f.channel = channel_desc->bytes();
  f.blend = nonzero(beta, *x_desc);
  f.running = running_mean != nullptr;
  f.saved = saved_mean != nullptr;
  static const uint32_t id = Runtime::get().kernel_id("cudnn_batch_norm_forward_training");
  run_batch_norm(handle, id, *x_desc, batch_norm_training_traffic(f),
                 {{y, y_desc},
                  {running_mean, channel_desc},
                  {running_var, channel_desc},
                  {saved_mean, channel_desc},
                  {saved_inv_var, channel_desc}});
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t backward(cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
                       const void* alpha_data, const void* beta_data, const void* alpha_params,
                       const void* beta_params, const CudnnTensor* x_desc, const void* x,
                       const CudnnTensor* y_desc, const void* y, const CudnnTensor* dy_desc,
                       const void* dy, const CudnnTensor* dz_desc, void* dz,
                       const CudnnTensor* dx_desc, void* dx, const CudnnTensor* channel_desc,
                       const void* scale, const void* bias, void* dscale, void* dbias,
                       const void* saved_mean, const void* saved_inv_var) {
  if (handle == nullptr || alpha_data == nullptr || beta_data == nullptr ||
      alpha_params == nullptr || beta_params == nullptr || x_desc == nullptr || x == nullptr ||
      dy_desc == nullptr || dy == nullptr || dx_desc == nullptr || dx == nullptr ||
      channel_desc == nullptr || scale == nullptr || dscale == nullptr || dbias == nullptr ||
      !valid_ops(ops) || !paired(saved_mean, saved_inv_var)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  // The fused activation's gradient needs its output and the bias; an added z, its gradient.
  const bool activation = ops != CUDNN_BATCHNORM_OPS_BN;
  const bool adds = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
  if (activation && (y_desc == nullptr || y == nullptr || bias == nullptr)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (adds && (dz_desc == nullptr || dz == nullptr)) return CUDNN_STATUS_BAD_PARAM;
  const std::optional<bool> per_activation = batch_norm_per_activation(mode);
  if (!per_activation) return CUDNN_STATUS_BAD_PARAM;
  const CudnnTensor* y_used = activation ? y_desc : nullptr;
  const CudnnTensor* dz_used = adds ? dz_desc : nullptr;
  if (cudnnStatus_t st = check_batch_norm(*x_desc, {dy_desc, dx_desc, y_used, dz_used},
                                          *channel_desc, *per_activation)) {
    return st;
  }
  BatchNormBackward b;
  b.x = x_desc->bytes();
  b.dy = dy_desc->bytes();
  b.dx = dx_desc->bytes();
  b.y = y_used ? y_used->bytes() : 0;
  b.dz = dz_used ? dz_used->bytes() : 0;
  b.channel = channel_desc->bytes();
  b.blend_data = nonzero(beta_data, *x_desc);
  b.blend_params = nonzero(beta_params, *x_desc);
  b.bias = activation;
  b.saved = saved_mean != nullptr;
  static const uint32_t id = Runtime::get().kernel_id("cudnn_batch_norm_backward");
  run_batch_norm(handle, id, *x_desc, batch_norm_backward_traffic(b),
                 {{dx, dx_desc},
                  {adds ? dz : nullptr, dz_desc},
                  {dscale, channel_desc},
                  {dbias, channel_desc}});
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derived,
                                            const cudnnTensorDescriptor_t x,
                                            cudnnBatchNormMode_t mode) {
  const std::optional<bool> per_activation = batch_norm_per_activation(mode);
  if (derived == nullptr || x == nullptr || !per_activation) return CUDNN_STATUS_BAD_PARAM;
  return derive_batch_norm_tensor(*derived, *x, *per_activation);
}

// Workspace and reserve space: none. The simulator allocates nothing a kernel works in (its
// kernels are priced, not run), so every size query answers 0 bytes.
cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t, cudnnBatchNormOps_t,
    const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnTensorDescriptor_t, const cudnnActivationDescriptor_t, size_t* size) {
  if (handle == nullptr || x == nullptr || size == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *size = 0;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t, cudnnBatchNormOps_t,
    const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnActivationDescriptor_t, size_t* size) {
  if (handle == nullptr || x == nullptr || size == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *size = 0;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t, cudnnBatchNormOps_t,
    const cudnnActivationDescriptor_t, const cudnnTensorDescriptor_t x, size_t* size) {
  if (handle == nullptr || x == nullptr || size == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *size = 0;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnTensorDescriptor_t z_desc, const void* z, const cudnnTensorDescriptor_t y_desc,
    void* y, const cudnnTensorDescriptor_t channel_desc, const void* scale, const void* bias,
    double, void* running_mean, void* running_var, double, void* saved_mean, void* saved_inv_var,
    cudnnActivationDescriptor_t, void*, size_t, void*, size_t) {
  ApiCall call;
  return forward_training(handle, mode, ops, alpha, beta, x_desc, x, z_desc, z, y_desc, y,
                          channel_desc, scale, bias, running_mean, running_var, saved_mean,
                          saved_inv_var);
}

cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t y_desc,
    void* y, const cudnnTensorDescriptor_t channel_desc, const void* scale, const void* bias,
    double, void* running_mean, void* running_var, double, void* saved_mean, void* saved_inv_var) {
  ApiCall call;
  return forward_training(handle, mode, CUDNN_BATCHNORM_OPS_BN, alpha, beta, x_desc, x, nullptr,
                          nullptr, y_desc, y, channel_desc, scale, bias, running_mean, running_var,
                          saved_mean, saved_inv_var);
}

cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t y_desc,
    void* y, const cudnnTensorDescriptor_t channel_desc, const void* scale, const void* bias,
    const void* mean, const void* var, double) {
  ApiCall call;
  if (handle == nullptr || alpha == nullptr || beta == nullptr || x_desc == nullptr ||
      x == nullptr || y_desc == nullptr || y == nullptr || channel_desc == nullptr ||
      scale == nullptr || bias == nullptr || mean == nullptr || var == nullptr) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  const std::optional<bool> per_activation = batch_norm_per_activation(mode);
  if (!per_activation) return CUDNN_STATUS_BAD_PARAM;
  if (cudnnStatus_t st = check_batch_norm(*x_desc, {y_desc}, *channel_desc, *per_activation)) {
    return st;
  }
  BatchNormForward f;
  f.x = x_desc->bytes();
  f.y = y_desc->bytes();
  f.channel = channel_desc->bytes();
  f.blend = nonzero(beta, *x_desc);
  static const uint32_t id = Runtime::get().kernel_id("cudnn_batch_norm_forward_inference");
  run_batch_norm(handle, id, *x_desc, batch_norm_inference_traffic(f), {{y, y_desc}});
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
    const void* alpha_data, const void* beta_data, const void* alpha_params,
    const void* beta_params, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnTensorDescriptor_t y_desc, const void* y, const cudnnTensorDescriptor_t dy_desc,
    const void* dy, const cudnnTensorDescriptor_t dz_desc, void* dz,
    const cudnnTensorDescriptor_t dx_desc, void* dx, const cudnnTensorDescriptor_t channel_desc,
    const void* scale, const void* bias, void* dscale, void* dbias, double, const void* saved_mean,
    const void* saved_inv_var, cudnnActivationDescriptor_t, void*, size_t, void*, size_t) {
  ApiCall call;
  return backward(handle, mode, ops, alpha_data, beta_data, alpha_params, beta_params, x_desc, x,
                  y_desc, y, dy_desc, dy, dz_desc, dz, dx_desc, dx, channel_desc, scale, bias,
                  dscale, dbias, saved_mean, saved_inv_var);
}

cudnnStatus_t cudnnBatchNormalizationBackward(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
                                              const void* alpha_data, const void* beta_data,
                                              const void* alpha_params, const void* beta_params,
                                              const cudnnTensorDescriptor_t x_desc, const void* x,
                                              const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                              const cudnnTensorDescriptor_t dx_desc, void* dx,
                                              const cudnnTensorDescriptor_t channel_desc,
                                              const void* scale, void* dscale, void* dbias, double,
                                              const void* saved_mean, const void* saved_inv_var) {
  ApiCall call;
  return backward(handle, mode, CUDNN_BATCHNORM_OPS_BN, alpha_data, beta_data, alpha_params,
                  beta_params, x_desc, x, nullptr, nullptr, dy_desc, dy, nullptr, nullptr, dx_desc,
                  dx, channel_desc, scale, nullptr, dscale, dbias, saved_mean, saved_inv_var);
}

}  // extern "C"
