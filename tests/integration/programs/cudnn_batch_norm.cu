// cuDNN's legacy batch normalization without PyTorch: the older entry points (ForwardTraining,
// Backward) and ForwardInference on an NHWC half tensor with the derived per-channel descriptor,
// the calls cuDNN refuses, and the running variance the kernel overwrote: it reads back as
// zeros, not as the ones the host wrote (intercept/src/api_cudnn_batch_norm.cpp). check.py
// prices each kernel by hand.
#include <cudnn.h>

#include <vector>

#include "check.cuh"

#define DNN(x)                                                                             \
  do {                                                                                     \
    cudnnStatus_t s_ = (x);                                                                \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                      \
      std::printf("FAILED %s: status %d (line %d)\n", #x, static_cast<int>(s_), __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

int main() {
  constexpr int N = 8, C = 16, H = 32, W = 32;
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));
  cudnnHandle_t handle = nullptr;
  DNN(cudnnCreate(&handle));
  DNN(cudnnSetStream(handle, stream));

  cudnnTensorDescriptor_t x = nullptr, channel = nullptr, other = nullptr;
  DNN(cudnnCreateTensorDescriptor(&x));
  DNN(cudnnCreateTensorDescriptor(&channel));
  DNN(cudnnCreateTensorDescriptor(&other));
  DNN(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, N, C, H, W));
  DNN(cudnnSetTensor4dDescriptor(other, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, N, C, H, W / 2));
  DNN(cudnnDeriveBNTensorDescriptor(channel, x, CUDNN_BATCHNORM_SPATIAL_PERSISTENT));
  cudnnDataType_t type{};
  int n = 0, c = 0, h = 0, w = 0, ns = 0, cs = 0, hs = 0, ws = 0;
  DNN(cudnnGetTensor4dDescriptor(channel, &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
  std::printf("channel %d %d %d %d type %d\n", n, c, h, w, static_cast<int>(type));

  const size_t act = size_t{N} * C * H * W * 2, per_channel = C * sizeof(float);
  void *xb, *yb, *dyb, *dxb;
  for (void** p : {&xb, &yb, &dyb, &dxb}) CHECK(cudaMalloc(p, act));
  void *scale, *bias, *mean, *var, *saved_mean, *saved_inv_var, *dscale, *dbias;
  for (void** p : {&scale, &bias, &mean, &var, &saved_mean, &saved_inv_var, &dscale, &dbias}) {
    CHECK(cudaMalloc(p, per_channel));
  }
  const std::vector<float> ones(C, 1.0f);
  CHECK(cudaMemcpy(var, ones.data(), per_channel, cudaMemcpyHostToDevice));

  const float one = 1, zero = 0;
  const auto training = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
  DNN(cudnnBatchNormalizationForwardTraining(handle, training, &one, &zero, x, xb, x, yb, channel,
                                             scale, bias, 0.1, mean, var, 1e-5, saved_mean,
                                             saved_inv_var));
  DNN(cudnnBatchNormalizationBackward(handle, training, &one, &zero, &one, &zero, x, xb, x, dyb, x,
                                      dxb, channel, scale, dscale, dbias, 1e-5, saved_mean,
                                      saved_inv_var));
  DNN(cudnnBatchNormalizationForwardInference(handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, xb,
                                              x, yb, channel, scale, bias, mean, var, 1e-5));

  // Refused, and no kernel sent: y of other dimensions, no handle, a running mean without its
  // variance, a mode that is none.
  std::printf("other_dims %d\n",
              static_cast<int>(cudnnBatchNormalizationForwardTraining(
                  handle, training, &one, &zero, x, xb, other, yb, channel, scale, bias, 0.1, mean,
                  var, 1e-5, saved_mean, saved_inv_var)));
  std::printf("no_handle %d\n", static_cast<int>(cudnnBatchNormalizationForwardInference(
                                    nullptr, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, xb, x, yb,
                                    channel, scale, bias, mean, var, 1e-5)));
  std::printf("unpaired %d\n", static_cast<int>(cudnnBatchNormalizationForwardTraining(
                                   handle, training, &one, &zero, x, xb, x, yb, channel, scale,
                                   bias, 0.1, mean, nullptr, 1e-5, saved_mean, saved_inv_var)));
  std::printf("bad_mode %d\n",
              static_cast<int>(cudnnBatchNormalizationBackward(
                  handle, static_cast<cudnnBatchNormMode_t>(7), &one, &zero, &one, &zero, x, xb, x,
                  dyb, x, dxb, channel, scale, dscale, dbias, 1e-5, saved_mean, saved_inv_var)));

  CHECK(cudaStreamSynchronize(stream));
  std::vector<float> back(C, -1.0f);
  CHECK(cudaMemcpy(back.data(), var, per_channel, cudaMemcpyDeviceToHost));
  std::printf("running_var %g\n", back[0]);
  std::printf("done\n");
  return 0;
}
