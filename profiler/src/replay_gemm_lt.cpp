// A GEMM signature with a cuBLASLt epilogue (bias, ReLU, GELU and their bias forms: what
// PyTorch's addmm and fused linear layers run) replayed with cublasLtMatmul: one matmul
// descriptor with the signature's compute type, transposes and epilogue, column-major layouts of
// the stored A, B and C (D is C), a bias vector of m elements of C's type (operands of standard
// normal values, random_elements.hpp), and cuBLASLt's own heuristic (algo = null) with a 32 MiB
// workspace.
#include <fmt/format.h>

#include <array>
#include <optional>
#include <string_view>

#include "gemm_types.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "replay.hpp"

namespace phantora::profiler {
namespace {

struct EpilogueName {
  std::string_view name;  // as GEMM signatures spell it (simcore's epilogue_name)
  cublasLtEpilogue_t value;
  bool bias;
};

constexpr std::array<EpilogueName, 5> kEpilogues{{
    {"bias", CUBLASLT_EPILOGUE_BIAS, true},
    {"relu", CUBLASLT_EPILOGUE_RELU, false},
    {"relu_bias", CUBLASLT_EPILOGUE_RELU_BIAS, true},
    {"gelu", CUBLASLT_EPILOGUE_GELU, false},
    {"gelu_bias", CUBLASLT_EPILOGUE_GELU_BIAS, true},
}};

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

class GemmLtReplay : public Replay {
 public:
  GemmLtReplay(const CudaApi& api, const kernels::GemmDesc& d, const EpilogueName& epilogue,
               cudaDataType_t a, cudaDataType_t b, cudaDataType_t c, cublasComputeType_t compute)
      : api_(api),
        a_(api, d.m * d.k * d.batch * kernels::dtype_bytes(d.a)),
        b_(api, d.k * d.n * d.batch * kernels::dtype_bytes(d.b)),
        c_(api, d.m * d.n * d.batch * kernels::dtype_bytes(d.c)),
        bias_(api, epilogue.bias ? d.m * kernels::dtype_bytes(d.c) : 0),
        workspace_(api, kWorkspaceBytes) {
    fill_gemm_operands(api, d, a_, b_, c_);
    if (epilogue.bias) fill_normal(api, bias_, d.c, d.m, 4);
    check(api.lt_create(&handle_), "cublasLtCreate");
    check(api.lt_desc_create(&desc_, compute, scale_type(compute)), "cublasLtMatmulDescCreate");
    const cublasOperation_t op_a = d.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = d.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    set(CUBLASLT_MATMUL_DESC_TRANSA, op_a);
    set(CUBLASLT_MATMUL_DESC_TRANSB, op_b);
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue.value);
    if (epilogue.bias) set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_.get());
    // Stored shapes, column-major: op(A) is m x k, so A is m x k, or k x m when transposed.
    layout_a_ = layout(a, d.trans_a ? d.k : d.m, d.trans_a ? d.m : d.k, d.batch);
    layout_b_ = layout(b, d.trans_b ? d.n : d.k, d.trans_b ? d.k : d.n, d.batch);
    layout_c_ = layout(c, d.m, d.n, d.batch);
    alpha_ = scalar_one(compute);
    beta_ = d.accumulate ? alpha_ : std::array<unsigned char, 8>{};
  }
  ~GemmLtReplay() override {
    for (cublasLtMatrixLayout_t l : {layout_a_, layout_b_, layout_c_}) {
      if (l != nullptr) api_.lt_layout_destroy(l);
    }
    if (desc_ != nullptr) api_.lt_desc_destroy(desc_);
    if (handle_ != nullptr) api_.lt_destroy(handle_);
  }

  void launch(cudaStream_t stream) override {
    check(api_.lt_matmul(handle_, desc_, alpha_.data(), a_.get(), layout_a_, b_.get(), layout_b_,
                         beta_.data(), c_.get(), layout_c_, c_.get(), layout_c_, nullptr,
                         workspace_.get(), kWorkspaceBytes, stream),
          "cublasLtMatmul");
  }

 private:
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& value) {
    check(api_.lt_desc_set(desc_, attr, &value, sizeof(value)), "cublasLtMatmulDescSetAttribute");
  }

  // rows x cols, leading dimension rows, `batch` matrices one after another.
  cublasLtMatrixLayout_t layout(cudaDataType_t type, uint64_t rows, uint64_t cols, uint64_t batch) {
    cublasLtMatrixLayout_t l = nullptr;
    check(api_.lt_layout_create(&l, type, rows, cols, static_cast<int64_t>(rows)),
          "cublasLtMatrixLayoutCreate");
    if (batch > 1) {
      const auto count = static_cast<int32_t>(batch);
      const auto stride = static_cast<int64_t>(rows * cols);
      check(api_.lt_layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "cublasLtMatrixLayoutSetAttribute");
      check(api_.lt_layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                               sizeof(stride)),
            "cublasLtMatrixLayoutSetAttribute");
    }
    return l;
  }

  const CudaApi& api_;
  DeviceBuffer a_, b_, c_, bias_, workspace_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layout_a_ = nullptr, layout_b_ = nullptr, layout_c_ = nullptr;
  std::array<unsigned char, 8> alpha_{}, beta_{};
};

}  // namespace

ReplayChoice make_gemm_lt_replay(const CudaApi& api, const kernels::GemmDesc& d) {
  const EpilogueName* epilogue = nullptr;
  for (const EpilogueName& e : kEpilogues) {
    if (e.name == d.epilogue) epilogue = &e;
  }
  if (epilogue == nullptr) {
    return {nullptr, fmt::format("cuBLASLt epilogue '{}' is not one the replay knows", d.epilogue)};
  }
  const auto a = data_type(d.a), b = data_type(d.b), c = data_type(d.c);
  const auto compute = compute_type(d.compute);
  if (!a || !b || !c || !compute) {
    return {nullptr, "FP8 inputs: their scale descriptors are not in the signature"};
  }
  return {std::make_unique<GemmLtReplay>(api, d, *epilogue, *a, *b, *c, compute->first), {}};
}

}  // namespace phantora::profiler
