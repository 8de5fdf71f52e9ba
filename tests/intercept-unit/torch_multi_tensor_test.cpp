// multi_tensor_apply kernels (torch_multi_tensor.hpp): the functors' list traffic from real
// kernel names, and element counts read from metadata built in the test's own copies of
// PyTorch's structs (MultiTensorApply.cuh), for both builds' array sizes, so the compiler, not
// the decoder's offset arithmetic, places every field.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "torch_kernel_args.hpp"
#include "torch_kernel_name.hpp"
#include "torch_multi_tensor.hpp"

using namespace phantora::shim;

namespace {

// ---- names as torch 2.15 (CUDA 13 wheel) registers them, demangled --------------------------

constexpr const char* kLpNorm =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::LpNormFunctor<float, "
    "(at::native::NormType)2, float, 1, 1, 0>, float*, long const*>(at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::LpNormFunctor<float, "
    "(at::native::NormType)2, float, 1, 1, 0>, float*, long const*)";
constexpr const char* kFusedAdamW =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous "
    "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float const*, "
    "double, double, double, double, double, bool, float const*, float "
    "const*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, "
    "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, "
    "false>, float const*, double, double, double, double, double, bool, float const*, float "
    "const*)";
constexpr const char* kCopyFloatToBf16 =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::CopyFunctor<c10::BFloat16, float, 2, 1, 1>, at::native::Copy<c10::BFloat16, "
    "float> >(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::CopyFunctor<c10::BFloat16, float, 2, 1, 1>, at::native::Copy<c10::BFloat16, "
    "float>)";
constexpr const char* kUnaryBf16 =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::UnaryOpFunctor<c10::BFloat16, 2, 1, 1>, at::native::Copy<c10::BFloat16, "
    "c10::BFloat16> >(at::native::(anonymous namespace)::TensorListMetadata<2>, "
    "at::native::(anonymous namespace)::UnaryOpFunctor<c10::BFloat16, 2, 1, 1>, "
    "at::native::Copy<c10::BFloat16, c10::BFloat16>)";
constexpr const char* kMulScalarTensor =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float*, "
    "float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float*, "
    "float)";
constexpr const char* kAddScalarList =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListScalarListMetadata<float, 1>, at::native::(anonymous "
    "namespace)::BinaryOpScalarListFunctor<float, 1, 1, 0>, std::plus<float> "
    ">(at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 1>, "
    "at::native::(anonymous namespace)::BinaryOpScalarListFunctor<float, 1, 1, 0>, "
    "std::plus<float>)";
constexpr const char* kUnknownFunctor =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::SomeNewFunctor<float>"
    " >(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous "
    "namespace)::SomeNewFunctor<float>)";

// ---- PyTorch's metadata structs, with the array sizes of a build as parameters ---------------

template <int n, int T, int B, typename Index>
struct TensorListMetadata {
  const void* addresses[n][T];
  int64_t numel_for_tensor[T];
  Index block_to_tensor[B];
  int32_t block_to_chunk[B];
  int32_t start_tensor_this_launch;
};
template <int n, int T, int B, typename Index>
struct FusedOptimizerTensorListMetadata {
  const void* addresses[n][T];
  int64_t numel_for_tensor[T];
  const void* state_steps_addresses[T];
  Index block_to_tensor[B];
  int32_t block_to_chunk[B];
  int32_t start_tensor_this_launch;
};
template <typename S, int n, int T, int B, typename Index>
struct TensorListScalarListMetadata {
  const void* addresses[n][T];
  int64_t numel_for_tensor[T];
  S scalar_vals[T];
  Index block_to_tensor[B];
  int32_t block_to_chunk[B];
};

constexpr MultiTensorLimits kCuda13{true};
constexpr MultiTensorLimits kCuda12{false};

// Fills `m` as multi_tensor_apply does for tensors of `numels` elements from their first
// chunk on; returns the number of blocks (one per chunk of 65,536 elements).
template <typename M>
uint32_t fill(M& m, std::initializer_list<int64_t> numels) {
  uint32_t block = 0;
  int t = 0;
  for (const int64_t numel : numels) {
    m.numel_for_tensor[t] = numel;
    for (int64_t c = 0; c * 65536 < numel; ++c) {
      m.block_to_tensor[block] =
          static_cast<std::remove_reference_t<decltype(m.block_to_tensor[0])>>(t);
      m.block_to_chunk[block] = static_cast<int32_t>(c);
      ++block;
    }
    ++t;
  }
  return block;
}

TorchKernel classify(const char* name) {
  return classify_torch_kernel(name);
}

TEST(TorchMultiTensor, FunctorsSayWhichListsAreReadAndWritten) {
  struct Case {
    const char* name;
    MultiTensorMetadata metadata;
    int depth, read, written;
  };
  const Case cases[] = {
      // clip_grad_norm_'s _foreach_norm: reads the gradients (fp32), writes per-block partials.
      {kLpNorm, MultiTensorMetadata::kTensorList, 1, 4, 0},
      // fused AdamW: param, grad, exp_avg, exp_avg_sq read; all but grad written.
      {kFusedAdamW, MultiTensorMetadata::kFusedOptimizer, 4, 16, 12},
      // _foreach_copy_ fp32 -> bf16 (FSDP2's mixed-precision parameter copy).
      {kCopyFloatToBf16, MultiTensorMetadata::kTensorList, 2, 4, 2},
      {kUnaryBf16, MultiTensorMetadata::kTensorList, 2, 2, 2},
      // in place: the one list is read and written.
      {kMulScalarTensor, MultiTensorMetadata::kTensorList, 1, 4, 4},
      {kAddScalarList, MultiTensorMetadata::kScalarList, 1, 4, 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const TorchKernel k = classify(c.name);
    ASSERT_EQ(k.family, TorchFamily::kMultiTensor);
    EXPECT_EQ(k.multi_tensor.metadata, c.metadata);
    EXPECT_EQ(k.multi_tensor.depth, c.depth);
    EXPECT_EQ(k.multi_tensor.read_bytes_per_element, c.read);
    EXPECT_EQ(k.multi_tensor.written_bytes_per_element, c.written);
  }
  EXPECT_EQ(classify(kUnknownFunctor).family, TorchFamily::kUnknown);
}

TEST(TorchMultiTensor, ElementsFromTheMetadataOfBothBuilds) {
  const TorchKernel copy = classify(kCopyFloatToBf16);
  // 100,000 elements: chunks of 65,536 and 34,464; then a 10-element tensor: 100,010.
  auto large = std::make_unique<TensorListMetadata<2, 448, 2240, uint16_t>>();
  const uint32_t blocks = fill(*large, {100000, 10});
  ASSERT_EQ(blocks, 3u);
  EXPECT_EQ(multi_tensor_elements(copy.multi_tensor, kCuda13, large.get(), blocks), 100010u);
  auto small = std::make_unique<TensorListMetadata<2, 64, 320, uint8_t>>();
  fill(*small, {100000, 10});
  EXPECT_EQ(multi_tensor_elements(copy.multi_tensor, kCuda12, small.get(), blocks), 100010u);

  // The fused optimizer's step pointers and the scalar list sit between the counts and the
  // block map.
  const TorchKernel adam = classify(kFusedAdamW);
  auto fused = std::make_unique<FusedOptimizerTensorListMetadata<4, 252, 2240, uint16_t>>();
  const uint32_t adam_blocks = fill(*fused, {131072, 4096, 1});
  EXPECT_EQ(multi_tensor_elements(adam.multi_tensor, kCuda13, fused.get(), adam_blocks),
            131072u + 4096u + 1u);
  const TorchKernel scalars = classify(kAddScalarList);
  auto list = std::make_unique<TensorListScalarListMetadata<float, 1, 96, 320, uint8_t>>();
  const uint32_t list_blocks = fill(*list, {70000, 3});
  EXPECT_EQ(multi_tensor_elements(scalars.multi_tensor, kCuda12, list.get(), list_blocks), 70003u);
}

TEST(TorchMultiTensor, LaunchContinuingATensorCountsOnlyItsChunks) {
  // The previous launch filled its blocks mid-tensor: this one starts at chunk 3 of a
  // 200,000-element tensor (196,608 elements done), so it walks the last 3,392.
  const TorchKernel copy = classify(kCopyFloatToBf16);
  auto m = std::make_unique<TensorListMetadata<2, 448, 2240, uint16_t>>();
  m->numel_for_tensor[0] = 200000;
  m->block_to_tensor[0] = 0;
  m->block_to_chunk[0] = 3;
  EXPECT_EQ(multi_tensor_elements(copy.multi_tensor, kCuda13, m.get(), 1), 3392u);
}

TEST(TorchMultiTensor, ImplausibleMetadataIsNotPriced) {
  const TorchKernel copy = classify(kCopyFloatToBf16);
  auto m = std::make_unique<TensorListMetadata<2, 448, 2240, uint16_t>>();
  fill(*m, {100, 100});
  // A chunk past its tensor's end.
  m->block_to_chunk[1] = 5;
  EXPECT_FALSE(multi_tensor_elements(copy.multi_tensor, kCuda13, m.get(), 2));
  // Tensors out of order.
  fill(*m, {100, 100});
  m->block_to_tensor[0] = 1;
  m->block_to_tensor[1] = 0;
  EXPECT_FALSE(multi_tensor_elements(copy.multi_tensor, kCuda13, m.get(), 2));
  // A tensor's chunks out of order (two blocks both given chunk 0 of one tensor).
  fill(*m, {200000});
  m->block_to_chunk[1] = 0;
  EXPECT_FALSE(multi_tensor_elements(copy.multi_tensor, kCuda13, m.get(), 2));
  // A later tensor that does not start at its first chunk.
  fill(*m, {100, 100000});
  m->block_to_chunk[1] = 1;
  EXPECT_FALSE(multi_tensor_elements(copy.multi_tensor, kCuda13, m.get(), 2));
  // More blocks than the metadata has room for.
  fill(*m, {100, 100});
  EXPECT_FALSE(multi_tensor_elements(copy.multi_tensor, kCuda13, m.get(), 2241));
  EXPECT_FALSE(multi_tensor_elements(copy.multi_tensor, kCuda13, nullptr, 2));
}

TEST(TorchMultiTensor, LaunchWorkIsElementsTimesTheListsBytes) {
  TorchKernel adam = classify(kFusedAdamW);
  adam.multi_tensor_limits = kCuda13;
  auto m = std::make_unique<FusedOptimizerTensorListMetadata<4, 252, 2240, uint16_t>>();
  const uint32_t blocks = fill(*m, {131072});
  void* args[] = {m.get()};
  const auto w = launch_work(adam, args, {blocks, 1, 1});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kForeach);
  EXPECT_EQ(w->bytes_read, 131072u * 16);
  EXPECT_EQ(w->bytes_written, 131072u * 12);
}

TEST(TorchMultiTensor, MetadataBytesAreTheStructsUpToItsBlockMap) {
  // Each layout's size as the compiler lays the struct out, up to the end of block_to_chunk
  // (the trailing start_tensor_this_launch, where there is one, is not read).
  using Large2 = TensorListMetadata<2, 448, 2240, uint16_t>;
  using Small2 = TensorListMetadata<2, 64, 320, uint8_t>;
  using Fused4 = FusedOptimizerTensorListMetadata<4, 252, 2240, uint16_t>;
  using Scalars1 = TensorListScalarListMetadata<float, 1, 96, 320, uint8_t>;
  const TorchKernel copy = classify(kCopyFloatToBf16);
  EXPECT_EQ(kCuda13.metadata_bytes(copy.multi_tensor), offsetof(Large2, start_tensor_this_launch));
  EXPECT_EQ(kCuda12.metadata_bytes(copy.multi_tensor), offsetof(Small2, start_tensor_this_launch));
  const TorchKernel adam = classify(kFusedAdamW);
  EXPECT_EQ(kCuda13.metadata_bytes(adam.multi_tensor), offsetof(Fused4, start_tensor_this_launch));
  const TorchKernel scalars = classify(kAddScalarList);
  EXPECT_EQ(kCuda12.metadata_bytes(scalars.multi_tensor),
            offsetof(Scalars1, block_to_chunk) + sizeof(Scalars1::block_to_chunk));
}

// PyTorch 2.11's CUDA 13 wheel passes the 4 KB metadata, though its CUDA major says 32 KB. The
// struct sits at the end of its caller's stack, as in a Python process's main thread: here at
// the end of a mapping followed by an inaccessible page, where reading the 25 KB layout over
// it would fault. The launch is still priced, from the layout that decodes.
TEST(TorchMultiTensor, SmallMetadataInACuda13ProcessAtTheEndOfTheStack) {
  TorchKernel mul = classify(kMulScalarTensor);
  mul.multi_tensor_limits = kCuda13;
  using Small = TensorListMetadata<1, 110, 320, uint8_t>;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t mapped = (sizeof(Small) + page - 1) / page * page;
  auto* region = static_cast<uint8_t*>(
      ::mmap(nullptr, mapped + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(region, MAP_FAILED);
  ASSERT_EQ(::mprotect(region + mapped, page, PROT_NONE), 0);
  auto* m = new (region + mapped - sizeof(Small)) Small{};
  // 12 tensors of 768 x 768 (the example GPT's weights): 9 chunks each, 108 blocks.
  std::initializer_list<int64_t> numels = {589824, 589824, 589824, 589824, 589824, 589824,
                                           589824, 589824, 589824, 589824, 589824, 589824};
  const uint32_t blocks = fill(*m, numels);
  ASSERT_EQ(blocks, 108u);
  void* args[] = {m};
  const auto w = launch_work(mul, args, {blocks, 1, 1});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kForeach);
  EXPECT_EQ(w->bytes_read, 12u * 589824 * 4);
  EXPECT_EQ(w->bytes_written, 12u * 589824 * 4);
  ::munmap(region, mapped + page);
}

}  // namespace
