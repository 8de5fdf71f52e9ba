// PyTorch kernel families: classification of demangled names, decoding of launch arguments,
// and the small-kernel results on the shadow store. Argument buffers are built from structs
// declared here after PyTorch's own parameter types (Reduce.cuh, OffsetCalculator.cuh, Shape.cu,
// the functors of BinaryAddSub / CompareKernels / Fill), so the compiler, not the decoder's
// offset arithmetic, decides where each field lies.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "shadow.hpp"
#include "small_kernels.hpp"
#include "torch_kernel_args.hpp"
#include "torch_kernel_name.hpp"

using namespace phantora::shim;

namespace {

// ---- names as the PyTorch 2.x CUDA wheels register them (demangled) -------------------------

constexpr const char* kFillLong =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, "
    "std::array<char*, 1ul>, false>(int, at::native::FillFunctor<long>, std::array<char*, 1ul>)";
// PyTorch 2.5 and earlier: c10's array type, no trailing bool.
constexpr const char* kFillIntTorch25 =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, at::detail::Array<char*, 1>)";
constexpr const char* kMulFloatTorch25 =
    "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<float, float, "
    "float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, "
    "at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
    ">, at::detail::Array<char*, 2>)";
constexpr const char* kCastFloatToBf16 =
    "void at::native::vectorized_elementwise_kernel<8, "
    "at::native::converting_copy_kernel_cuda<float, c10::BFloat16>(at::TensorIteratorBase&)::"
    "{lambda(float)#1}, std::array<char*, 2ul>, false>(int, "
    "at::native::converting_copy_kernel_cuda<float, c10::BFloat16>(at::TensorIteratorBase&)::"
    "{lambda(float)#1}, std::array<char*, 2ul>)";
constexpr const char* kMulBf16 =
    "void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, "
    "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
    "std::array<char*, 3ul>, false>(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)";
constexpr const char* kAddOnSelfLong =
    "void at::native::vectorized_elementwise_kernel<2, at::native::CUDAFunctorOnSelf_add<long>, "
    "std::array<char*, 2ul>, false>(int, at::native::CUDAFunctorOnSelf_add<long>, "
    "std::array<char*, 2ul>)";
constexpr const char* kAddUnrolledLong =
    "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<long>, "
    "std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, "
    "TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast, "
    "at::native::memory::StoreWithoutCast>(int, at::native::CUDAFunctor_add<long>, "
    "std::array<char*, 3ul>, TrivialOffsetCalculator<2, unsigned int>, "
    "TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast, "
    "at::native::memory::StoreWithoutCast)";
constexpr const char* kCompareLong =
    "void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous "
    "namespace)::CompareFunctor<long>, std::array<char*, 3ul>, false>(int, "
    "at::native::(anonymous namespace)::CompareFunctor<long>, std::array<char*, 3ul>)";
constexpr const char* kStridedMul =
    "void at::native::elementwise_kernel<128, 4, "
    "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> > "
    ">(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>"
    "(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, "
    "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > "
    ">(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})";
constexpr const char* kSumLong =
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<long, "
    "at::native::func_wrapper_t<long, at::native::sum_functor<long, long, "
    "long>::operator()(at::TensorIterator&)::{lambda(long, long)#1}>, unsigned int, long, 4, 4> "
    ">(at::native::ReduceOp<long, at::native::func_wrapper_t<long, at::native::sum_functor<long, "
    "long, long>::operator()(at::TensorIterator&)::{lambda(long, long)#1}>, unsigned int, long, "
    "4, 4>)";
constexpr const char* kMaxFloat =
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::func_wrapper_t<float, at::native::MaxNanFunctor<float> >, unsigned int, float, "
    "4, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::MaxNanFunctor<float> >, unsigned int, float, 4, 4>)";
constexpr const char* kCatLong =
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy_alignedK_contig<"
    "at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 1, 128, 1, 16>("
    "at::native::(anonymous namespace)::OpaqueType<8u>*, at::native::(anonymous "
    "namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<8u>, "
    "unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, "
    "4u>, int, unsigned int)";
constexpr const char* kCatStrided =
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
    "namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous "
    "namespace)::OpaqueType<2u>*, at::native::(anonymous "
    "namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, "
    "unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, "
    "4u>, int, unsigned int)";
constexpr const char* kSoftmaxBackward =
    "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, "
    "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float "
    "const*, long)";
constexpr const char* kLayerNorm =
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, "
    "true>(int, float, float const*, float const*, float const*, float*, float*, float*)";
constexpr const char* kFlash =
    "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, "
    "true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)";

// ---- parameter structs laid out as PyTorch declares them -------------------------------------

struct IntDivider {
  uint32_t divisor, m1, shift;
};
template <int NARGS>
struct OffsetCalculator {
  int dims;
  IntDivider sizes[25];
  uint32_t strides[25][NARGS];
};
struct ReduceConfig {
  int element_size_bytes, num_inputs, num_outputs, step_input, step_output, ctas_per_output;
  int input_mult[3], output_mult[2];
  int block_width, block_height, num_threads;
  bool vectorize_input;
  int output_vec_size;
};
struct EmptyOps {};  // func_wrapper_t over a captureless lambda, MaxNanFunctor: no state
template <typename Acc>
struct ReduceOp {
  EmptyOps ops;
  Acc ident;
  ReduceConfig config;
  OffsetCalculator<1> input_calc;
  OffsetCalculator<2> output_calc;
  const void* src;
  const char* dst[2];
  void* acc_buf;
  void* cta_buf;
  int* semaphores;
  int64_t base_idx;
  bool accumulate;
  bool final_output;
  int noutputs;
};

template <typename Acc>
ReduceOp<Acc> full_reduction(Acc ident, uint64_t src, uint64_t dst, int n, int element_size) {
  ReduceOp<Acc> op;
  std::memset(&op, 0, sizeof(op));
  op.ident = ident;
  op.config.element_size_bytes = element_size;
  op.config.num_inputs = n;
  op.config.num_outputs = 1;
  op.input_calc.dims = 1;
  op.input_calc.sizes[0].divisor = static_cast<uint32_t>(n);
  op.input_calc.strides[0][0] = static_cast<uint32_t>(element_size);  // bytes
  op.output_calc.dims = 0;
  op.src = reinterpret_cast<const void*>(src);
  op.dst[0] = reinterpret_cast<const char*>(dst);
  op.final_output = true;
  op.noutputs = 1;
  return op;
}

struct TensorSizeStride {
  uint32_t size[4], stride[4];
};
template <int N, int S>
struct CatMetadata {
  const void* input[N];
  uint32_t offset[N], dim_size[N], elements[N];
  bool contiguous[N];
  TensorSizeStride strides[S];
};

// Device addresses: any values work, the shadow store keys bytes by address.
constexpr uint64_t kBase = 0x7f0000000000;

template <typename T>
void put(uint64_t addr, std::initializer_list<T> values) {
  std::vector<T> v(values);
  ShadowStore::get().write(addr, v.data(), v.size() * sizeof(T));
}
template <typename T>
T get(uint64_t addr) {
  T v;
  ShadowStore::get().read(addr, &v, sizeof(T));
  return v;
}

TorchKernel classify(const char* name) {
  return classify_torch_kernel(name);
}

void run(const TorchKernel& k, void** args, std::array<uint32_t, 3> grid = {1, 1, 1}) {
  const auto plan = plan_small_kernel(k, args, grid);
  ASSERT_TRUE(plan.has_value());
  ASSERT_TRUE(static_cast<bool>(plan->run)) << "expected the launch to be computed";
  run_small_kernel(*plan);
}

}  // namespace

TEST(TorchKernelName, ElementwiseFamiliesAndOperandSizes) {
  const TorchKernel fill = classify(kFillLong);
  EXPECT_EQ(fill.family, TorchFamily::kVectorized);
  EXPECT_EQ(fill.operands, 1);
  EXPECT_EQ(fill.out_bytes, 8);

  const TorchKernel fill25 = classify(kFillIntTorch25);
  EXPECT_EQ(fill25.family, TorchFamily::kVectorized);
  EXPECT_EQ(fill25.operands, 1);
  EXPECT_EQ(fill25.out_bytes, 4);
  const TorchKernel mul25 = classify(kMulFloatTorch25);  // x * scalar: one tensor in, one out
  EXPECT_EQ(mul25.family, TorchFamily::kVectorized);
  EXPECT_EQ(mul25.operands, 2);
  EXPECT_EQ(mul25.in_bytes, 4);
  EXPECT_EQ(mul25.out_bytes, 4);

  // A converting copy reads the lambda's parameter type and writes the other one.
  const TorchKernel cast = classify(kCastFloatToBf16);
  EXPECT_EQ(cast.operands, 2);
  EXPECT_EQ(cast.in_type, "float");
  EXPECT_EQ(cast.out_type, "c10::BFloat16");
  EXPECT_EQ(cast.in_bytes, 4);
  EXPECT_EQ(cast.out_bytes, 2);

  const TorchKernel mul = classify(kMulBf16);
  EXPECT_EQ(mul.operands, 3);
  EXPECT_EQ(mul.in_bytes, 2);
  EXPECT_EQ(mul.out_bytes, 2);

  const TorchKernel unrolled = classify(kAddUnrolledLong);
  EXPECT_EQ(unrolled.family, TorchFamily::kUnrolled);
  EXPECT_TRUE(unrolled.unrolled_trivial);

  // Comparisons write bool whatever they compare.
  EXPECT_EQ(classify(kCompareLong).out_bytes, 1);
  EXPECT_EQ(classify(kCompareLong).in_bytes, 8);

  // The strided loop names its functor inside gpu_kernel_impl_nocast<...>.
  const TorchKernel strided = classify(kStridedMul);
  EXPECT_EQ(strided.family, TorchFamily::kStrided);
  EXPECT_EQ(strided.operands, 3);
  EXPECT_EQ(strided.in_bytes, 2);
  // A comparison of two strided int64 tensors: both read, a bool written per element.
  const TorchKernel compare = classify(
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
      "(anonymous namespace)::CompareFunctor<long> >(at::TensorIteratorBase&, at::native::"
      "(anonymous namespace)::CompareFunctor<long> const&)::{lambda(int)#1}>(int, at::native::"
      "gpu_kernel_impl_nocast<at::native::(anonymous namespace)::CompareFunctor<long> >(at::"
      "TensorIteratorBase&, at::native::(anonymous namespace)::CompareFunctor<long> const&)::"
      "{lambda(int)#1})");
  EXPECT_EQ(compare.family, TorchFamily::kStrided);
  EXPECT_EQ(compare.operands, 3);
  int n = 1000;
  char lambda = 0;
  void* args[] = {&n, &lambda};
  const auto w = launch_work(compare, args, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 1000u * 8 * 2);
  EXPECT_EQ(w->bytes_written, 1000u * 1);
}

TEST(TorchKernelName, ReductionsConcatenationAndRows) {
  const TorchKernel sum = classify(kSumLong);
  EXPECT_EQ(sum.family, TorchFamily::kReduce);
  EXPECT_EQ(sum.reduce_op, "sum");
  EXPECT_EQ(sum.scalar.bytes, 8);
  EXPECT_EQ(sum.accumulator.name, "long");
  EXPECT_EQ(sum.ops_bytes, 1);
  EXPECT_EQ(classify(kMaxFloat).reduce_op, "max");

  const TorchKernel cat = classify(kCatLong);
  EXPECT_EQ(cat.family, TorchFamily::kCat);
  EXPECT_EQ(cat.cat_element_bytes, 8);
  EXPECT_EQ(cat.cat_dims, 1);
  EXPECT_EQ(cat.cat_batch, 128);
  EXPECT_EQ(cat.cat_stride_size, 1);
  EXPECT_TRUE(cat.cat_contiguous);
  const TorchKernel strided_cat = classify(kCatStrided);
  EXPECT_EQ(strided_cat.cat_dims, 4);
  EXPECT_FALSE(strided_cat.cat_contiguous);

  const TorchKernel softmax = classify(kSoftmaxBackward);
  EXPECT_EQ(softmax.family, TorchFamily::kRowwise);
  EXPECT_EQ(softmax.row_length_arg, 3);
  EXPECT_EQ(softmax.row_length_bytes, 8);  // `long classes`
  EXPECT_EQ(classify(kLayerNorm).row_length_bytes, 4);

  EXPECT_EQ(classify("_Z6kernelPf").family, TorchFamily::kUnknown);
  EXPECT_EQ(demangle("_Z6kernelPf"), "kernel(float*)");
}

TEST(TorchKernelArgs, ElementwiseWorkIsElementsTimesOperandBytes) {
  int n = 1000;
  char functor = 0;
  uint64_t data[3] = {kBase, kBase + 4096, kBase + 8192};
  void* args[] = {&n, &functor, data};
  const auto w = launch_work(classify(kMulBf16), args, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kElementwise);
  EXPECT_EQ(w->bytes_read, 1000u * 2 * 2);  // two bf16 inputs
  EXPECT_EQ(w->bytes_written, 1000u * 2);
}

TEST(TorchKernelArgs, RegisterSoftmaxIsRowwiseToo) {
  // cunn_SoftMaxForwardReg<bf16, float, bf16, LogSoftMaxForwardEpilogue, long, 8>(output, input,
  // long classes), as log_softmax of 8,192 rows of an 8,192-word vocabulary calls it: each row
  // read and written once.
  const TorchKernel reg = classify(
      demangle(
          "_ZN2at6native43_GLOBAL__N__f71e7945_10_SoftMax_cu_9f978f6322cunn_SoftMaxForwardRegIN"
          "3c108BFloat16EfS4_NS1_25LogSoftMaxForwardEpilogueElLi8EEEvPT1_PKT_T3_")
          .c_str());
  ASSERT_EQ(reg.family, TorchFamily::kRowwise);
  int64_t classes = 8192;
  uint64_t ptr = kBase;
  void* args[] = {&ptr, &ptr, &classes};
  const auto w = launch_work(reg, args, {8192, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kSoftmax);
  EXPECT_EQ(w->bytes_read, 8192ull * 8192 * 2);
  EXPECT_EQ(w->bytes_written, 8192ull * 8192 * 2);
}

TEST(TorchKernelArgs, RowwiseWorkIsRowsTimesLength) {
  // cunn_SoftMaxBackward(gradInput, output, gradOutput, long classes): one block per row.
  int64_t classes = 50304;
  uint64_t ptr = kBase;
  void* args[] = {&ptr, &ptr, &ptr, &classes};
  const auto w = launch_work(classify(kSoftmaxBackward), args, {8192, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 8192ull * 50304 * 4 * 2);
  EXPECT_EQ(w->bytes_written, 8192ull * 50304 * 4);
}

TEST(TorchKernelArgs, ReduceOpFieldsDecodeAtPyTorchsOffsets) {
  auto op = full_reduction<int64_t>(0, kBase, kBase + 512, 3, 8);
  op.config.num_outputs = 1;
  void* args[] = {&op};
  const auto r = read_reduce(classify(kSumLong), args);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->element_size, 8);
  EXPECT_EQ(r->num_inputs, 3u);
  EXPECT_EQ(r->src, kBase);
  EXPECT_EQ(r->dst, kBase + 512);
  EXPECT_EQ(r->noutputs, 1);
  EXPECT_EQ(r->input_calc.offsets(2)[0], 16u);
  // A buffer whose element size disagrees with the name is not misread.
  op.config.element_size_bytes = 4;
  EXPECT_FALSE(read_reduce(classify(kSumLong), args).has_value());
}

TEST(SmallKernels, SumAndMaxOfHostWrittenValues) {
  const uint64_t in = kBase + 0x10000, out = kBase + 0x10200;
  put<int64_t>(in, {5, 7, 11});
  auto op = full_reduction<int64_t>(0, in, out, 3, 8);
  void* args[] = {&op};
  run(classify(kSumLong), args);
  EXPECT_EQ(get<int64_t>(out), 23);

  // max propagates NaN like MaxNanFunctor; without NaN it is the largest value.
  const uint64_t fin = kBase + 0x10400, fout = kBase + 0x10600;
  put<float>(fin, {1.5f, -2.0f, 4.25f, 0.0f});
  auto fop = full_reduction<float>(-INFINITY, fin, fout, 4, 4);
  void* fargs[] = {&fop};
  run(classify(kMaxFloat), fargs);
  EXPECT_EQ(get<float>(fout), 4.25f);
  put<float>(fin + 4, {NAN});
  run(classify(kMaxFloat), fargs);
  EXPECT_TRUE(std::isnan(get<float>(fout)));
}

TEST(SmallKernels, ConcatenationPlacesEachInputAtItsOffset) {
  const uint64_t a = kBase + 0x20000, b = kBase + 0x20200, out = kBase + 0x20400;
  put<int64_t>(a, {1, 2});
  put<int64_t>(b, {3});
  CatMetadata<128, 1> meta;
  std::memset(&meta, 0, sizeof(meta));
  meta.input[0] = reinterpret_cast<const void*>(a);
  meta.input[1] = reinterpret_cast<const void*>(b);
  meta.offset[0] = 0, meta.offset[1] = 2;
  meta.dim_size[0] = 2, meta.dim_size[1] = 1;
  meta.elements[0] = 2, meta.elements[1] = 1;
  TensorSizeStride os{{3, 0, 0, 0}, {1, 0, 0, 0}};
  uint64_t output = out;
  int dim = 0;
  uint32_t dim_stride = 1;
  void* args[] = {&output, &meta, &os, &dim, &dim_stride};
  run(classify(kCatLong), args, {264, 2, 1});
  EXPECT_EQ(get<int64_t>(out), 1);
  EXPECT_EQ(get<int64_t>(out + 8), 2);
  EXPECT_EQ(get<int64_t>(out + 16), 3);
}

TEST(SmallKernels, ElementwiseFunctors) {
  const uint64_t x = kBase + 0x30000, y = kBase + 0x30200, out = kBase + 0x30400;
  put<int64_t>(x, {5, 9});
  put<int64_t>(y, {7, 9});
  uint64_t unary[2] = {out, x};
  uint64_t binary[3] = {out, x, y};
  int n = 2;

  // CUDAFunctorOnSelf_add<long>{other, alpha}: x + alpha * other.
  struct {
    int64_t other, alpha;
  } on_self{3, 2};
  void* add_args[] = {&n, &on_self, unary};
  run(classify(kAddOnSelfLong), add_args);
  EXPECT_EQ(get<int64_t>(out), 11);
  EXPECT_EQ(get<int64_t>(out + 8), 15);

  // CompareFunctor<long>{OpType::GT = 1}: bool out.
  int32_t greater = 1;
  void* cmp_args[] = {&n, &greater, binary};
  run(classify(kCompareLong), cmp_args);
  EXPECT_EQ(get<uint8_t>(out), 0);      // 5 > 7
  EXPECT_EQ(get<uint8_t>(out + 1), 0);  // 9 > 9
  greater = 0;                          // GE
  run(classify(kCompareLong), cmp_args);
  EXPECT_EQ(get<uint8_t>(out + 1), 1);

  // FillFunctor<long>{value}.
  int64_t value = -4;
  uint64_t fill_data[1] = {out};
  void* fill_args[] = {&n, &value, fill_data};
  run(classify(kFillLong), fill_args);
  EXPECT_EQ(get<int64_t>(out + 8), -4);

  // float -> bf16 keeps the 8 significant bits: 1.5 and 2.25 exactly, 1/3 rounded.
  const uint64_t f = kBase + 0x30600, h = kBase + 0x30800;
  put<float>(f, {1.5f, 2.25f, 1.0f / 3});
  int three = 3;
  char lambda = 0;
  uint64_t cast_data[2] = {h, f};
  void* cast_args[] = {&three, &lambda, cast_data};
  run(classify(kCastFloatToBf16), cast_args);
  EXPECT_EQ(get<uint16_t>(h), 0x3fc0);      // 1.5
  EXPECT_EQ(get<uint16_t>(h + 2), 0x4010);  // 2.25
  EXPECT_EQ(get<uint16_t>(h + 4), 0x3eab);  // 0.333984375, the nearest bf16 to 1/3
}

namespace {

// A name of torch.arange's kernel (torch 2.15; 2.8's is the same) for the dispatch case `n`
// of AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16): 4 is int64, 7 float, 9 bfloat16.
std::string arange_kernel(int n) {
  const std::string lambda =
      "at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, "
      "at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#" +
      std::to_string(n) + "}::operator()() const::{lambda(long)#1}";
  return "void (anonymous namespace)::elementwise_kernel_with_index<int, " + lambda + ">(int, " +
         lambda + ", function_traits<" + lambda + ">::result_type*)";
}

}  // namespace

// torch 2.15 and 2.8 name arange's kernel for dtype D with the case lambda below (their
// mangled names, `{lambda()#N}` from `UlvE<N-2>_`, read off a run of torch.arange(16, dtype=D)).
TEST(TorchKernelName, ArangeOutputTypeFromItsDispatchCase) {
  const std::pair<int, const char*> seen[] = {
      {1, "unsigned char"}, {2, "signed char"}, {3, "int"},
      {4, "long"},          {5, "short"},       {6, "double"},
      {7, "float"},         {8, "c10::Half"},   {9, "c10::BFloat16"},
  };
  for (const auto& [n, type] : seen) {
    const TorchKernel k = classify(arange_kernel(n).c_str());
    EXPECT_EQ(k.out_type, type) << n;
    EXPECT_TRUE(k.out_type_known) << n;
  }
  EXPECT_FALSE(classify(arange_kernel(10).c_str()).out_type_known);
}

// What transformers' causal mask reads back (masking_utils.find_packed_sequence_indices):
// positions from arange, then `!= 1` and `== 0` against a scalar, each on the GPU; a wrong value
// sends a model down the packed-sequence path with a materialised mask (docs/pytorch.md).
TEST(SmallKernels, ArangeAndEqualityAgainstAScalar) {
  const uint64_t pos = kBase + 0x50000, flags = kBase + 0x50400;
  // int64: {xstart, xstep} as int64 captures.
  struct {
    int64_t start, step;
  } range{3, 2};
  int n = 5;
  uint64_t pos_addr = pos;
  void* arange_args[] = {&n, &range, &pos_addr};
  const TorchKernel arange_long = classify(arange_kernel(4).c_str());
  ASSERT_EQ(arange_long.family, TorchFamily::kCounted);
  run(arange_long, arange_args);
  for (int i = 0; i < n; ++i) EXPECT_EQ(get<int64_t>(pos + 8 * i), 3 + 2 * i) << i;

  // float: captures are floats; bfloat16: float captures, bfloat16 stored.
  struct {
    float start, step;
  } frange{0.5f, 0.25f};
  void* farange_args[] = {&n, &frange, &pos_addr};
  run(classify(arange_kernel(7).c_str()), farange_args);
  EXPECT_EQ(get<float>(pos + 4 * 4), 1.5f);
  run(classify(arange_kernel(9).c_str()), farange_args);
  EXPECT_EQ(get<uint16_t>(pos + 2 * 4), 0x3fc0);  // 1.5 in bfloat16

  // AUnaryFunctor<long, long, bool, CompareEqFunctor<long>>{EqOpType op; long scalar}: ne 5.
  run(arange_long, arange_args);  // 3, 5, 7, 9, 11 again
  constexpr const char* kNeScalarLong =
      "void at::native::vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<long, long, "
      "bool, at::native::(anonymous namespace)::CompareEqFunctor<long> >, std::array<char*, 2ul>, "
      "false>(int, at::native::AUnaryFunctor<long, long, bool, at::native::(anonymous "
      "namespace)::CompareEqFunctor<long> >, std::array<char*, 2ul>)";
  struct {
    int32_t op;
    int32_t pad;
    int64_t scalar;
  } ne{1, 0, 5};
  uint64_t data[2] = {flags, pos};
  void* ne_args[] = {&n, &ne, data};
  run(classify(kNeScalarLong), ne_args);
  const uint8_t want_ne[] = {1, 0, 1, 1, 1};
  for (int i = 0; i < n; ++i) EXPECT_EQ(get<uint8_t>(flags + i), want_ne[i]) << i;
  ne.op = 0;  // EQ
  run(classify(kNeScalarLong), ne_args);
  for (int i = 0; i < n; ++i) EXPECT_EQ(get<uint8_t>(flags + i), 1 - want_ne[i]) << i;
}

// A tokenizer's attention mask of 16 x 8192 tokens (131,072 elements, past kMaxEmulatedElements)
// is host-written: its sum is computed, as transformers reads it back to choose SDPA's
// is_causal; a sum of the same length over bytes nothing wrote forgets its output.
TEST(SmallKernels, LargerLaunchesAreComputedOverStoredInputs) {
  constexpr int kTokens = 16 * 8192;
  static_assert(kTokens > kMaxEmulatedElements && kTokens <= kMaxEmulatedKnownElements);
  const uint64_t mask = kBase + 0x1000000, unknown = kBase + 0x2000000, out = kBase + 0x3000000;
  std::vector<int64_t> ones(kTokens, 1);
  ShadowStore::get().write(mask, ones.data(), ones.size() * sizeof(int64_t));
  ShadowStore::get().discard(unknown, kTokens * sizeof(int64_t));
  auto op = full_reduction<int64_t>(0, mask, out, kTokens, 8);
  void* args[] = {&op};
  run(classify(kSumLong), args);
  EXPECT_EQ(get<int64_t>(out), kTokens);

  put<int64_t>(out, {7});
  auto unknown_op = full_reduction<int64_t>(0, unknown, out, kTokens, 8);
  void* unknown_args[] = {&unknown_op};
  const auto plan = plan_small_kernel(classify(kSumLong), unknown_args, {1, 1, 1});
  ASSERT_TRUE(plan.has_value());
  EXPECT_FALSE(static_cast<bool>(plan->run));
  run_small_kernel(*plan);
  EXPECT_EQ(get<int64_t>(out), 0);

  // The same for an elementwise launch: fill is computed only below the first bound (no input).
  int n = kTokens;
  int64_t value = 3;
  uint64_t fill_data[1] = {out};
  void* fill_args[] = {&n, &value, fill_data};
  const auto fill = plan_small_kernel(classify(kFillLong), fill_args, {1, 1, 1});
  ASSERT_TRUE(fill.has_value());
  EXPECT_FALSE(static_cast<bool>(fill->run));
}

TEST(SmallKernels, LargeOrUnknownLaunchesForgetTheirOutput) {
  const uint64_t out = kBase + 0x40000, neighbour = out - 16;
  put<int64_t>(neighbour, {42});
  put<int64_t>(out, {7});
  int n = static_cast<int>(kMaxEmulatedElements) + 1;
  int64_t value = 1;
  uint64_t data[1] = {out};
  void* args[] = {&n, &value, data};
  const auto plan = plan_small_kernel(classify(kFillLong), args, {1, 1, 1});
  ASSERT_TRUE(plan.has_value());
  EXPECT_FALSE(static_cast<bool>(plan->run));
  run_small_kernel(*plan);
  EXPECT_EQ(get<int64_t>(out), 0);
  // Bytes outside the output, on the same page, are kept.
  EXPECT_EQ(get<int64_t>(neighbour), 42);
}

TEST(SmallKernels, CastingLoadsTakeTheirTypesFromTheLoaderAndStorer) {
  // PyTorch 2.8's bf16 -> float copy: the lambda works in float, the loader reads BFloat16
  // (c10::ScalarType 15) and the storer writes Float (6).
  constexpr const char* kCastingCopy =
      "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
      "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
      "const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned "
      "int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
      "at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda("
      "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
      "const::{lambda(float)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned "
      "int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
      "at::native::memory::StoreWithCast<1>)";
  const TorchKernel k = classify(kCastingCopy);
  ASSERT_EQ(k.family, TorchFamily::kUnrolled);
  EXPECT_TRUE(k.unrolled_cast);

  struct WithCast {  // LoadWithCast<1> / StoreWithCast<1>
    int8_t dtypes[1];
    uint32_t element_sizes[1];
  };
  const uint64_t src = kBase + 0x50000, dst = kBase + 0x50200;
  put<uint16_t>(src, {0x3fc0, 0xc010});  // bf16 1.5, -2.25
  int n = 2;
  char lambda = 0, calc = 0;
  uint64_t data[2] = {dst, src};
  WithCast loader{{15}, {2}}, storer{{6}, {4}};
  void* args[] = {&n, &lambda, data, &calc, &calc, &loader, &storer};
  run(k, args);
  EXPECT_EQ(get<float>(dst), 1.5f);
  EXPECT_EQ(get<float>(dst + 4), -2.25f);
}

TEST(TorchKernelArgs, FlashAttentionShapesFromGridAndTraits) {
  // Forward: grid (query blocks, batch, heads), kBlockM 128 from Flash_fwd_kernel_traits<64,
  // 128, 128, 4, ...>; the third template argument is Is_causal.
  const TorchKernel fwd = classify(kFlash);
  ASSERT_EQ(fwd.family, TorchFamily::kFlashAttention);
  EXPECT_EQ(fwd.flash, FlashKernel::kForward);
  EXPECT_EQ(fwd.flash_head_dim, 64);
  EXPECT_TRUE(fwd.flash_causal);
  EXPECT_TRUE(fwd.flash_bf16);
  // A params struct whose sizes disagree with the launch (all zero): the grid decides.
  std::array<uint8_t, 512> params{};
  void* args[] = {params.data()};
  const auto w = launch_work(fwd, args, {8, 4, 12});  // 8 blocks of 128 queries, batch 4, 12 heads
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->attention.seq_q, 1024u);
  EXPECT_EQ(w->attention.seq_k, 1024u);
  EXPECT_EQ(w->attention.batch, 4u);
  EXPECT_EQ(w->attention.heads_q, 12u);
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kAttentionForward);

  // Backward (seqk-parallel): grid (key blocks, batch, heads) with kBlockN from the traits.
  const TorchKernel bwd = classify(
      "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<"
      "128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, Flash_kernel_traits<128, 64, 128, "
      "8, cutlass::half_t> >, false, false, false, false, true, true, false>(pytorch_flash::"
      "Flash_bwd_params)");
  ASSERT_EQ(bwd.flash, FlashKernel::kBackward);
  EXPECT_FALSE(bwd.flash_causal);
  EXPECT_FALSE(bwd.flash_bf16);
  const auto b = launch_work(bwd, args, {16, 2, 8});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->attention.seq_k, 16u * 128);
  EXPECT_EQ(b->attention.head_dim, 128u);
  EXPECT_EQ(b->kind, phantora::wire::WorkKind::kAttentionBackward);

  // The fp32 dQ accumulator's conversion: b·h·s·d·4 read, ·2 written (s = blocks x kBlockM).
  const TorchKernel conv = classify(
      "void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, "
      "4, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, "
      "cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)");
  const auto c = launch_work(conv, args, {8, 4, 12});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->bytes_read, 4ull * 12 * 1024 * 64 * 4);
  EXPECT_EQ(c->bytes_written, 4ull * 12 * 1024 * 64 * 2);
}

// FlashAttention-2's Flash_fwd_params as flash-attention 2.5+ lays it out (csrc/flash_attn/src/
// flash.h): int h, h_k, h_h_k_ratio after three pointers and nine int64 strides (byte 96); int b,
// seqlen_q, seqlen_k, seqlen_knew, d, seqlen_q_rounded, seqlen_k_rounded, d_rounded after O's
// pointers and strides and the P and log-sum-exp pointers (byte 176).
namespace {
std::array<uint8_t, 512> flash_params(int32_t b, int32_t h, int32_t h_k, int32_t sq, int32_t sk,
                                      int32_t d) {
  std::array<uint8_t, 512> p{};
  const auto put = [&p](size_t at, int32_t v) { std::memcpy(p.data() + at, &v, 4); };
  const auto round = [](int32_t v, int32_t m) { return (v + m - 1) / m * m; };
  put(96, h), put(100, h_k), put(104, h / h_k);
  put(176, b), put(180, sq), put(184, sk), put(188, 0), put(192, d);
  put(196, round(sq, 128)), put(200, round(sk, 128)), put(204, round(d, 32));
  return p;
}
}  // namespace

TEST(TorchKernelArgs, FlashSizesFromTheParamsStruct) {
  // Cross-attention with grouped keys: 2048 queries over 560 keys, 16 query heads sharing 4
  // key/value heads. The grid (16 query blocks of 128, batch 2, 16 heads) alone would say 2048
  // keys and 16 key/value heads.
  const TorchKernel fwd = classify(kFlash);
  std::array<uint8_t, 512> params = flash_params(2, 16, 4, 2048, 560, 64);
  void* args[] = {params.data()};
  auto w = launch_work(fwd, args, {16, 2, 16});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kAttentionForward);
  EXPECT_EQ(w->attention.batch, 2u);
  EXPECT_EQ(w->attention.heads_q, 16u);
  EXPECT_EQ(w->attention.heads_kv, 4u);
  EXPECT_EQ(w->attention.seq_q, 2048u);
  EXPECT_EQ(w->attention.seq_k, 560u);
  EXPECT_EQ(w->attention.head_dim, 64u);
  EXPECT_EQ(w->attention.dtype, phantora::wire::DataType::kBF16);
  EXPECT_EQ(w->attention.impl, phantora::wire::AttentionImpl::kFlash2);

  // Backward (kBlockN 128): the grid's x counts key blocks, ceil(560 / 128) = 5.
  const TorchKernel bwd = classify(
      "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<"
      "128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, Flash_kernel_traits<128, 64, 128, "
      "8, cutlass::half_t> >, false, false, false, false, true, true, false>(pytorch_flash::"
      "Flash_bwd_params)");
  params = flash_params(2, 16, 4, 2048, 560, 128);
  w = launch_work(bwd, args, {5, 2, 16});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kAttentionBackward);
  EXPECT_EQ(w->attention.seq_q, 2048u);
  EXPECT_EQ(w->attention.seq_k, 560u);
  EXPECT_EQ(w->attention.heads_kv, 4u);
  EXPECT_EQ(w->attention.dtype, phantora::wire::DataType::kF16);

  // A struct that disagrees with the launch (12 heads in the grid, 16 in the struct; or query
  // blocks that do not cover seqlen_q) is not believed: the grid's square shape is used.
  params = flash_params(2, 16, 4, 2048, 560, 64);
  w = launch_work(fwd, args, {16, 2, 12});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->attention.heads_q, 12u);
  EXPECT_EQ(w->attention.heads_kv, 12u);
  EXPECT_EQ(w->attention.seq_k, 2048u);
  w = launch_work(fwd, args, {8, 2, 16});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->attention.seq_q, 1024u);
  EXPECT_EQ(w->attention.seq_k, 1024u);
}

TEST(TorchKernelArgs, GatherAndEmbeddingBagSizesFromTheirParameters) {
  // index_select: num_ind (int, parameter 3) slices of slice_size bytes (int64, parameter 4).
  const TorchKernel gather = classify(
      "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, "
      "long, long, bool)");
  ASSERT_EQ(gather.family, TorchFamily::kIndexed);
  char* p = nullptr;
  int num = 1000;
  int64_t slice = 512, other = 0;
  bool neg = false;
  void* gargs[] = {&p, &p, &p, &num, &slice, &other, &other, &other, &neg};
  const auto g = launch_work(gather, gargs, {1, 1, 1});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->bytes_read, 1000u * (512 + 8));  // the slices and their int64 indices
  EXPECT_EQ(g->bytes_written, 1000u * 512);

  // EmbeddingBag sum: numIndices 6000 rows of 128 floats read, numBags 2000 rows written.
  const TorchKernel bag = classify(
      "void at::native::(anonymous namespace)::EmbeddingBag_updateOutputKernel_sum_mean<float, "
      "long>(long const*, long const*, float const*, float*, long*, long, long, long, long, long, "
      "int, long*, float const*, long, long, long)");
  ASSERT_EQ(bag.family, TorchFamily::kIndexed);
  int64_t indices = 6000, bags = 2000, feature = 128, zero = 0;
  int mode = 0;
  void* bargs[] = {&p,    &p,    &p,    &p, &p, &indices, &bags, &feature,
                   &zero, &zero, &mode, &p, &p, &zero,    &zero, &zero};
  const auto b = launch_work(bag, bargs, {1, 1, 1});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->bytes_read, 6000u * (128 * 4 + 8));
  EXPECT_EQ(b->bytes_written, 2000u * 128 * 4);
}

TEST(TorchKernelArgs, FsdpCopyInAndCopyOutFromTheirSizeParameters) {
  // FSDP2's all-gather copy-out: 4 ranks' rows (num_chunks, parameter 6) of 3 MiB (src_stride,
  // parameter 5), every parameter's split copied: 12 MiB read and written.
  const TorchKernel split = classify(
      "at::native::detail::split_with_sizes_copy_out_contiguous_no_cast_kernel(char**, char**, "
      "long*, long*, long*, long, long)");
  ASSERT_EQ(split.family, TorchFamily::kIndexed);
  char* p = nullptr;
  int64_t* q = nullptr;
  int64_t stride = 3 << 20, chunks = 4;
  void* sargs[] = {&p, &p, &q, &q, &q, &stride, &chunks};
  const auto s = launch_work(split, sargs, {96, 4, 1});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->bytes_read, 12u << 20);
  EXPECT_EQ(s->bytes_written, 12u << 20);

  // The reduce-scatter copy-in: bf16 gradients into an fp32 buffer of 2 slices (grid z) of
  // 8 MiB; the sources are half as wide (dst_to_src_ratio 2): 8 MiB read, 16 MiB written.
  const TorchKernel cat = classify(
      "void at::native::detail::chunk_cat_cuda_kernel<float, c10::BFloat16>(c10::BFloat16**, "
      "float*, long*, long*, long*, long*, long*, long*, long, long, long)");
  ASSERT_EQ(cat.family, TorchFamily::kIndexed);
  int64_t slice = 8 << 20, chunk = 1 << 20, ratio = 2;
  void* cargs[] = {&p, &p, &q, &q, &q, &q, &q, &q, &slice, &chunk, &ratio};
  const auto c = launch_work(cat, cargs, {40, 8, 2});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->bytes_written, 16u << 20);
  EXPECT_EQ(c->bytes_read, 8u << 20);
  // A ratio that cannot be (zero) leaves the launch unpriced.
  int64_t bad = 0;
  void* bad_args[] = {&p, &p, &q, &q, &q, &q, &q, &q, &slice, &chunk, &bad};
  EXPECT_FALSE(launch_work(cat, bad_args, {40, 8, 2}).has_value());
}

TEST(TorchKernelArgs, LayerNormWeightGradientsFromRowsAndColumns) {
  // GammaBetaBackward over M = 8192 rows of N = 768 fp32: dY and X read (2 x 8192 x 768 x 4),
  // with each row's mean and rstd (2 x 8192 x 4); dgamma and dbeta written (2 x 768 x 4).
  const TorchKernel gb = classify(
      "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, "
      "32u, 32u, 256u, false, true, true>(long, long, float const*, float const*, float const*, "
      "float const*, float*, float*)");
  ASSERT_EQ(gb.family, TorchFamily::kIndexed);
  const float* p = nullptr;
  int64_t m = 8192, n = 768;
  void* args[] = {&m, &n, &p, &p, &p, &p, &p, &p};
  const auto w = launch_work(gb, args, {24, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 2u * 8192 * 768 * 4 + 2u * 8192 * 4);
  EXPECT_EQ(w->bytes_written, 2u * 768 * 4);
}

TEST(TorchKernelArgs, EmbeddingGradientRowsFromNumelAndStride) {
  // 8192 token rows (numel, parameter 3) of 768 bf16 (stride, parameter 4) read with their
  // int64 indices; at most one fp32 partial sum per row written.
  const TorchKernel grad = classify(
      "void at::native::(anonymous namespace)::compute_grad_weight<c10::BFloat16, long>(long "
      "const*, c10::BFloat16 const*, long const*, long, long, long const*, long const*, "
      "at::AccumulateType<c10::BFloat16, true>::type*, long)");
  ASSERT_EQ(grad.family, TorchFamily::kIndexed);
  const void* p = nullptr;
  int64_t numel = 8192, stride = 768, warped = 768;
  void* args[] = {&p, &p, &p, &numel, &stride, &p, &p, &p, &warped};
  const auto w = launch_work(grad, args, {256, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 8192u * (768 * 2 + 8));
  EXPECT_EQ(w->bytes_written, 8192u * 768 * 4);
}

TEST(TorchKernelArgs, NormReductionsHaveTheirOpsSize) {
  // clip_grad_norm_'s total norm: NormTwoOps is stateless (one byte, like the EmptyOps of the
  // ReduceOp built here), so its ReduceOp decodes at the same offsets as a sum's.
  const TorchKernel norm = classify(
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
      "at::native::NormTwoOps<float, float, float, true>, unsigned int, float, 4, 4> "
      ">(at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float, true>, unsigned "
      "int, float, 4, 4>)");
  ASSERT_EQ(norm.family, TorchFamily::kReduce);
  EXPECT_EQ(norm.ops_bytes, 1);
  auto op = full_reduction<float>(0.0f, kBase, kBase + 512, 96, 4);
  void* args[] = {&op};
  const auto w = launch_work(norm, args, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 96u * 4);
  // NormOps carries the order p as its accumulator type.
  EXPECT_EQ(classify("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
                     "at::native::NormOps<c10::BFloat16, float, float, true>, unsigned int, "
                     "float, 4, 4> >(at::native::ReduceOp<c10::BFloat16, "
                     "at::native::NormOps<c10::BFloat16, float, float, true>, unsigned int, "
                     "float, 4, 4>)")
                .ops_bytes,
            4);
}

namespace {

// MinMaxReductionOps' accumulator (SharedReduceOps.h): a value and its int64 index.
struct ValueIndex {
  float value;
  int64_t index;
};

}  // namespace

TEST(TorchKernelArgs, ReduceConfigHoldsTheAccumulatorSize) {
  // A bf16 sum accumulates in float: ReduceOp<bf16, func_wrapper_t<bf16, {lambda(float,
  // float)}>>'s ident is a float and ReduceConfig says 4 bytes; the input is read as bf16.
  const TorchKernel sum = classify(
      "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, "
      "at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, "
      "c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, "
      "c10::BFloat16, 4, 8> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<"
      "c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()("
      "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 8>)");
  ASSERT_EQ(sum.family, TorchFamily::kReduce);
  EXPECT_EQ(sum.accumulator.bytes, 4);
  auto op = full_reduction<float>(0.0f, kBase, kBase + 512, 4096, 4);
  op.input_calc.strides[0][0] = 2;  // bf16 elements
  void* args[] = {&op};
  auto w = launch_work(sum, args, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 4096u * 2);
  EXPECT_EQ(w->bytes_written, 2u);

  // max(dim) tracks the index too: a 16-byte, 8-aligned pair, two outputs (values, indices).
  const TorchKernel max = classify(
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MaxOps<"
      "float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::MaxOps<float>, "
      "unsigned int, float, 4, 4>)");
  ASSERT_EQ(max.family, TorchFamily::kReduce);
  EXPECT_EQ(max.accumulator.bytes, 16);
  auto pair = full_reduction<ValueIndex>({-INFINITY, 0}, kBase, kBase + 512, 1024, 16);
  pair.config.num_outputs = 512;
  pair.input_calc.strides[0][0] = 4;
  pair.noutputs = 2;
  void* pargs[] = {&pair};
  w = launch_work(max, pargs, {64, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 512u * 1024 * 4);
  EXPECT_EQ(w->bytes_written, 512u * (4 + 8));
  // Its values are never computed: the accumulator is not a scalar the shim computes with.
  const auto plan = plan_small_kernel(max, pargs, {1, 1, 1});
  EXPECT_TRUE(!plan || !plan->run);

  // aminmax over int64 (MinMaxOps<long, long, int>): a (min, max) pair of 16 bytes, and two
  // outputs of the output type, the minimum and the maximum.
  const TorchKernel minmax = classify(
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<long, at::native::MinMaxOps<"
      "long, long, int>, unsigned int, long, 4, 4> >(at::native::ReduceOp<long, "
      "at::native::MinMaxOps<long, long, int>, unsigned int, long, 4, 4>)");
  ASSERT_EQ(minmax.family, TorchFamily::kReduce);
  EXPECT_EQ(minmax.ops_bytes, 1);
  EXPECT_EQ(minmax.accumulator.bytes, 16);
  struct MinMax {
    int64_t min, max;
  };
  auto both = full_reduction<MinMax>({INT64_MAX, INT64_MIN}, kBase, kBase + 512, 4096, 16);
  both.input_calc.strides[0][0] = 8;
  both.noutputs = 2;
  void* margs[] = {&both};
  w = launch_work(minmax, margs, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 4096u * 8);
  EXPECT_EQ(w->bytes_written, 2u * 8);
  EXPECT_TRUE(!plan_small_kernel(minmax, margs, {1, 1, 1}) ||
              !plan_small_kernel(minmax, margs, {1, 1, 1})->run);
}

TEST(TorchKernelArgs, FlashSplitKvForwardAndCombine) {
  // Split over the keys: grid (query blocks, splits, batch x heads); the third template
  // argument of this kernel is Is_local, the second Is_causal.
  const TorchKernel split = classify(
      "void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<32, 64, 256, 4, false, "
      "false, cutlass::bfloat16_t, Flash_kernel_traits<32, 64, 256, 4, cutlass::bfloat16_t> >, "
      "true, false, false, true, true, false, true, false>(pytorch_flash::Flash_fwd_params)");
  ASSERT_EQ(split.family, TorchFamily::kFlashAttention);
  EXPECT_EQ(split.flash, FlashKernel::kForwardSplitKv);
  EXPECT_TRUE(split.flash_causal);
  EXPECT_TRUE(split.flash_split);
  // A params struct whose sizes disagree with the launch (all zero): the grid decides.
  std::array<uint8_t, 512> params{};
  void* args[] = {params.data()};
  auto w = launch_work(split, args, {4, 2, 2 * 8});  // 4 x 64 queries, 2 splits, batch 2 x 8 heads
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->attention.batch, 1u);
  EXPECT_EQ(w->attention.heads_q, 16u);
  EXPECT_EQ(w->attention.seq_q, 256u);
  EXPECT_EQ(w->attention.head_dim, 32u);
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kAttentionForward);

  // The combine: <traits, kBlockM 16, log2 max splits 1, ...>; 2 x 8 x 256 rows / 16 blocks.
  const TorchKernel combine = classify(
      "void pytorch_flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<32, 64, 256, "
      "4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<32, 64, 256, 4, "
      "cutlass::bfloat16_t> >, 16, 1, true>(pytorch_flash::Flash_fwd_params)");
  ASSERT_EQ(combine.flash, FlashKernel::kSplitKvCombine);
  w = launch_work(combine, args, {2 * 8 * 256 / 16, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 4096u * 2 * (32 * 4 + 4));
  EXPECT_EQ(w->bytes_written, 4096u * 32 * 2);
}

// A template parameter of a non-template function is not the function's template argument
// list; "(anonymous namespace)" before a name's template arguments is a scope.
TEST(TorchKernelName, TemplateArgumentsOnlyBeforeTheParameters) {
  const std::string_view plain =
      "at::native::(anonymous namespace)::fill_reverse_indices_kernel(long*, int, "
      "at::cuda::detail::IntDivider<unsigned int>)";
  EXPECT_TRUE(template_args(plain).empty());
  const std::vector<std::string_view> p = parameter_types(plain);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], "long*");
  EXPECT_EQ(p[2], "at::cuda::detail::IntDivider<unsigned int>");
  const std::string_view templ =
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 3, false, false, "
      "32>(float*, float const*, int, int, int, bool const*, int, bool)";
  EXPECT_EQ(template_args(templ).size(), 7u);
  EXPECT_EQ(parameter_types(templ).size(), 8u);
}

TEST(TorchKernelName, AddFunctorsInTheStridedLoop) {
  // CUDAFunctor_add(self, other) reads two tensors; the OnSelf / OnOther forms add a CPU scalar.
  const TorchKernel add = classify(
      "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
      "CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
      "const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::"
      "CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
      "const&)::{lambda(int)#1})");
  EXPECT_EQ(add.family, TorchFamily::kStrided);
  EXPECT_EQ(add.operands, 3);
  EXPECT_EQ(add.in_bytes, 4);
  const TorchKernel on_self = classify(
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
      "CUDAFunctorOnSelf_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::"
      "CUDAFunctorOnSelf_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, at::native::"
      "gpu_kernel_impl_nocast<at::native::CUDAFunctorOnSelf_add<c10::BFloat16> >(at::"
      "TensorIteratorBase&, at::native::CUDAFunctorOnSelf_add<c10::BFloat16> const&)::{lambda(int)"
      "#1})");
  EXPECT_EQ(on_self.operands, 2);
  EXPECT_EQ(on_self.in_bytes, 2);
  int32_t n = 1000;
  void* args[] = {&n, nullptr};
  const auto w = launch_work(on_self, args, {8, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 1000u * 2);
  EXPECT_EQ(w->bytes_written, 1000u * 2);
}

TEST(SmallKernels, VectorizedConcatenationMovesWholeVectors) {
  // torch.stack of two 4-element int64 rows into [2, 4] (as after an all-to-all of per-expert
  // token counts): CatArrayBatchedCopy_vectorized<OpaqueType<8>, uint, 1 dim, 128, 1, 16-byte
  // vectors, 2 elements per vector>; offsets in rows, scaled by the trailing size (4 elements).
  const TorchKernel stack = classify(
      "void at::native::(anonymous namespace)::CatArrayBatchedCopy_vectorized<at::native::("
      "anonymous namespace)::OpaqueType<8u>, unsigned int, 1, 128, 1, 16, 2>(char*, at::native::("
      "anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::"
      "OpaqueType<8u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::"
      "TensorSizeStride<unsigned int, 4u>, int, unsigned int)");
  ASSERT_EQ(stack.family, TorchFamily::kCat);
  ASSERT_TRUE(stack.cat_vectorized);
  EXPECT_EQ(stack.cat_alignment, 16);
  EXPECT_EQ(stack.cat_elems_per_vec, 2);
  const uint64_t a = kBase + 0x28000, b = kBase + 0x28200, out = kBase + 0x28400;
  put<int64_t>(a, {10, 11, 12, 13});
  put<int64_t>(b, {20, 21, 22, 23});
  put<int64_t>(out, {-1, -1, -1, -1, -1, -1, -1, -1});  // stale bytes the stack overwrites
  CatMetadata<128, 1> meta;
  std::memset(&meta, 0, sizeof(meta));
  meta.input[0] = reinterpret_cast<const void*>(a);
  meta.input[1] = reinterpret_cast<const void*>(b);
  meta.offset[0] = 0, meta.offset[1] = 1;
  meta.dim_size[0] = meta.dim_size[1] = 1;
  meta.elements[0] = meta.elements[1] = 4;
  TensorSizeStride os{{2, 0, 0, 0}, {1, 0, 0, 0}};
  uint64_t output = out;
  int dim = 0;
  uint32_t trailing = 4;
  void* args[] = {&output, &meta, &os, &dim, &trailing};
  run(stack, args, {1, 2, 1});
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(get<int64_t>(out + 8 * i), 10 + i);
    EXPECT_EQ(get<int64_t>(out + 32 + 8 * i), 20 + i);
  }
}
