// The counted kernels (torch_counted_kernels.hpp): names as PyTorch 2.15's CUDA 13 build
// launches them in the example GPT's step (weight init, loss, embedding backward), the launch
// arguments as the kernels' parameter lists lay them out, and the bytes worked out by hand from
// what each kernel reads and writes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "torch_kernel_args.hpp"
#include "torch_kernel_name.hpp"

using namespace phantora::shim;

namespace {

TorchKernel from_mangled(const char* mangled) {
  return classify_torch_kernel(demangle(mangled));
}

// normal_(): an fp32 tensor of 768 x 2048 filled from the Philox generator.
constexpr const char* kNormal =
    "_ZN2at6native54_GLOBAL__N__8e11a5fb_21_DistributionNormal_cu_0c5b6e8543distribution_"
    "elementwise_grid_stride_kernelIfLi4EZNS0_9templates4cuda20normal_and_transformIffPNS_"
    "17CUDAGeneratorImplEZZZNS4_13normal_kernelIS7_EEvRKNS_10TensorBaseEddT_ENKUlvE_clEvENKUlvE0_"
    "clEvEUlfE_EEvRNS_18TensorIteratorBaseET1_T2_EUlP24curandStatePhilox4_32_10E_ZNS1_27distribu"
    "tion_nullary_kernelIff6float4S7_SM_SF_EEvSH_SJ_RKT3_T4_EUlifE_EEvlNS_15PhiloxCudaStateESI_SJ_";
// randint(): int64 token ids, drawn as uint32 (the accumulate type) and written as int64.
constexpr const char* kRandint =
    "_ZN2at6native60_GLOBAL__N__ea7ea33f_27_DistributionRandomKernel_cu_f88cee4443distribution_"
    "elementwise_grid_stride_kernelIjLi4EZZZNS0_9templates4cuda21random_from_to_kernelIPNS_"
    "17CUDAGeneratorImplEEEvRNS_18TensorIteratorBaseEmlT_ENKUlvE_clEvENKUlvE2_clEvEUlP24curand"
    "StatePhilox4_32_10E0_ZNS1_27distribution_nullary_kernelIlj5uint4S7_SF_ZZZS5_IS7_EvS9_mlSA_"
    "ENKSB_clEvENKSC_clEvEUljE_EEvS9_T2_RKT3_T4_EUlijE_EEvlNS_15PhiloxCudaStateET1_SJ_";

TEST(TorchCountedKernels, RandomNumbersWriteNumelElementsOfTheOutputType) {
  const TorchKernel normal = from_mangled(kNormal);
  ASSERT_EQ(normal.family, TorchFamily::kCounted);
  EXPECT_EQ(normal.counted.kind, CountedKind::kRandom);
  int64_t numel = 768 * 2048;
  const char philox[24] = {};
  void* args[] = {&numel, const_cast<char*>(philox), nullptr, nullptr};
  auto w = launch_work(normal, args, {132, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kRandom);
  EXPECT_EQ(w->bytes_read, 0u);
  EXPECT_EQ(w->bytes_written, 768u * 2048 * 4);

  const TorchKernel randint = from_mangled(kRandint);
  ASSERT_EQ(randint.family, TorchFamily::kCounted);
  numel = 8 * 1024;
  w = launch_work(randint, args, {64, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_written, 8u * 1024 * 8);  // int64 out, not the uint32 draws

  numel = -1;  // misread: not priced
  EXPECT_FALSE(launch_work(normal, args, {1, 1, 1}).has_value());
}

TEST(TorchCountedKernels, NllLossReadsOneLogitAndTargetPerFrame) {
  const TorchKernel fwd = from_mangled(
      "_ZN2at6native39_GLOBAL__N__6bd09d29_7_Loss_cu_5b0651e138nll_loss_forward_reduce_cuda_"
      "kernel_2dIfflEEvPT_S4_PKS3_PKT1_S6_bllll");
  ASSERT_EQ(fwd.family, TorchFamily::kCounted);
  const void* p = nullptr;
  bool average = true;
  int64_t nframe = 8192, ndim = 50304, classes = 50304, ignore = -100;
  void* fa[] = {&p, &p, &p, &p, &p, &average, &nframe, &ndim, &classes, &ignore};
  auto w = launch_work(fwd, fa, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 8192u * (4 + 8));  // fp32 log-probability + int64 target
  EXPECT_EQ(w->bytes_written, 2u * 4);

  const TorchKernel bwd = from_mangled(
      "_ZN2at6native39_GLOBAL__N__6bd09d29_7_Loss_cu_5b0651e139nll_loss_backward_reduce_cuda_"
      "kernel_2dIflEEvPT_PKS3_PKT0_S6_S6_biill");
  ASSERT_EQ(bwd.family, TorchFamily::kCounted);
  int32_t frames = 8192, dims = 50304;
  void* ba[] = {&p, &p, &p, &p, &p, &average, &frames, &dims, &classes, &ignore};
  w = launch_work(bwd, ba, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 8192u * 8);
  EXPECT_EQ(w->bytes_written, 8192u * 4);
}

TEST(TorchCountedKernels, ArangeWritesNElements) {
  const TorchKernel arange = from_mangled(
      "_ZN50_GLOBAL__N__2fa45684_17_RangeFactories_cu_38772b0829elementwise_kernel_with_indexIiZZZ"
      "N2at6native15arange_cuda_outERKN3c106ScalarES6_S6_RNS1_6TensorEENKUlvE_clEvENKUlvE5_clEvEU"
      "llE_EEvT_T0_PN15function_traitsISD_E11result_typeE");
  ASSERT_EQ(arange.family, TorchFamily::kCounted);
  int32_t n = 1024;
  void* args[] = {&n, nullptr, nullptr};
  const auto w = launch_work(arange, args, {4, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_written, 1024u * 8);
}

// sort's index output (SortStable.cu): a non-template kernel whose last parameter is a
// template, IntDivider<unsigned int>, which must not read as the name's template arguments.
TEST(TorchCountedKernels, FillReverseIndicesWritesNumelIndices) {
  const TorchKernel fill = from_mangled(
      "_ZN2at6native46_GLOBAL__N__c76d7d8e_13_SortStable_cu_f7bb90a127fill_reverse_indices_kernel"
      "EPliNS_4cuda6detail10IntDividerIjEE");
  ASSERT_EQ(fill.family, TorchFamily::kCounted);
  int64_t* data = nullptr;
  int32_t numel = 3000;
  uint32_t divider[3] = {64, 0, 6};
  void* args[] = {&data, &numel, divider};
  const auto w = launch_work(fill, args, {12, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 0u);
  EXPECT_EQ(w->bytes_written, 3000u * 8);
}

TEST(TorchCountedKernels, CubSortPassesScansAndUniqueCountTheirItems) {
  const void* p = nullptr;
  int32_t bits = 8;
  // Sorting 8192 int64 keys with 8-byte values: one onesweep pass reads and writes both.
  const TorchKernel pass = from_mangled(
      "_ZN14at_cuda_detail3cub6detail10radix_sort29DeviceRadixSortOnesweepKernelINS1_5radix10polic"
      "y_hubIlN2at4cuda3cub6detail10OpaqueTypeILi8EEEyE10Policy1000ELNS0_9SortOrderE0ElSB_yiiNS1_"
      "21identity_decomposer_tEEEvPT5_SH_PT3_PKSI_PT1_PKSM_PT2_PKSQ_T4_iiT6_");
  ASSERT_EQ(pass.family, TorchFamily::kCounted);
  int32_t items = 8192, bit = 0;
  char decomposer = 0;
  void* sa[] = {&p, &p, &p, &p, &p, &p, &p, &p, &items, &bit, &bits, &decomposer};
  auto w = launch_work(pass, sa, {2, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kSort);
  EXPECT_EQ(w->bytes_read, 8192u * 16);
  EXPECT_EQ(w->bytes_written, 8192u * 16);

  const TorchKernel hist = from_mangled(
      "_ZN14at_cuda_detail3cub6detail10radix_sort30DeviceRadixSortHistogramKernelINS1_5radix10pol"
      "icy_hubIlN2at4cuda3cub6detail10OpaqueTypeILi8EEEyE10Policy1000ELNS0_9SortOrderE0ElyNS1_21id"
      "entity_decomposer_tEEEvPT2_PKT1_SG_iiT3_");
  ASSERT_EQ(hist.family, TorchFamily::kCounted);
  uint64_t n64 = 8192;
  int32_t end_bit = 64;
  void* ha[] = {&p, &p, &n64, &bit, &end_bit, &decomposer};
  w = launch_work(hist, ha, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 8192u * 8);
  EXPECT_EQ(w->bytes_written, 0u);

  // The exclusive sum of one pass's bins: a fixed-size kernel, priced as the launch alone.
  const TorchKernel bins = from_mangled(
      "_ZN14at_cuda_detail3cub6detail10radix_sort33DeviceRadixSortExclusiveSumKernelINS1_5radix10"
      "policy_hubIlN2at4cuda3cub6detail10OpaqueTypeILi8EEEyE10Policy1000EyEEvPT0_");
  ASSERT_EQ(bins.family, TorchFamily::kCounted);
  void* ea[] = {&p};
  w = launch_work(bins, ea, {8, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read + w->bytes_written, 0u);

  // exclusive_sum of 8192 int64: read and written once.
  const TorchKernel scan = from_mangled(
      "_ZN14at_cuda_detail3cub6detail4scan16DeviceScanKernelINS2_10policy_hubIllljN2at4cuda3cub38"
      "_GLOBAL__N__365f5212_6_cub_cu_8a0ccfeb5SumOpIlEEE10Policy1000EPKlPlNS0_13ScanTileStateIlL"
      "b1EEESA_NS1_10InputValueIlSF_EEjlLb0ElEEvT0_T1_T2_iT3_T4_T5_");
  ASSERT_EQ(scan.family, TorchFamily::kCounted);
  uint32_t n32 = 8192;
  int32_t start_tile = 0;
  char tile_state[16] = {}, op = 0, init[16] = {};
  void* ca[] = {&p, &p, tile_state, &start_tile, &op, init, &n32};
  w = launch_work(scan, ca, {4, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kScan);
  EXPECT_EQ(w->bytes_read, 8192u * 8);
  EXPECT_EQ(w->bytes_written, 8192u * 8);

  const TorchKernel init_tiles = from_mangled(
      "_ZN14at_cuda_detail3cub6detail4scan20DeviceScanInitKernelINS0_13ScanTileStateIlLb1EEEEEvT_"
      "i");
  ASSERT_EQ(init_tiles.family, TorchFamily::kCounted);
  int32_t tiles = 4;
  void* ia[] = {tile_state, &tiles};
  w = launch_work(init_tiles, ia, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_written, 4u * 16);

  // unique_by_key(sorted int64 keys, counting iterator values, no keys out, int64 offsets out):
  // keys read, the values generated (no memory), at most every item's offset written.
  const TorchKernel unique = from_mangled(
      "_ZN14at_cuda_detail3cub6detail13unique_by_key28DeviceUniqueByKeySweepKernelINS2_10policy_h"
      "ubIllE10Policy1000EPKlN6thrust38_V_300200_SM_750_800_860_900_1000_120017counting_iterator"
      "IlNSA_11use_defaultESC_SC_NSA_18compile_time_valueILi1EEEEEPlSG_SG_NS0_13ScanTileStateIyLb"
      "1EEEN4cuda3std3__48equal_toIvEEyNS2_11VSMemHelperEEEvT0_T1_T2_T3_T4_T5_T6_T7_iNS1_7vsmem_"
      "tE");
  ASSERT_EQ(unique.family, TorchFamily::kCounted);
  int64_t counting = 0;
  char eq = 0, vsmem[16] = {};
  void* ua[] = {&p, &counting, &p, &p, &p, tile_state, &eq, &n64, &tiles, vsmem};
  w = launch_work(unique, ua, {4, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 8192u * 8);
  EXPECT_EQ(w->bytes_written, 8192u * (8 + 8));
}

TEST(TorchCountedKernels, EmbeddingScatterOneSegmentPerIndexAtMost) {
  // 8192 token ids into a 768-wide bf16 embedding: launched with blocks of
  // min(stride_warped, 1024) = 768 threads, ceil(8192 x 768 / 768) = 8192 blocks, one per
  // (possible) segment; each reads its fp32 partial sums and two indices, writes one bf16 row.
  const TorchKernel scatter = from_mangled(
      "_ZN2at6native59_GLOBAL__N__791b8af4_26_EmbeddingBackwardKernel_cu_5d1cf09b15sum_and_scatter"
      "IN3c108BFloat16ElEEvPKT0_PT_lS7_PKlPKNS_14AccumulateTypeIS8_Lb1EE4typeES7_SB_ll");
  ASSERT_EQ(scatter.family, TorchFamily::kCounted);
  const void* p = nullptr;
  int64_t stride = 768, padding = -1, warped = 768;
  void* args[] = {&p, &p, &stride, &p, &p, &p, &p, &p, &padding, &warped};
  auto w = launch_work(scatter, args, {8192, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 8192u * (768 * 4 + 2 * 8));
  EXPECT_EQ(w->bytes_written, 8192u * 768 * 2);
  // Rows wider than a block: 4096 wide (stride_warped 4096) in blocks of 1024, four per segment.
  stride = warped = 4096;
  w = launch_work(scatter, args, {4 * 100, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_written, 100u * 4096 * 2);

  const TorchKernel counts = from_mangled(
      "_ZN2at6native59_GLOBAL__N__791b8af4_26_EmbeddingBackwardKernel_cu_5d1cf09b24krn_partials_p"
      "er_segmentIlEEvPT_PKS3_PKll");
  ASSERT_EQ(counts.family, TorchFamily::kCounted);
  int64_t numel = 8192;
  void* ca[] = {&p, &p, &p, &numel};
  w = launch_work(counts, ca, {256, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 2u * 8192 * 8);
  EXPECT_EQ(w->bytes_written, 8192u * 8);

  const TorchKernel offsets = from_mangled(
      "_ZN2at6native59_GLOBAL__N__791b8af4_26_EmbeddingBackwardKernel_cu_5d1cf09b26krn_partial_seg"
      "ment_offsetIlEEvPT_PKS3_S6_S6_PKl");
  ASSERT_EQ(offsets.family, TorchFamily::kCounted);
  void* oa[] = {&p, &p, &p, &p, &p};
  w = launch_work(offsets, oa, {256, 1, 1});  // ceil(8192 / 32) blocks of 32
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_written, 8192u * 8);

  EXPECT_EQ(from_mangled("_ZN2at6native59_GLOBAL__N__791b8af4_26_EmbeddingBackwardKernel_cu_5d1cf"
                         "09b31compute_num_of_partial_segmentsIlEEvPKT_S5_PKlPl")
                .family,
            TorchFamily::kCounted);
}

TEST(TorchCountedKernels, ForeachNormCleanupReadsEachTensorsChunks) {
  // 148 tensors (one block each), up to 12 chunks' fp32 partial norms each.
  const TorchKernel cleanup = from_mangled(
      "_ZN2at6native14lpnorm_cleanupIfLNS0_8NormTypeE2EfLb1EfEEvPKT3_NS0_19TensorListAddressesEP"
      "Kli");
  ASSERT_EQ(cleanup.family, TorchFamily::kCounted);
  const void* p = nullptr;
  char addresses[8] = {};
  int32_t chunks = 12;
  void* args[] = {&p, addresses, &p, &chunks};
  const auto w = launch_work(cleanup, args, {148, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 148u * 12 * 4);
  EXPECT_EQ(w->bytes_written, 148u * 4);
}

TEST(TorchCountedKernels, ForeachNormCleanupOfPyTorch26) {
  // PyTorch 2.6's lpnorm_cleanup<float, L2, float, float>(partial norms, addresses, int
  // max_chunks): no apply_root argument, the chunk count the last parameter. 291 tensors of up
  // to 7 chunks: each block reads its tensor's 7 fp32 partial norms and writes one norm.
  const TorchKernel cleanup = from_mangled(
      "_ZN2at6native14lpnorm_cleanupIfLNS0_8NormTypeE1EffEEvPKT2_NS0_19TensorListAddressesEi");
  ASSERT_EQ(cleanup.family, TorchFamily::kCounted);
  const void* p = nullptr;
  char addresses[8] = {};
  int32_t chunks = 7;
  void* args[] = {&p, addresses, &chunks};
  const auto w = launch_work(cleanup, args, {291, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 291u * 7 * 4);
  EXPECT_EQ(w->bytes_written, 291u * 4);
}

TEST(TorchCountedKernels, ForeachNormCleanupOfPyTorch211) {
  // PyTorch 2.11's lpnorm_cleanup<float, L1, float, true, float>(partial norms, addresses, int
  // max_chunks): apply_root in the template, three parameters. 148 tensors of up to 9 chunks.
  const TorchKernel cleanup = from_mangled(
      "_ZN2at6native14lpnorm_cleanupIfLNS0_8NormTypeE1EfLb1EfEEvPKT3_NS0_19TensorListAddressesEi");
  ASSERT_EQ(cleanup.family, TorchFamily::kCounted);
  const void* p = nullptr;
  char addresses[8] = {};
  int32_t chunks = 9;
  void* args[] = {&p, addresses, &chunks};
  const auto w = launch_work(cleanup, args, {148, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 148u * 9 * 4);
  EXPECT_EQ(w->bytes_written, 148u * 4);
}

TEST(TorchCountedKernels, IndexSelectLargeIndexCopiesEveryOutputElement) {
  // Embedding's forward in PyTorch 2.6 (index_select of the weight's rows): 16,384 token rows
  // of 4,096 bf16 values, total 16,384 x 4,096 elements, inner size 4,096. Every output element
  // is read from the weight and written once; one int64 index is read per row.
  const TorchKernel select = from_mangled(
      "_ZN2at6native44_GLOBAL__N__50c743a2_11_Indexing_cu_89862edb21indexSelectLargeIndexIN3c108B"
      "Float16EljLi2ELi2ELin2ELb1EEEvNS_4cuda6detail10TensorInfoIT_T1_EENS7_IKS8_S9_EENS7_IKT0_S9_"
      "EEiiS9_S9_l");
  ASSERT_EQ(select.family, TorchFamily::kCounted);
  char info[216] = {};  // TensorInfo structs, not read
  int32_t dim = 0;
  uint32_t total = 16384u * 4096u, inner = 4096;
  int64_t src_dim_size = 128256;
  void* args[] = {info, info, info, &dim, &dim, &total, &inner, &src_dim_size};
  const auto w = launch_work(select, args, {132 * 8, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, uint64_t{16384} * 4096 * 2 + 16384u * 8);
  EXPECT_EQ(w->bytes_written, uint64_t{16384} * 4096 * 2);

  // An inner size of 0 is not a launch PyTorch makes: not priced rather than divided by zero.
  inner = 0;
  EXPECT_FALSE(launch_work(select, args, {1, 1, 1}).has_value());
}

TEST(TorchCountedKernels, UnknownIteratorsAndMisplacedCountsAreNotPriced) {
  // A scan over a transform iterator reads memory the name does not size: left to the default.
  EXPECT_EQ(classify_torch_kernel(
                "void at_cuda_detail::cub::detail::scan::DeviceScanKernel<P, "
                "thrust::transform_iterator<F, long const*>, long*, S, Op, I, unsigned int, long, "
                "false, long>(thrust::transform_iterator<F, long const*>, long*, S, int, Op, I, "
                "unsigned int)")
                .family,
            TorchFamily::kUnknown);
  // A histogram whose count parameter is not an integer.
  EXPECT_EQ(classify_torch_kernel("void at_cuda_detail::cub::detail::radix_sort::"
                                  "DeviceRadixSortHistogramKernel<P, O, long, unsigned long long, "
                                  "D>(unsigned long long*, long const*, float, int, int, D)")
                .family,
            TorchFamily::kUnknown);
}

}  // namespace

namespace {

TEST(TorchCountedKernels, SmallEmbeddingBackwardRollAndIndexing) {
  // embedding_backward_feature_kernel<bf16, float, int64>(indices, grad, grad weight, int n,
  // int64 stride, int padding): n gradient rows (+ indices) read, as many weight rows
  // read-modified-written at most.
  const TorchKernel rows = classify_torch_kernel(
      "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, "
      "float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int)");
  ASSERT_EQ(rows.family, TorchFamily::kCounted);
  const void* p = nullptr;
  int32_t n = 512, padding = -1;
  int64_t stride = 256;
  void* ea[] = {&p, &p, &p, &n, &stride, &padding};
  auto w = launch_work(rows, ea, {8, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 512u * (256 * 2 + 8) + 512u * 256 * 2);
  EXPECT_EQ(w->bytes_written, 512u * 256 * 2);

  // roll_cuda_kernel<int64>(in, out, int64 N, ...): every element moved once.
  const TorchKernel roll = classify_torch_kernel(
      "void at::native::roll_cuda_kernel<long>(long const*, long*, long, long, long, long, long, "
      "long)");
  ASSERT_EQ(roll.family, TorchFamily::kCounted);
  int64_t count = 4096, zero = 0;
  void* ra[] = {&p, &p, &count, &zero, &zero, &zero, &zero, &zero};
  w = launch_work(roll, ra, {4, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 4096u * 8);
  EXPECT_EQ(w->bytes_written, 4096u * 8);

  // triu_tril_kernel<float, int, upper, 2, not in place>(result, self, int64 k, int64 N padded,
  // int last dim padded), as nn.Transformer.generate_square_subsequent_mask(512) calls it: every
  // element of the 512 x 512 mask read and written once.
  const TorchKernel triu = from_mangled(
      "_ZN2at6native16triu_tril_kernelIfiLb1ELi2ELb0EEEvNS_4cuda6detail10TensorInfoIT_T0_EENS4_"
      "IKS5_S6_EEllS6_");
  ASSERT_EQ(triu.family, TorchFamily::kCounted);
  char result_info[432] = {}, self_info[432] = {};
  int64_t diagonal = 1, padded = 512 * 512;
  int32_t last_dim = 512;
  void* ta[] = {result_info, self_info, &diagonal, &padded, &last_dim};
  w = launch_work(triu, ta, {1024, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 512u * 512 * 4);
  EXPECT_EQ(w->bytes_written, 512u * 512 * 4);

  // nn.Dropout's kernels: n elements read, written with a one-byte keep flag each; the count is
  // the fourth parameter, as wide as the index type (unsigned int here, unsigned long below).
  const TorchKernel dropout = classify_torch_kernel(
      "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, "
      "unsigned int, 1, 8, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
      "at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<"
      "bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)");
  ASSERT_EQ(dropout.family, TorchFamily::kCounted);
  EXPECT_EQ(dropout.counted.work, phantora::wire::WorkKind::kRandom);
  uint32_t elements = 6291456;  // 8 x 1024 x 768
  float keep = 0.9f;
  char info = 0;
  void* da[] = {&info, &info, &info, &elements, &keep, &info};
  w = launch_work(dropout, da, {1024, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 6291456u * 2);
  EXPECT_EQ(w->bytes_written, 6291456u * (2 + 1));
  const TorchKernel dropout_any = classify_torch_kernel(
      "void at::native::(anonymous namespace)::fused_dropout_kernel<float, float, unsigned long, "
      "-1, 1, unsigned char>(at::cuda::detail::TensorInfo<float const, unsigned long>, at::cuda::"
      "detail::TensorInfo<float, unsigned long>, at::cuda::detail::TensorInfo<unsigned char, "
      "unsigned long>, unsigned long, float, at::PhiloxCudaState)");
  ASSERT_EQ(dropout_any.family, TorchFamily::kCounted);
  uint64_t long_elements = 1000;
  void* la[] = {&info, &info, &info, &long_elements, &keep, &info};
  w = launch_work(dropout_any, la, {4, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 1000u * 4);
  EXPECT_EQ(w->bytes_written, 1000u * (4 + 1));

  // x[idx] over 4-byte elements: one element and one int64 index read per output element.
  const TorchKernel index = classify_torch_kernel(
      "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::"
      "index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
      "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, "
      "c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::"
      "OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda("
      "char*, char const*, long)#1} const&, bool)::{lambda(int)#1}>(long, at::native::"
      "gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::"
      "TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, "
      "long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::"
      "index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
      "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1})");
  ASSERT_EQ(index.family, TorchFamily::kCounted);
  count = 1000;
  void* ia[] = {&count, nullptr};
  w = launch_work(index, ia, {2, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 1000u * (4 + 8));
  EXPECT_EQ(w->bytes_written, 1000u * 4);
}

}  // namespace

// The eager kernels of FlexAttention's create_block_mask (TorchTitan's Llama 3 step), names as
// PyTorch 2.15 launches them.
TEST(TorchCountedKernels, BlockMaskSortsScansGathersAndAsserts) {
  const void* p = nullptr;
  // warpMergeSortKVInPlace<..., int keys, long values, ...>(keys, uint slices, uint slice size,
  // uint stride, values, uint stride, compare, int invalid): every key and value read and
  // written once: 64 slices of 64 items x (4 + 8) bytes.
  const TorchKernel sort = from_mangled(
      "_ZN2at6native22warpMergeSortKVInPlaceILi2ELin1ELi128ELi16EilNS0_4GTOpIiLb1EEEjLi32EEEvNS_"
      "4cuda6detail10TensorInfoIT3_T6_EES8_S8_S8_NS6_IT4_S8_EES8_T5_S7_");
  ASSERT_EQ(sort.family, TorchFamily::kCounted);
  EXPECT_EQ(sort.counted.kind, CountedKind::kSortSlices);
  char keys_info[432] = {}, values_info[432] = {};  // TensorInfo: only its position matters
  uint32_t slices = 64, slice_size = 64, stride = 1;
  int32_t invalid = 0;
  char compare = 0;
  void* sa[] = {keys_info, &slices, &slice_size, &stride, values_info, &stride, &compare, &invalid};
  auto w = launch_work(sort, sa, {64, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kSort);
  EXPECT_EQ(w->bytes_read, 64u * 64 * 12);
  EXPECT_EQ(w->bytes_written, 64u * 64 * 12);

  // bitonicSortKVInPlace<2, -1, 16, 16, float, long, GTOp, uint>(keys, slices, slice size,
  // stride, values, stride, compare), as topk(5) of an ImageNet classifier's 1,000 logits sorts
  // its 256 rows of 5: each float key and long value read and written once.
  const TorchKernel bitonic = from_mangled(
      "_ZN2at6native20bitonicSortKVInPlaceILi2ELin1ELi16ELi16EflNS0_4GTOpIfLb1EEEjEEvNS_"
      "4cuda6detail"
      "10TensorInfoIT3_T6_EES8_S8_S8_NS6_IT4_S8_EES8_T5_");
  ASSERT_EQ(bitonic.family, TorchFamily::kCounted);
  EXPECT_EQ(bitonic.counted.kind, CountedKind::kSortSlices);
  uint32_t rows = 256, row_items = 5;
  void* ba[] = {keys_info, &rows, &row_items, &stride, values_info, &stride, &compare};
  w = launch_work(bitonic, ba, {16, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kSort);
  EXPECT_EQ(w->bytes_read, 256u * 5 * 12);
  EXPECT_EQ(w->bytes_written, 256u * 5 * 12);

  // tensor_kernel_scan_innermost_dim<long, plus>(out, in, uint rows, uint row size, uint log2
  // threads, long init, op): cumsum of 128 rows of 64 int64, each element read and written once.
  const TorchKernel scan = from_mangled(
      "_ZN2at6native32tensor_kernel_scan_innermost_dimIlSt4plusIlEEEvPT_PKS4_jjjS4_T0_");
  ASSERT_EQ(scan.family, TorchFamily::kCounted);
  rows = 128;
  uint32_t row_size = 64, log_threads = 4;
  int64_t init = 0;
  void* ca[] = {&p, &p, &rows, &row_size, &log_threads, &init, &compare};
  w = launch_work(scan, ca, {16, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kScan);
  EXPECT_EQ(w->bytes_read, 128u * 64 * 8);
  EXPECT_EQ(w->bytes_written, 128u * 64 * 8);

  // gather over OpaqueType<4> with int64 indices: per output element one source element and
  // one index read, one element written.
  const TorchKernel gather = from_mangled(
      "_ZN2at6native34_scatter_gather_elementwise_kernelILi128ELi8EZNS0_36_cuda_scatter_gather_"
      "internal_kernelILb0ENS0_10OpaqueTypeILi4EEElEclINS0_12TensorAssignEEEvRNS_14TensorIterat"
      "orElllRKT_EUliE_EEviT1_");
  ASSERT_EQ(gather.family, TorchFamily::kCounted);
  int32_t n = 5000;
  char lambda[64] = {};
  void* ga[] = {&n, lambda};
  w = launch_work(gather, ga, {5, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 5000u * (4 + 8));
  EXPECT_EQ(w->bytes_written, 5000u * 4);

  // torch._assert_async: one thread, one value: the launch is the cost.
  const TorchKernel assert_async =
      from_mangled("_ZN2at6native25_assert_async_cuda_kernelIbEEvPKT_NS0_3MsgE");
  ASSERT_EQ(assert_async.family, TorchFamily::kCounted);
  EXPECT_EQ(assert_async.counted.kind, CountedKind::kConstant);
}

// The MoE layers of TorchTitan's DeepSeek V3 (router softmax and top-k, token scatter and
// gather, repeat_interleave, index_put_ with accumulation, the grouped GEMM's set-up).
TEST(TorchCountedKernels, MoeRoutingKernels) {
  const void* p = nullptr;
  char lambda[64] = {};
  // scatter_add_ of floats (ReduceAdd): element and int64 index read, element written.
  const TorchKernel scatter_add = classify_torch_kernel(
      "void at::native::_scatter_gather_elementwise_kernel<128, 8, at::native::_cuda_scatter_"
      "gather_internal_kernel<true, float, long>::operator()<at::native::ReduceAdd>(at::"
      "TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1}>(int, "
      "at::native::_cuda_scatter_gather_internal_kernel<true, float, long>::operator()<at::native::"
      "ReduceAdd>(at::TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda("
      "int)#1})");
  ASSERT_EQ(scatter_add.family, TorchFamily::kCounted);
  int32_t n = 3000;
  void* ga[] = {&n, lambda};
  auto w = launch_work(scatter_add, ga, {3, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 3000u * (4 + 8));
  EXPECT_EQ(w->bytes_written, 3000u * 4);

  // scatter_ of a value over bytes (OpaqueType<1>): the index read, one byte written.
  const TorchKernel fill = classify_torch_kernel(
      "void at::native::_scatter_gather_elementwise_kernel<128, 8, at::native::_cuda_scatter_fill_"
      "internal_kernel<at::native::OpaqueType<1>, long>::operator()<at::native::TensorAssign>(at::"
      "TensorIterator&, at::native::OpaqueType<1>, long, long, long, at::native::TensorAssign "
      "const&)::{lambda(int)#1}>(int, at::native::_cuda_scatter_fill_internal_kernel<at::native::"
      "OpaqueType<1>, long>::operator()<at::native::TensorAssign>(at::TensorIterator&, at::native::"
      "OpaqueType<1>, long, long, long, at::native::TensorAssign const&)::{lambda(int)#1})");
  ASSERT_EQ(fill.family, TorchFamily::kCounted);
  w = launch_work(fill, ga, {3, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 3000u * 8);
  EXPECT_EQ(w->bytes_written, 3000u * 1);

  // Warp softmax over 2048 rows of 8 floats: forward reads and writes each element once, the
  // backward reads the gradient and the output.
  const TorchKernel fwd = classify_torch_kernel(
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 3, false, false, 32>("
      "float*, float const*, int, int, int, bool const*, int, bool)");
  ASSERT_EQ(fwd.family, TorchFamily::kCounted);
  int32_t rows = 2048, stride = 8, length = 8, chunk = 0;
  bool flag = false;
  void* fa[] = {&p, &p, &rows, &stride, &length, &p, &chunk, &flag};
  w = launch_work(fwd, fa, {64, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, phantora::wire::WorkKind::kSoftmax);
  EXPECT_EQ(w->bytes_read, 2048u * 8 * 4);
  EXPECT_EQ(w->bytes_written, 2048u * 8 * 4);
  const TorchKernel bwd = classify_torch_kernel(
      "void (anonymous namespace)::softmax_warp_backward<float, float, float, 3, false, false, 32>("
      "float*, float const*, float const*, int, int, int, bool const*)");
  ASSERT_EQ(bwd.family, TorchFamily::kCounted);
  void* ba[] = {&p, &p, &p, &rows, &stride, &length, &p};
  w = launch_work(bwd, ba, {64, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 2 * 2048u * 8 * 4);
  EXPECT_EQ(w->bytes_written, 2048u * 8 * 4);

  // repeat_interleave of 64 int64 counts into 4096 indices.
  const TorchKernel repeat = classify_torch_kernel(
      "void compute_cuda_kernel<long>(long const*, long const*, long*, long, long)");
  ASSERT_EQ(repeat.family, TorchFamily::kCounted);
  int64_t size = 64, result = 4096;
  void* ra[] = {&p, &p, &p, &size, &result};
  w = launch_work(repeat, ra, {1, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 64u * (8 + 8));
  EXPECT_EQ(w->bytes_written, 4096u * 8);

  // index_put_(accumulate=True) of 512 indices into rows of 2 x 256 bf16: both index arrays
  // read; per index and element, the gradient read and the weight read-modified-written.
  const TorchKernel accumulate = classify_torch_kernel(
      "void (anonymous namespace)::indexing_backward_kernel<c10::BFloat16, 4>(long const*, long "
      "const*, c10::BFloat16 const*, c10::BFloat16*, long, long, long, long, bool)");
  ASSERT_EQ(accumulate.family, TorchFamily::kCounted);
  int64_t numel = 512, row = 256, before = 1, outer = 2;
  bool acc = true;
  void* ia[] = {&p, &p, &p, &p, &numel, &row, &before, &outer, &acc};
  w = launch_work(accumulate, ia, {8, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 512u * 16 + 512u * 256 * 2 * 2 * 2);
  EXPECT_EQ(w->bytes_written, 512u * 256 * 2 * 2);

  // The router's top 2 of 64 experts for 4096 tokens: each score read once, 2 values and 2
  // int64 indices written per token.
  const TorchKernel topk = from_mangled(
      "_ZN2at6native6sbtopk10gatherTopKIfjLi2ELb0EEEvNS_4cuda6detail10TensorInfoIKT_T0_EES8_S8_bS8"
      "_S8_NS5_IS6_S8_EES8_NS5_IlS8_EES8_PS6_");
  ASSERT_EQ(topk.family, TorchFamily::kCounted);
  char info[216] = {};  // TensorInfo: data, 25 sizes, 25 strides, dims (not read)
  uint32_t slice = 64, k = 2, slices = 4096, step = 1;
  bool largest = true;
  void* ta[] = {info, &slice, &k, &largest, &slices, &step, info, &step, info, &step, &p};
  w = launch_work(topk, ta, {4096, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->bytes_read, 4096u * 64 * 4);
  EXPECT_EQ(w->bytes_written, 4096u * 2 * (4 + 8));
}

namespace {

// The kernels of CNN layers PyTorch 2.15 runs itself (names as its CUDA 13 build launches them
// in tests/pytorch/cudnn_convolutions.py's CNN and a plain fp32 one), by hand.
TEST(TorchCountedKernels, MaxPoolingReadsItsInputAndWritesValuesAndIndices) {
  // 3 x 3, stride 2 over 16 x 64 x 112 x 112 -> 56 x 56, fp32 NCHW: the forward's first
  // parameter is the output count.
  const TorchKernel fwd = classify_torch_kernel(
      "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, int>(int, float "
      "const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)");
  ASSERT_EQ(fwd.family, TorchFamily::kCounted);
  EXPECT_EQ(fwd.counted.kind, CountedKind::kPoolFlat);
  int32_t outputs = 16 * 64 * 56 * 56, ph = 56, pw = 56, small = 3;
  int64_t c = 64, h = 112, w = 112;
  float* ptr = nullptr;
  void* fa[] = {&outputs, &ptr,   &c,     &h,     &w,     &ph,    &pw,  &small, &small,
                &small,   &small, &small, &small, &small, &small, &ptr, &ptr};
  auto work = launch_work(fwd, fa, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->kind, phantora::wire::WorkKind::kReduce);
  EXPECT_EQ(work->bytes_read, 16u * 64 * 112 * 112 * 4);
  EXPECT_EQ(work->bytes_written, 16u * 64 * 56 * 56 * (4 + 8));  // fp32 values, int64 indices

  // Average pooling (DenseNet's transitions: 2 x 2, stride 2) in channels-last fp16: the same
  // parameters before the output, no indices written.
  const TorchKernel avg = classify_torch_kernel(
      "void at::native::(anonymous namespace)::avg_pool2d_out_cuda_frame_nhwc<c10::Half, float>("
      "int, c10::Half const*, long, long, long, int, int, int, int, int, int, int, int, "
      "c10::Half*, "
      "int, bool, bool)");
  ASSERT_EQ(avg.family, TorchFamily::kCounted);
  bool flag = false;
  void* aa[] = {&outputs, &ptr,   &c,     &h,     &w,   &ph,    &pw,   &small, &small,
                &small,   &small, &small, &small, &ptr, &small, &flag, &flag};
  work = launch_work(avg, aa, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->bytes_read, 16u * 64 * 112 * 112 * 2);
  EXPECT_EQ(work->bytes_written, 16u * 64 * 56 * 56 * 2);

  // The backward in channels-last bf16: the gradient and indices read, the input's written.
  const TorchKernel bwd = classify_torch_kernel(
      "void at::native::(anonymous namespace)::max_pool_backward_nhwc<c10::BFloat16, float>(c10::"
      "BFloat16 const*, long const*, int, long, long, long, int, int, int, int, int, int, int, "
      "int, int, int, int, int, int, int, int, c10::BFloat16*)");
  ASSERT_EQ(bwd.family, TorchFamily::kCounted);
  int32_t n = 16;
  void* ba[] = {&ptr,   &ptr,   &n,     &c,     &h,     &w,     &ph,    &pw,
                &small, &small, &small, &small, &small, &small, &small, &small,
                &small, &small, &small, &small, &small, &ptr};
  work = launch_work(bwd, ba, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->bytes_read, 16u * 64 * 56 * 56 * (2 + 8));
  EXPECT_EQ(work->bytes_written, 16u * 64 * 112 * 112 * 2);
}

// Classifies a demangled name as a counted kernel of `kind` and checks the bytes the launch
// `args` describe: read and written.
void expect_counted_bytes(const std::string& demangled, CountedKind kind,
                          const std::vector<void*>& args, uint64_t read, uint64_t written) {
  const TorchKernel k = classify_torch_kernel(demangled);
  ASSERT_EQ(k.family, TorchFamily::kCounted) << demangled;
  EXPECT_EQ(k.counted.kind, kind) << demangled;
  const auto work = launch_work(k, args.data(), {1, 1, 1});
  ASSERT_TRUE(work.has_value()) << demangled;
  EXPECT_EQ(work->bytes_read, read) << demangled;
  EXPECT_EQ(work->bytes_written, written) << demangled;
}

// PyTorch 2.8 (the CUDA 12 wheel) declares the NCHW max pooling kernels with one template
// argument fewer and the same parameters (names as its build launches them under
// pytorch/examples' imagenet/main.py): priced as PyTorch 2.15's, by hand.
TEST(TorchCountedKernels, MaxPoolingOfPyTorch2p8) {
  const std::string ns = "void at::native::(anonymous namespace)::";
  float* ptr = nullptr;
  int32_t outputs = 16 * 64 * 56 * 56, ph = 56, pw = 56, three = 3, n = 16;
  int64_t c = 64, h = 112, w = 112;
  expect_counted_bytes(ns + "max_pool_forward_nchw<float>(int, float const*, long, long, long, "
                            "int, int, int, int, int, int, int, int, int, int, float*, long*)",
                       CountedKind::kPoolFlat,
                       {&outputs, &ptr, &c, &h, &w, &ph, &pw, &three, &three, &three, &three,
                        &three, &three, &three, &three, &ptr, &ptr},
                       16u * 64 * 112 * 112 * 4, 16u * 64 * 56 * 56 * (4 + 8));
  expect_counted_bytes(ns + "max_pool_backward_nchw<float, float>(float const*, long const*, "
                            "int, long, long, long, int, int, int, int, int, int, int, int, "
                            "int, int, float*)",
                       CountedKind::kMaxPoolBackward,
                       {&ptr, &ptr, &n, &c, &h, &w, &ph, &pw, &three, &three, &three, &three,
                        &three, &three, &three, &three, &ptr},
                       16u * 64 * 56 * 56 * (4 + 8), 16u * 64 * 112 * 112 * 4);
}

// Average pooling's other kernels, from their tensors by hand (the order of their parameters
// read from their sm_90 code: torch_counted_kernels.cpp).
TEST(TorchCountedKernels, AveragePoolingInEachLayoutAndPass) {
  const std::string ns = "void at::native::(anonymous namespace)::";
  float* ptr = nullptr;
  bool flag = false;
  int32_t outputs = 16 * 64 * 56 * 56, pw = 56, three = 3, two = 2, one = 1;
  int64_t c = 64, h = 112, w = 112, ph = 56;
  // The NCHW forward in fp32, 3 x 3 at stride 2: PH an int64 there, PW an int, at the
  // channels-last kernel's positions.
  expect_counted_bytes(ns + "avg_pool2d_out_cuda_frame<float, float>(int, float const*, long, "
                            "long, long, long, int, int, int, int, int, int, int, float*, int, "
                            "bool, bool)",
                       CountedKind::kPoolFlat,
                       {&outputs, &ptr, &c, &h, &w, &ph, &pw, &three, &three, &two, &two, &one,
                        &one, &ptr, &one, &flag, &flag},
                       16u * 64 * 112 * 112 * 4, 16u * 64 * 56 * 56 * 4);
  // The backward, one thread per input element: when the windows tile the input (DenseNet's
  // 2 x 2, stride 2 transitions), bf16, each reads its window's one gradient.
  int32_t inputs = 16 * 128 * 56 * 56;
  int64_t c128 = 128, h56 = 56, w56 = 56, p28 = 28, zero = 0;
  const std::string tiled = ns +
                            "avg_pool2d_backward_nonoverlap_frame<c10::BFloat16, float, "
                            "int>(int, c10::BFloat16 const*, long, long, long, long, long, "
                            "int, int, c10::BFloat16*, int, bool, bool)";
  expect_counted_bytes(
      tiled, CountedKind::kPoolBackward,
      {&inputs, &ptr, &c128, &h56, &w56, &p28, &p28, &two, &two, &ptr, &two, &flag, &flag},
      16u * 128 * 28 * 28 * 2, 16u * 128 * 56 * 56 * 2);
  std::vector<void*> empty = {&inputs, &ptr, &c128, &h56, &zero, &p28, &p28,
                              &two,    &two, &ptr,  &two, &flag, &flag};
  EXPECT_FALSE(launch_work(classify_torch_kernel(tiled), empty.data(), {1, 1, 1}).has_value());
  // The general kernels, 3 x 3 windows at stride 1 with padding 1 (Inception's): as many
  // gradients as inputs, each read once; NCHW fp32 (PH, PW int64) and NHWC fp16 (int).
  std::vector<void*> general = {&inputs, &ptr, &c128, &h56, &w56, &h56, &w56,  &three, &three,
                                &one,    &one, &one,  &one, &ptr, &one, &flag, &flag,  &flag};
  expect_counted_bytes(ns + "avg_pool2d_backward_out_cuda_frame<float, float, int>(int, float "
                            "const*, long, long, long, long, long, int, int, int, int, int, "
                            "int, float*, int, bool, bool, bool)",
                       CountedKind::kPoolBackward, general, 16u * 128 * 56 * 56 * 4,
                       16u * 128 * 56 * 56 * 4);
  int32_t p56 = 56;
  general[5] = general[6] = &p56;
  expect_counted_bytes(ns + "avg_pool2d_backward_out_cuda_frame_nhwc<c10::Half, float, int>("
                            "int, c10::Half const*, long, long, long, int, int, int, int, int, "
                            "int, int, int, c10::Half*, int, bool, bool, bool)",
                       CountedKind::kPoolBackward, general, 16u * 128 * 56 * 56 * 2,
                       16u * 128 * 56 * 56 * 2);
}

constexpr const char* kAccessor =
    "torch::headeronly::detail::GenericPackedTensorAccessor<torch::headeronly::detail::"
    "TensorAccessor<c10::ArrayRef<long>, float const, 3ul, torch::headeronly::DefaultPtrTraits, "
    "int>, at::detail::IndexBoundsCheck<4ul, int>, float const, 4ul, torch::headeronly::"
    "DefaultPtrTraits, int>";

TEST(TorchCountedKernels, DepthwiseConvolutionsMoveTheirActivations) {
  // 3 x 3 depthwise over 32 x 64 x 56 x 56 fp32, multiplier 1, stride 1: the forward reads the
  // input and writes the output, each 32·64·56·56 floats.
  const std::string a = kAccessor;
  const TorchKernel fwd = classify_torch_kernel(
      "void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, int>(" +
      a + ", " + a + ", " + a + ", " + a + ", bool, int, int, int, int, int, int, int, int, int, " +
      "int, int, int, int, int, int)");
  ASSERT_EQ(fwd.family, TorchFamily::kCounted);
  EXPECT_EQ(fwd.counted.kind, CountedKind::kDepthwiseForward);
  char acc[40] = {};
  bool bias = false;
  int32_t total = 32 * 64 * 56 * 56, ch = 64, mult = 1, side = 56, one = 1;
  void* fa[] = {acc,   acc,   acc,  acc,  &bias, &total, &ch,  &mult, &side, &side,
                &side, &side, &one, &one, &one,  &one,   &one, &one,  &one,  &one};
  auto work = launch_work(fwd, fa, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->bytes_read, 32u * 64 * 56 * 56 * 4);
  EXPECT_EQ(work->bytes_written, 32u * 64 * 56 * 56 * 4);

  // The input gradient with stride 2 (56 x 56 in, 28 x 28 out): N·K·P·Q read, N·C·H·W written.
  const TorchKernel data = classify_torch_kernel(
      "void at::native::(anonymous namespace)::conv_depthwise2d_backward_kernel<3, 2, float, "
      "int>(" +
      a + ", " + a + ", " + a + ", int, int, int, int, int, int, int, int, int, int, int, int, " +
      "int, int, int, int)");
  ASSERT_EQ(data.family, TorchFamily::kCounted);
  int32_t out_side = 28;
  void* da[] = {acc,       acc,  acc,  &total, &ch,  &mult, &ch,  &side, &side, &out_side,
                &out_side, &one, &one, &one,   &one, &one,  &one, &one,  &one};
  work = launch_work(data, da, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->bytes_read, 32u * 64 * 28 * 28 * 4);
  EXPECT_EQ(work->bytes_written, 32u * 64 * 56 * 56 * 4);

  // The filter gradient reads both activations.
  const TorchKernel filter = classify_torch_kernel(
      "void at::native::(anonymous namespace)::conv_depthwise2d_grad_weight_kernel<float, "
      "unsigned int>(" +
      a + ", " + a + ", " + a + ", int, int, int, int, int, int, int, int, int, int, int, int, " +
      "int, int, int, int)");
  ASSERT_EQ(filter.family, TorchFamily::kCounted);
  int32_t batch = 32;
  void* wa[] = {acc,       acc,  acc,  &batch, &ch,  &ch,  &mult, &side, &side, &out_side,
                &out_side, &one, &one, &one,   &one, &one, &one,  &one,  &one};
  work = launch_work(filter, wa, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->bytes_read, 32u * 64 * (28 * 28 + 56 * 56) * 4);
  EXPECT_EQ(work->bytes_written, 0u);
}

TEST(TorchCountedKernels, ChannelsLastBatchNormPassesByHand) {
  // bf16 x of 16 x 56 x 56 rows of 64 channels: the statistics read x and write two floats per
  // channel; the transform reads x and writes y; the backward reduce reads x and dy and writes
  // four floats per channel; the element-wise backward reads dy and x and writes dx.
  const uint64_t rows = 16 * 56 * 56, x = rows * 64 * 2;
  int32_t r = static_cast<int32_t>(rows), stride = 64;
  float* ptr = nullptr;
  float eps = 1e-5f;
  bool relu = false;
  struct Case {
    const char* name;
    std::vector<void*> args;
    uint64_t read, written;
  };
  const Case cases[] = {
      {"void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var, "
       "c10::BFloat16, float, 4>(c10::BFloat16 const*, float*, float*, float volatile*, int*, "
       "int, int, float)",
       {&ptr, &ptr, &ptr, &ptr, &ptr, &r, &stride, &eps},
       x,
       2 * 64 * 4},
      {"void at::native::batch_norm_transform_input_channels_last_kernel<c10::BFloat16, float, "
       "float, 4>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, float "
       "const*, float const*, c10::BFloat16*, int, int, bool)",
       {&ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &r, &stride, &relu},
       x,
       x},
      {"void at::native::batch_norm_backward_reduce_channels_last_kernel<4, c10::BFloat16, float, "
       "float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, float*, "
       "float*, float*, float*, float volatile*, int*, int, int)",
       {&ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &r, &stride},
       2 * x,
       4 * 64 * 4},
      {"void at::native::batch_norm_backward_elemt_channels_last_kernel<4, c10::BFloat16, float, "
       "float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, float "
       "const*, float const*, float const*, c10::BFloat16*, float, int, int)",
       {&ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &ptr, &eps, &r, &stride},
       2 * x,
       x},
  };
  for (const Case& c : cases) {
    const TorchKernel k = classify_torch_kernel(c.name);
    ASSERT_EQ(k.family, TorchFamily::kCounted) << c.name;
    EXPECT_EQ(k.counted.kind, CountedKind::kNormChannelsLast);
    auto work = launch_work(k, const_cast<void**>(c.args.data()), {1, 1, 1});
    ASSERT_TRUE(work.has_value()) << c.name;
    EXPECT_EQ(work->kind, phantora::wire::WorkKind::kNorm);
    EXPECT_EQ(work->bytes_read, c.read) << c.name;
    EXPECT_EQ(work->bytes_written, c.written) << c.name;
  }
}

TEST(TorchCountedKernels, RecurrentCellsMoveTheirGatesByHand) {
  // An LSTM step of 4 x 64 hidden units in bf16: forward reads 9 and writes 6 values per unit,
  // backward reads 8 and writes 5; a GRU's 7 and 6, 6 and 7 (RNN.cu's tensors per unit).
  const std::string info = "at::cuda::detail::TensorInfo<c10::BFloat16, int>";
  const auto infos = [&](int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += info + ", ";
    return out;
  };
  char ti[424] = {};
  int32_t hidden = 64, elements = 4 * 64;
  struct Case {
    std::string name;
    int tensors;
    uint64_t read, written;
  };
  const Case cases[] = {
      {"lstm_cell_forward", 8, 9, 6},
      {"lstm_cell_backward", 7, 8, 5},
      {"gru_cell_forward", 7, 7, 6},
      {"gru_cell_backward", 5, 6, 7},
  };
  for (const Case& c : cases) {
    const TorchKernel k =
        classify_torch_kernel("void at::native::(anonymous namespace)::kernel::" + c.name +
                              "<c10::BFloat16, float, int, 1>(" + infos(c.tensors) + "int, int)");
    ASSERT_EQ(k.family, TorchFamily::kCounted) << c.name;
    EXPECT_EQ(k.counted.kind, CountedKind::kRecurrentCell);
    std::vector<void*> args(static_cast<size_t>(c.tensors), ti);
    args.push_back(&hidden);
    args.push_back(&elements);
    auto work = launch_work(k, args.data(), {1, 1, 1});
    ASSERT_TRUE(work.has_value()) << c.name;
    EXPECT_EQ(work->bytes_read, c.read * 256 * 2) << c.name;
    EXPECT_EQ(work->bytes_written, c.written * 256 * 2) << c.name;
  }
}

TEST(TorchCountedKernels, MultiOutputElementwiseReadsItsLambdasOperands) {
  // batch_norm_update_stats_and_invert over 64 channels: four floats read and three written per
  // channel (running mean, running variance, inverse deviation).
  const TorchKernel k = classify_torch_kernel(
      "void at::native::(anonymous namespace)::unrolled_elementwise_kernel_for_multi_outputs<3, "
      "at::native::(anonymous namespace)::batch_norm_update_stats_and_invert(at::Tensor const&, "
      "at::Tensor const&, at::Tensor const&, at::Tensor const&, double, double, long)::{lambda()#1}"
      "::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float, float, "
      "float)#1}, std::array<char*, 7ul>, TrivialOffsetCalculator<4, unsigned int>, "
      "TrivialOffsetCalculator<3, unsigned int> >(int, at::native::(anonymous namespace)::batch_"
      "norm_update_stats_and_invert(at::Tensor const&, at::Tensor const&, at::Tensor const&, "
      "at::Tensor const&, double, double, long)::{lambda()#1}::operator()() const::{lambda()#2}::"
      "operator()() const::{lambda(float, float, float, float)#1}, std::array<char*, 7ul>, "
      "TrivialOffsetCalculator<4, unsigned int>, TrivialOffsetCalculator<3, unsigned int>)");
  ASSERT_EQ(k.family, TorchFamily::kCounted);
  EXPECT_EQ(k.counted.kind, CountedKind::kMultiOutput);
  int32_t n = 64;
  char blob[64] = {};
  void* args[] = {&n, blob, blob, blob, blob};
  auto work = launch_work(k, args, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->bytes_read, 64u * 4 * 4);
  EXPECT_EQ(work->bytes_written, 64u * 3 * 4);
}

TEST(TorchCountedKernels, GradScalerUpdateAndSmallStrideIndexAccumulate) {
  // GradScaler's update is one thread: the launch is its cost.
  const TorchKernel update = classify_torch_kernel(
      "at::native::amp_update_scale_cuda_kernel(float*, int*, float const*, double, double, int)");
  ASSERT_EQ(update.family, TorchFamily::kCounted);
  EXPECT_EQ(update.counted.kind, CountedKind::kConstant);
  // index_put_ with accumulation on rows shorter than a warp (Swin's relative position bias):
  // 4,096 indices into rows of 4 floats, as the stride-1 and general kernels.
  const TorchKernel small = classify_torch_kernel(
      "void (anonymous namespace)::indexing_backward_kernel_small_stride<float>(long const*, "
      "long const*, float const*, float*, long, long, long, long, bool)");
  ASSERT_EQ(small.family, TorchFamily::kCounted);
  EXPECT_EQ(small.counted.kind, CountedKind::kIndexAccumulate);
  int64_t numel = 4096, stride = 4, before = 1, outer = 1;
  bool acc = true;
  float* ptr = nullptr;
  void* args[] = {&ptr, &ptr, &ptr, &ptr, &numel, &stride, &before, &outer, &acc};
  auto work = launch_work(small, args, {1, 1, 1});
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->bytes_read, 4096u * 2 * 8 + 4096u * 4 * 4 * 2);
  EXPECT_EQ(work->bytes_written, 4096u * 4 * 4);
}

}  // namespace
