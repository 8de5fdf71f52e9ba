// llm.c's kernels (llmc_kernels.hpp): the mangled names train_gpt2cu registers when built at
// karpathy/llm.c commit a0d5dbb (bf16), launched as its launchers launch them for GPT-2 124M
// (B = 64, T = 1024, C = 768, V = 50,257 padded to 50,304) on an A100 (108 SMs), and the bytes
// worked out by hand from what each kernel's source reads and writes.
#include "llmc_kernels.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "torch_kernel_name.hpp"

using namespace phantora::shim;

namespace {

constexpr uint64_t kB = 64, kT = 1024, kC = 768, kV = 50257, kP = 50304;
constexpr uint64_t kRows = kB * kT;

std::optional<LlmcKernel> from_mangled(const char* mangled) {
  return classify_llmc(demangle(mangled));
}

// The launch's `void** args`: one pointer per parameter, each at a value of its own.
struct Args {
  std::vector<int32_t> ints = std::vector<int32_t>(16, 0);
  std::vector<uint64_t> longs = std::vector<uint64_t>(16, 0);
  std::vector<void*> slots = std::vector<void*>(16, nullptr);
  void set_int(size_t at, int32_t v) { ints[at] = v, slots[at] = &ints[at]; }
  void set_long(size_t at, uint64_t v) { longs[at] = v, slots[at] = &longs[at]; }
  void* const* get() const { return slots.data(); }
};

TEST(LlmcKernels, GeluForwardMovesOneVectorInAndOutPerThread) {
  const auto k = from_mangled("_Z20gelu_forward_kernel2P13__nv_bfloat16PKS_");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kind, LlmcKind::kVectorMap);
  // gelu_forward(N = B·T·4C): block 512, grid N / (512 · 8): 8 bf16 per thread.
  const uint64_t n = kRows * 4 * kC;
  Args a;
  const auto w = llmc_work(*k, a.get(), {static_cast<uint32_t>(n / 4096), 1, 1}, {512, 1, 1});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes_read, n * 2);
  EXPECT_EQ(w->bytes_written, n * 2);
}

TEST(LlmcKernels, GeluBackwardReadsTheInputAndTheGradient) {
  const auto k = from_mangled("_Z20gelu_backward_kernelP13__nv_bfloat16PKS_S2_");
  ASSERT_TRUE(k);
  const uint64_t n = kRows * 4 * kC;  // block 128, grid N / (128 · 8)
  Args a;
  const auto w = llmc_work(*k, a.get(), {static_cast<uint32_t>(n / 1024), 1, 1}, {128, 1, 1});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes_read, 2 * n * 2);
  EXPECT_EQ(w->bytes_written, n * 2);
}

TEST(LlmcKernels, FusedResidualWritesTheSumAndItsNormalizedRow) {
  const auto k =
      from_mangled("_Z30fused_residual_forward_kernel5P13__nv_bfloat16S0_S0_S0_PKS_S2_S2_S2_ii");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->work, phantora::wire::WorkKind::kNorm);
  Args a;
  a.set_int(8, static_cast<int32_t>(kRows));
  a.set_int(9, static_cast<int32_t>(kC));
  const auto w = llmc_work(*k, a.get(), {static_cast<uint32_t>(kRows / 8), 1, 1}, {32, 8, 1});
  ASSERT_TRUE(w);
  // inp1, inp2 (2 × rows × C bf16), weight and bias (2 × C); residual and normed, mean, rstd.
  EXPECT_EQ(w->bytes_read, 2 * kRows * kC * 2 + 2 * kC * 2);
  EXPECT_EQ(w->bytes_written, 2 * kRows * kC * 2 + 2 * kRows * 2);
}

TEST(LlmcKernels, ClassifierReadsTheLogitsOnceAndOverwritesThemWithGradients) {
  const auto k =
      from_mangled("_Z24fused_classifier_kernel5ILb1ELb0EEvP13__nv_bfloat16S1_S1_fPKiiiii");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->flags, 1);  // <WriteDLogits = true, WriteProbs = false>
  Args a;
  a.set_int(5, static_cast<int32_t>(kB));
  a.set_int(6, static_cast<int32_t>(kT));
  a.set_int(7, static_cast<int32_t>(kV));
  a.set_int(8, static_cast<int32_t>(kP));
  const auto w = llmc_work(*k, a.get(), {static_cast<uint32_t>(kRows), 1, 1}, {1024, 1, 1});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes_read, kRows * kV * 2 + kRows * 4);     // logits, int targets
  EXPECT_EQ(w->bytes_written, kRows * 2 + kRows * kV * 2);  // losses, gradients
}

TEST(LlmcKernels, AdamWRewritesTheMasterCopyWhenThereIsOne) {
  const auto k = from_mangled("_Z13adamw_kernel3I13__nv_bfloat16S0_EvPT_PfPT0_S3_S3_mffffffffj");
  ASSERT_TRUE(k);
  const uint64_t n = 124475904 / 8;  // one rank's ZeRO-1 shard of GPT-2 124M (padded vocab)
  Args a;
  a.set_long(5, n);
  float master_copy = 0;
  a.set_long(1, reinterpret_cast<uint64_t>(&master_copy));
  const auto with_master =
      llmc_work(*k, a.get(), {static_cast<uint32_t>(n / 512 + 1), 1, 1}, {512, 1, 1});
  ASSERT_TRUE(with_master);
  // bf16 grad, fp32 m and v, fp32 master read; bf16 param, m, v, master written.
  EXPECT_EQ(with_master->bytes_read, n * (2 + 4 + 4 + 4));
  EXPECT_EQ(with_master->bytes_written, n * (2 + 4 + 4 + 4));
  a.set_long(1, 0);  // no master weights (-w 0): the old value is the bf16 parameter
  const auto without = llmc_work(*k, a.get(), {1, 1, 1}, {512, 1, 1});
  ASSERT_TRUE(without);
  EXPECT_EQ(without->bytes_read, n * (2 + 4 + 4 + 2));
  EXPECT_EQ(without->bytes_written, n * (2 + 4 + 4));
}

TEST(LlmcKernels, LayernormBackwardAddsIntoTheResidualGradient) {
  const auto k =
      from_mangled("_Z27layernorm_backward_kernel10P13__nv_bfloat16S0_S0_PfPKS_S3_S3_S3_S3_iii");
  ASSERT_TRUE(k);
  Args a;
  a.set_int(9, static_cast<int32_t>(kB));
  a.set_int(10, static_cast<int32_t>(kT));
  a.set_int(11, static_cast<int32_t>(kC));
  const uint32_t blocks = 2 * 108;  // blocks_per_sm × SMs
  const auto w = llmc_work(*k, a.get(), {blocks, 1, 1}, {512, 1, 1});
  ASSERT_TRUE(w);
  const uint64_t scratch = uint64_t{blocks} * 2 * kC * 4;
  // dout, inp and dinp (+=) per row, mean and rstd; weight, dweight, dbias; the scratch back.
  EXPECT_EQ(w->bytes_read, 3 * kRows * kC * 2 + 2 * kRows * 2 + 3 * kC * 2 + scratch);
  EXPECT_EQ(w->bytes_written, kRows * kC * 2 + 2 * kC * 2 + scratch);
}

TEST(LlmcKernels, BiasGradientGoesToAnAuxiliaryRowPerGridRow) {
  const auto aux = from_mangled(
      "_Z28matmul_backward_bias_kernel9IfLb1EEvPT_PK13__nv_bfloat16iiiSt17integral_"
      "constantIbXT0_EE");
  ASSERT_TRUE(aux);
  EXPECT_EQ(aux->flags, 1);
  Args a;
  a.set_int(2, static_cast<int32_t>(kB));
  a.set_int(3, static_cast<int32_t>(kT));
  a.set_int(4, static_cast<int32_t>(4 * kC));
  const auto w = llmc_work(*aux, a.get(), {48, 4, 1}, {4, 8, 8});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes_read, kRows * 4 * kC * 2);
  EXPECT_EQ(w->bytes_written, 4 * 4 * kC * 4);  // 4 grid rows of OC fp32 partial sums
}

TEST(LlmcKernels, OtherVersionsAndOtherProgramsAreNotMatched) {
  // llm.c's later layernorm (kernel6) and a gelu with another parameter list: not the layouts
  // read, so they stay default-priced and listed by name.
  EXPECT_FALSE(
      classify_llmc("layernorm_forward_kernel6(__nv_bfloat16*, float*, float*, "
                    "__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16 const*, "
                    "int, int)"));
  EXPECT_FALSE(classify_llmc("gelu_forward_kernel2(__nv_bfloat16*, __nv_bfloat16 const*, int)"));
  EXPECT_FALSE(classify_llmc("busy(float*, int)"));
  // The same name in a namespace is another program's kernel.
  EXPECT_FALSE(classify_llmc("ns::gelu_forward_kernel2(__nv_bfloat16*, __nv_bfloat16 const*)"));
}

TEST(LlmcKernels, ANegativeSizeIsNotPriced) {
  const auto k = from_mangled("_Z20copy_and_cast_kernelIf13__nv_bfloat16EvPT_PKT0_m");
  ASSERT_TRUE(k);
  Args a;
  a.set_long(2, static_cast<uint64_t>(-5));
  EXPECT_FALSE(llmc_work(*k, a.get(), {1, 1, 1}, {512, 1, 1}));
  a.set_long(2, 1000);
  const auto w = llmc_work(*k, a.get(), {2, 1, 1}, {512, 1, 1});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes_read, 2000u);     // bf16 in
  EXPECT_EQ(w->bytes_written, 4000u);  // fp32 out
}

}  // namespace
