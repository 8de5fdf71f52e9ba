// cuDNN's legacy tensor descriptors as the shim keeps them (their elements, bytes and span, and
// the arguments their setters refuse), and the bytes each batch-normalization pass moves, by
// hand from the tensors' sizes.
#include <gtest/gtest.h>

#include <climits>
#include <optional>
#include <utility>
#include <vector>

#include "cudnn_batch_norm_work.hpp"
#include "cudnn_tensor.hpp"

namespace {

using phantora::shim::BatchNormBackward;
using phantora::shim::BatchNormForward;
using phantora::shim::BatchNormTraffic;
using phantora::shim::CudnnTensor;

CudnnTensor packed(cudnnTensorFormat_t format, cudnnDataType_t type, std::vector<int> dims) {
  CudnnTensor t;
  EXPECT_EQ(phantora::shim::set_cudnn_tensor_packed(t, format, type, static_cast<int>(dims.size()),
                                                    dims.data()),
            CUDNN_STATUS_SUCCESS);
  return t;
}

// --- tensor descriptors --------------------------------------------------------------------

TEST(CudnnTensor, PackedNchwStridesAndBytes) {
  const CudnnTensor t = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {8, 16, 32, 32});
  EXPECT_EQ(t.strides, (std::vector<int>{16384, 1024, 32, 1}));
  EXPECT_EQ(t.elements(), 131072u);
  EXPECT_EQ(t.bytes(), 524288u);
  EXPECT_EQ(t.span_bytes(), 524288u);
}

TEST(CudnnTensor, PackedNhwcStrides) {
  // Channels innermost, then W, H, then the batch.
  const CudnnTensor t = packed(CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, {8, 16, 32, 32});
  EXPECT_EQ(t.strides, (std::vector<int>{16384, 1, 512, 16}));
  EXPECT_EQ(t.bytes(), 262144u);
  EXPECT_EQ(t.span_bytes(), 262144u);
  // 5-d: N, C, D, H, W with C innermost, then W, H, D.
  const CudnnTensor v = packed(CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, {2, 3, 4, 5, 6});
  EXPECT_EQ(v.strides, (std::vector<int>{360, 1, 90, 18, 3}));
  EXPECT_EQ(v.bytes(), 720u * 2);
}

TEST(CudnnTensor, ElementBytesByType) {
  for (auto [type, bytes] : {std::pair{CUDNN_DATA_FLOAT, 4u}, std::pair{CUDNN_DATA_HALF, 2u},
                             std::pair{CUDNN_DATA_BFLOAT16, 2u}, std::pair{CUDNN_DATA_DOUBLE, 8u},
                             std::pair{CUDNN_DATA_INT8, 1u}, std::pair{CUDNN_DATA_FP8_E4M3, 1u},
                             std::pair{CUDNN_DATA_INT64, 8u}}) {
    EXPECT_EQ(phantora::shim::cudnn_data_type_bytes(type), bytes) << type;
    EXPECT_EQ(packed(CUDNN_TENSOR_NCHW, type, {2, 3, 4, 5}).bytes(), 120u * bytes) << type;
  }
  EXPECT_EQ(phantora::shim::cudnn_data_type_bytes(CUDNN_DATA_INT8x4), 0u);
  EXPECT_EQ(phantora::shim::cudnn_data_type_bytes(CUDNN_DATA_FP4_E2M1), 0u);
}

// A strided view (every other row of PyTorch's x[:, :, ::2]): the elements it holds move, the
// memory from its first element to its last is its span.
TEST(CudnnTensor, StridedSpan) {
  CudnnTensor t;
  const int dims[] = {2, 3, 4, 5};
  const int strides[] = {120, 40, 10, 1};
  ASSERT_EQ(phantora::shim::set_cudnn_tensor(t, CUDNN_DATA_BFLOAT16, 4, dims, strides),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(t.elements(), 120u);
  EXPECT_EQ(t.bytes(), 240u);
  // Last element at 120 + 2 * 40 + 3 * 10 + 4 = 234.
  EXPECT_EQ(t.span_bytes(), 235u * 2);
}

TEST(CudnnTensor, BadArgumentsLeaveTheDescriptorAsItWas) {
  CudnnTensor t = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {1, 2, 3, 4});
  const CudnnTensor before = t;
  const int dims[] = {1, 2, 3, 4, 1, 1, 1, 1, 1};
  const int strides[] = {24, 12, 4, 1, 1, 1, 1, 1, 1};
  const int zero_dim[] = {1, 0, 3, 4};
  const int zero_stride[] = {24, 12, 0, 1};
  using phantora::shim::set_cudnn_tensor;
  using phantora::shim::set_cudnn_tensor_packed;
  EXPECT_EQ(set_cudnn_tensor(t, CUDNN_DATA_FLOAT, 0, dims, strides), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(set_cudnn_tensor(t, CUDNN_DATA_FLOAT, 4, nullptr, strides), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(set_cudnn_tensor(t, CUDNN_DATA_FLOAT, 4, dims, nullptr), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(set_cudnn_tensor(t, CUDNN_DATA_FLOAT, 4, zero_dim, strides), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(set_cudnn_tensor(t, CUDNN_DATA_FLOAT, 4, dims, zero_stride), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(set_cudnn_tensor(t, static_cast<cudnnDataType_t>(99), 4, dims, strides),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(set_cudnn_tensor(t, CUDNN_DATA_FLOAT, CUDNN_DIM_MAX + 1, dims, strides),
            CUDNN_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(set_cudnn_tensor(t, CUDNN_DATA_INT8x4, 4, dims, strides), CUDNN_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(set_cudnn_tensor_packed(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8, 4, dims),
            CUDNN_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(
      set_cudnn_tensor_packed(t, static_cast<cudnnTensorFormat_t>(7), CUDNN_DATA_FLOAT, 4, dims),
      CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(set_cudnn_tensor_packed(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, zero_dim),
            CUDNN_STATUS_BAD_PARAM);
  // Packed strides past INT_MAX cannot be told in ints.
  const int huge[] = {4, INT_MAX / 2, 2, 2};
  EXPECT_EQ(set_cudnn_tensor_packed(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, huge),
            CUDNN_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(t.dims, before.dims);
  EXPECT_EQ(t.strides, before.strides);
  EXPECT_EQ(t.type, before.type);
}

// --- batch normalization -------------------------------------------------------------------

TEST(CudnnBatchNorm, DerivedChannelTensor) {
  using phantora::shim::derive_batch_norm_tensor;
  const CudnnTensor x = packed(CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, {8, 16, 32, 32});
  CudnnTensor c;
  ASSERT_EQ(derive_batch_norm_tensor(c, x, /*per_activation=*/false), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(c.dims, (std::vector<int>{1, 16, 1, 1}));
  EXPECT_EQ(c.type, CUDNN_DATA_FLOAT);  // half inputs keep float statistics
  EXPECT_EQ(c.bytes(), 64u);
  ASSERT_EQ(derive_batch_norm_tensor(c, x, /*per_activation=*/true), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(c.dims, (std::vector<int>{1, 16, 32, 32}));
  const CudnnTensor d = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_DOUBLE, {2, 4, 3, 3, 3});
  ASSERT_EQ(derive_batch_norm_tensor(c, d, false), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(c.dims, (std::vector<int>{1, 4, 1, 1, 1}));
  EXPECT_EQ(c.type, CUDNN_DATA_DOUBLE);
  EXPECT_EQ(derive_batch_norm_tensor(c, CudnnTensor{}, false), CUDNN_STATUS_BAD_PARAM);
}

TEST(CudnnBatchNorm, Modes) {
  using phantora::shim::batch_norm_per_activation;
  EXPECT_EQ(batch_norm_per_activation(CUDNN_BATCHNORM_PER_ACTIVATION), true);
  EXPECT_EQ(batch_norm_per_activation(CUDNN_BATCHNORM_SPATIAL), false);
  EXPECT_EQ(batch_norm_per_activation(CUDNN_BATCHNORM_SPATIAL_PERSISTENT), false);
  EXPECT_EQ(batch_norm_per_activation(static_cast<cudnnBatchNormMode_t>(3)), std::nullopt);
}

TEST(CudnnBatchNorm, DescriptorChecks) {
  using phantora::shim::check_batch_norm;
  const CudnnTensor x = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {8, 16, 32, 32});
  const CudnnTensor y_nhwc = packed(CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, {8, 16, 32, 32});
  const CudnnTensor other = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {8, 16, 32, 16});
  const CudnnTensor channel = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {1, 16, 1, 1});
  const CudnnTensor per_activation = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {1, 16, 32, 32});
  EXPECT_EQ(check_batch_norm(x, {&x}, channel, false), CUDNN_STATUS_SUCCESS);
  // Layouts may differ; dimensions may not.
  EXPECT_EQ(check_batch_norm(x, {&y_nhwc, nullptr}, channel, false), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(check_batch_norm(x, {&x, &other}, channel, false), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(check_batch_norm(x, {&x}, per_activation, false), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(check_batch_norm(x, {&x}, per_activation, true), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(check_batch_norm(x, {&x}, channel, true), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(check_batch_norm(x, {&x}, CudnnTensor{}, false), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(check_batch_norm(CudnnTensor{}, {}, channel, false), CUDNN_STATUS_BAD_PARAM);
  const CudnnTensor x3 = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {8, 16, 32});
  const CudnnTensor c3 = packed(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, {1, 16, 1});
  EXPECT_EQ(check_batch_norm(x3, {&x3}, c3, false), CUDNN_STATUS_NOT_SUPPORTED);
}

// x 8 x 16 x 32 x 32 fp32: 524,288 bytes; the per-channel tensors 16 floats, 64 bytes each.
TEST(CudnnBatchNorm, TrainingTraffic) {
  BatchNormForward f;
  f.x = f.y = 524288;
  f.channel = 64;
  f.running = f.saved = true;
  BatchNormTraffic t = phantora::shim::batch_norm_training_traffic(f);
  // x, scale, bias, running mean and variance read.
  EXPECT_EQ(t.read, 524288u + 4 * 64);
  // y, running mean and variance, saved mean and inverse variance written.
  EXPECT_EQ(t.written, 524288u + 4 * 64);
  // Without the running and saved statistics; with z added and y blended into.
  f.running = f.saved = false;
  f.z = 524288;
  f.blend = true;
  t = phantora::shim::batch_norm_training_traffic(f);
  EXPECT_EQ(t.read, 3 * 524288u + 2 * 64);
  EXPECT_EQ(t.written, 524288u);
}

TEST(CudnnBatchNorm, InferenceTraffic) {
  BatchNormForward f;
  f.x = f.y = 262144;  // 8 x 16 x 32 x 32 bf16
  f.channel = 64;
  const BatchNormTraffic t = phantora::shim::batch_norm_inference_traffic(f);
  EXPECT_EQ(t.read, 262144u + 4 * 64);  // x, scale, bias, estimated mean and variance
  EXPECT_EQ(t.written, 262144u);
}

TEST(CudnnBatchNorm, BackwardTraffic) {
  BatchNormBackward b;
  b.x = b.dy = b.dx = 524288;
  b.channel = 64;
  b.saved = true;
  BatchNormTraffic t = phantora::shim::batch_norm_backward_traffic(b);
  // x, dy, scale, saved mean and inverse variance read.
  EXPECT_EQ(t.read, 2 * 524288u + 3 * 64);
  // dx, scale and bias gradients written.
  EXPECT_EQ(t.written, 524288u + 2 * 64);
  // A fused activation with an added z: y and the bias read, dz written; both blends.
  b.y = b.dz = 524288;
  b.bias = b.blend_data = b.blend_params = true;
  t = phantora::shim::batch_norm_backward_traffic(b);
  EXPECT_EQ(t.read, 4 * 524288u + 6 * 64);
  EXPECT_EQ(t.written, 2 * 524288u + 2 * 64);
}

}  // namespace
