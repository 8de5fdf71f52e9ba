// torch._grouped_mm's set-up launch read as the grouped GEMM it describes
// (intercept/src/torch_grouped_mm.hpp): parameter layouts of GroupMMCommon.cuh, values by hand.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "torch_grouped_mm.hpp"
#include "torch_kernel_name.hpp"

using namespace phantora::shim;
using phantora::wire::DataType;

namespace {

// As torch 2.15's libtorch_cuda names it (demangled), bf16 in and out.
const std::string kSetup =
    "void at::cuda::detail::prepare_grouped_gemm_data<cutlass::bfloat16_t, cutlass::bfloat16_t, "
    "cutlass::bfloat16_t, float, cute::tuple<int, int, int>, cute::tuple<cute::C<1>, long, "
    "cute::C<0> >, cute::tuple<cute::C<1>, long, cute::C<0> >, cute::tuple<long, cute::C<1>, "
    "cute::C<0> > >(cutlass::bfloat16_t*, cutlass::bfloat16_t*, cutlass::bfloat16_t*, float*, "
    "float*, cutlass::bfloat16_t**, cutlass::bfloat16_t**, cutlass::bfloat16_t**, float**, "
    "float**, cute::tuple<int, int, int>*, cute::tuple<cute::C<1>, long, cute::C<0> >*, "
    "cute::tuple<cute::C<1>, long, cute::C<0> >*, cute::tuple<long, cute::C<1>, cute::C<0> >*, "
    "int const*, int, int, int, std::array<long, 3ul>, std::array<long, 3ul>, std::array<long, "
    "3ul>, std::array<long, 3ul>, std::array<long, 3ul>, long, long, bool, bool)";

// The 27 parameters of one set-up launch: M, N, K, both tensors' sizes and layouts; the
// pointers and strides are not read.
struct SetupArgs {
  void* ptr = nullptr;
  int32_t m, n, k;
  std::array<int64_t, 3> stride{}, shape_a{}, shape_b{};
  int64_t scale_stride = 0;
  bool a_row_major = true, b_row_major = false;
  std::array<void*, 27> args{};
  SetupArgs(int32_t m_, int32_t n_, int32_t k_, std::array<int64_t, 3> a, std::array<int64_t, 3> b)
      : m(m_), n(n_), k(k_), shape_a(a), shape_b(b) {
    for (int i = 0; i < 15; ++i) args[i] = &ptr;
    args[15] = &m, args[16] = &n, args[17] = &k;
    args[18] = args[19] = args[20] = &stride;
    args[21] = &shape_a, args[22] = &shape_b;
    args[23] = args[24] = &scale_stride;
    args[25] = &a_row_major, args[26] = &b_row_major;
  }
};

}  // namespace

TEST(TorchGroupedMm, SetUpKernelNamesItsTypesAndLayout) {
  const TorchKernel k = classify_torch_kernel(kSetup);
  ASSERT_TRUE(k.grouped_mm_setup.has_value());
  EXPECT_EQ(k.grouped_mm_setup->a, DataType::kBF16);
  EXPECT_EQ(k.grouped_mm_setup->b, DataType::kBF16);
  EXPECT_EQ(k.grouped_mm_setup->out, DataType::kBF16);
  // The set-up launch itself stays a constant-cost kernel.
  EXPECT_EQ(k.family, TorchFamily::kCounted);
  // An older release passed no sizes (25 parameters): not read rather than misread.
  std::string older = kSetup;
  const std::string sizes = ", std::array<long, 3ul>, std::array<long, 3ul>, long, long";
  older.replace(older.find(sizes), sizes.size(), ", long, long");
  EXPECT_FALSE(classify_torch_kernel(older).grouped_mm_setup.has_value());
  EXPECT_FALSE(classify_torch_kernel("void at::native::other<float>(float*, int)")
                   .grouped_mm_setup.has_value());
}

TEST(TorchGroupedMm, TheVaryingDimensionIsSplitEvenlyOverTheGroups) {
  const GroupedMmSetup bf16{DataType::kBF16, DataType::kBF16, DataType::kBF16};
  // MoE forward: tokens (2-D A, 16384 x 512) by expert weights (3-D B, 8 x 512 x 2048): M varies
  // by expert, 16384 / 8 = 2048 rows each.
  SetupArgs fwd(-1, 2048, 512, {16384, 512, 0}, {8, 512, 2048});
  std::optional<GroupedMm> g = read_grouped_mm(bf16, fwd.args.data(), 8);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->split, 'm');
  EXPECT_EQ(g->split_total, 16384);
  EXPECT_EQ(g->groups, 8);
  EXPECT_EQ(g->m, 2048);
  EXPECT_EQ(g->n, 2048);
  EXPECT_EQ(g->k, 512);
  // Not a multiple: 1000 rows over 3 groups are priced as 3 of ceil(1000 / 3) = 334.
  SetupArgs odd(-1, 64, 64, {1000, 64, 0}, {3, 64, 64});
  g = read_grouped_mm(bf16, odd.args.data(), 3);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->m, 334);
  // Weight gradient: both 2-D, K (the tokens) varies: A is 512 x 16000, 2000 per group.
  SetupArgs wgrad(512, 2048, -1, {512, 16000, 0}, {16000, 2048, 0});
  g = read_grouped_mm(bf16, wgrad.args.data(), 8);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->split, 'k');
  EXPECT_EQ(g->k, 2000);
  EXPECT_EQ(g->m, 512);
  // 3-D A and 2-D B: N varies, B's columns (4096) split four ways.
  SetupArgs cols(128, -1, 256, {4, 128, 256}, {256, 4096, 0});
  g = read_grouped_mm(bf16, cols.args.data(), 4);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->split, 'n');
  EXPECT_EQ(g->n, 1024);
  // All 3-D: a plain batch, nothing split.
  SetupArgs batch(256, 512, 1024, {6, 256, 1024}, {6, 1024, 512});
  g = read_grouped_mm(bf16, batch.args.data(), 6);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->split, 0);
  EXPECT_EQ(g->m * g->n * g->k * g->groups, int64_t{256} * 512 * 1024 * 6);
}

TEST(TorchGroupedMm, ImplausibleLaunchesAreNotRead) {
  const GroupedMmSetup bf16{DataType::kBF16, DataType::kBF16, DataType::kBF16};
  SetupArgs empty(-1, 64, 64, {0, 64, 0}, {2, 64, 64});
  EXPECT_FALSE(read_grouped_mm(bf16, empty.args.data(), 2).has_value());
  SetupArgs fine(64, 64, 64, {2, 64, 64}, {2, 64, 64});
  EXPECT_FALSE(read_grouped_mm(bf16, fine.args.data(), 0).has_value());
  EXPECT_FALSE(read_grouped_mm(bf16, nullptr, 2).has_value());
  SetupArgs zero_n(64, 0, 64, {2, 64, 64}, {2, 64, 0});
  EXPECT_FALSE(read_grouped_mm(bf16, zero_n.args.data(), 2).has_value());
}

TEST(TorchGroupedMm, CutlassGroupedKernelsAreKnownByTheirMangledName) {
  EXPECT_TRUE(is_grouped_gemm_kernel(
      "_ZN7cutlass13device_kernelIN2at4cuda6detail25enable_3x_kernel_for_sm9xINS_4gemm6kernel13"
      "GemmUniversalINS5_17GroupProblemShapeIN4cute5tupleIJiiiEEEEENS5_10collective13"
      "CollectiveMmaEEEEvNT_6ParamsE"));
  // A CUTLASS GEMM over one problem, and a PyTorch kernel, are not.
  EXPECT_FALSE(is_grouped_gemm_kernel(
      "_ZN7cutlass13device_kernelIN2at4cuda6detail25enable_3x_kernel_for_sm9xINS_4gemm6kernel13"
      "GemmUniversalIN4cute5tupleIJiiiiEEEEEEEvNT_6ParamsE"));
  EXPECT_FALSE(is_grouped_gemm_kernel("_ZN2at6native13reduce_kernelILi512ELi1EEEvT1_"));
}
