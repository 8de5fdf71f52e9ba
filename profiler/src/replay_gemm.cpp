// A GEMM signature without an epilogue replayed through cuBLAS's cublasGemmStridedBatchedEx on
// scratch matrices of standard normal values (random_elements.hpp says why), column-major as cuBLAS
// stores them, with the signature's types, transposes, batch and beta. Epilogues go to
// replay_gemm_lt.cpp.
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <optional>

#include "gemm_types.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "replay.hpp"

namespace phantora::profiler {
namespace {

class GemmReplay : public Replay {
 public:
  GemmReplay(const CudaApi& api, const kernels::GemmDesc& d, cudaDataType_t a, cudaDataType_t b,
             cudaDataType_t c, cublasComputeType_t compute)
      : api_(api),
        d_(d),
        a_type_(a),
        b_type_(b),
        c_type_(c),
        compute_(compute),
        a_(api, d.m * d.k * d.batch * kernels::dtype_bytes(d.a)),
        b_(api, d.k * d.n * d.batch * kernels::dtype_bytes(d.b)),
        c_(api, d.m * d.n * d.batch * kernels::dtype_bytes(d.c)) {
    fill_gemm_operands(api, d, a_, b_, c_);
    check(api.blas_create(&handle_), "cublasCreate");
    alpha_ = scalar_one(compute);
    beta_ = d.accumulate ? alpha_ : std::array<unsigned char, 8>{};
  }
  ~GemmReplay() override { api_.blas_destroy(handle_); }

  void launch(cudaStream_t stream) override {
    check(api_.blas_set_stream(handle_, stream), "cublasSetStream");
    // Column-major: op(A) is m x k, so A is m x k (lda = m) or k x m (lda = k) when transposed.
    const auto m = static_cast<int>(d_.m), n = static_cast<int>(d_.n), k = static_cast<int>(d_.k);
    const int lda = d_.trans_a ? k : m;
    const int ldb = d_.trans_b ? n : k;
    check(api_.gemm_strided_batched_ex(handle_, d_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                       d_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                                       alpha_.data(), a_.get(), a_type_, lda,
                                       static_cast<long long>(d_.m * d_.k), b_.get(), b_type_, ldb,
                                       static_cast<long long>(d_.k * d_.n), beta_.data(), c_.get(),
                                       c_type_, m, static_cast<long long>(d_.m * d_.n),
                                       static_cast<int>(d_.batch), compute_, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  }

 private:
  const CudaApi& api_;
  kernels::GemmDesc d_;
  cudaDataType_t a_type_, b_type_, c_type_;
  cublasComputeType_t compute_;
  DeviceBuffer a_, b_, c_;
  cublasHandle_t handle_ = nullptr;
  std::array<unsigned char, 8> alpha_{}, beta_{};
};

}  // namespace

ReplayChoice make_gemm_replay(const CudaApi& api, std::string_view signature) {
  const auto d = kernels::parse_gemm_signature(signature);
  if (!d) return {nullptr, "not a canonical GEMM signature"};
  if (d->epilogue != "none") return make_gemm_lt_replay(api, *d);
  const auto a = data_type(d->a), b = data_type(d->b), c = data_type(d->c);
  const auto compute = compute_type(d->compute);
  if (!a || !b || !c || !compute) {
    return {nullptr, "FP8 inputs: their scale descriptors are not in the signature"};
  }
  constexpr uint64_t kIntMax = 0x7fffffff;  // cuBLAS takes int dimensions
  if (d->m > kIntMax || d->n > kIntMax || d->k > kIntMax || d->batch > kIntMax) {
    return {nullptr, "a dimension exceeds cuBLAS's int range"};
  }
  return {std::make_unique<GemmReplay>(api, *d, *a, *b, *c, compute->first), {}};
}

}  // namespace phantora::profiler
