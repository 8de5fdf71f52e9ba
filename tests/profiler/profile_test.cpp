// The measuring path end to end against the stand-in GPU (standin_gpu.cpp): which signatures are
// replayed and how (the exact cuBLAS and copy calls), warm-up and repetitions, statistics,
// provenance, the rows written, and pricing from them. Every duration is the table's, so each
// expectation below is a hand computation from it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "phantora/kernels/cost_model.hpp"
#include "phantora/kernels/kernel_db.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "phantora/profiler/measure.hpp"

namespace phantora::profiler {
namespace {

namespace fs = std::filesystem;
using kernels::CopyDesc;
using kernels::GemmDesc;

// bf16 256 x 512 x 128 with A transposed: cuBLAS sees lda = k = 128 (A stored k x m), ldb = k,
// ldc = m; strides m*k, k*n, m*n; CUDA_R_16BF = 14, CUBLAS_COMPUTE_32F = 68.
const char* kGemmA =
    "gemm:m=256,n=512,k=128,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=t,op_b=n,beta=0,"
    "epilogue=none";
const char* kGemmACall =
    "cublasGemmStridedBatchedEx opa=1 opb=0 m=256 n=512 k=128 lda=128 ldb=128 ldc=256 "
    "stride_a=32768 stride_b=65536 stride_c=131072 batch=1 atype=14 btype=14 ctype=14 "
    "compute=68 beta=0";
// f32 64^3 x 8 with TF32 compute, B transposed (ldb = n), C accumulated (beta = 1);
// CUDA_R_32F = 0, CUBLAS_COMPUTE_32F_FAST_TF32 = 77.
const char* kGemmB =
    "gemm:m=64,n=64,k=64,batch=8,a=f32,b=f32,c=f32,compute=tf32,op_a=n,op_b=t,beta=1,"
    "epilogue=none";
const char* kGemmBCall =
    "cublasGemmStridedBatchedEx opa=0 opb=1 m=64 n=64 k=64 lda=64 ldb=64 ldc=64 stride_a=4096 "
    "stride_b=4096 stride_c=4096 batch=8 atype=0 btype=0 ctype=0 compute=77 beta=1";
const char* kH2d = "copy:kind=h2d,bytes=1048576,host=pinned";
const char* kH2dCall = "cudaMemcpyAsync kind=1 bytes=1048576 host=pinned";
const char* kD2h = "copy:kind=d2h,bytes=4096,host=pageable";
const char* kD2hCall = "cudaMemcpyAsync kind=2 bytes=4096 host=pageable";
// In no table row: the stand-in refuses it, as a library error would.
const char* kUnknownGemm =
    "gemm:m=128,n=128,k=128,batch=1,a=f16,b=f16,c=f16,compute=f32,op_a=n,op_b=n,beta=0,"
    "epilogue=none";

class ProfileStandin : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("phantora_profile_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "times.txt") << "# operation | durations in us, cycled\n"
                                      << kGemmACall << " | 100 100 10 12 11 13\n"
                                      << kGemmBCall << " | 7\n"
                                      << kH2dCall << " | 50 40 44 42 46\n"
                                      << kD2hCall << " | 20\n";
    setenv("PHANTORA_STANDIN_GPU_TIMES", (dir_ / "times.txt").c_str(), 1);
    setenv("PHANTORA_STANDIN_GPU_LOG", (dir_ / "calls.log").c_str(), 1);
    api_ = load_cuda_api(CudaLibraries::single(PHANTORA_STANDIN_GPU_LIBRARY));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::map<std::string, int> calls() const {
    std::map<std::string, int> n;
    std::ifstream in(dir_ / "calls.log");
    for (std::string line; std::getline(in, line);) ++n[line];
    return n;
  }

  fs::path dir_;
  CudaApi api_{};
};

const kernels::DbEntry& row_of(const ProfileReport& r, const std::string& sig) {
  for (const auto& row : r.rows) {
    if (row.signature == sig) return row;
  }
  throw std::runtime_error("no row for " + sig);
}

TEST_F(ProfileStandin, WarmupThenRepetitionsEachTimedByEvents) {
  const MeasureOptions options{.warmup = 2, .repetitions = 4, .device = 0, .sequences = 0};
  const ProfileReport r = measure_signatures(api_, {kGemmA, kGemmB, kH2d, kD2h}, "h200", options);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_TRUE(r.failed.empty());
  EXPECT_TRUE(r.unsupported.empty());

  // Each operation ran 2 untimed + 4 timed times, with exactly the arguments worked out above.
  // Before, each GEMM's operands were filled with random values from the default stream: GEMM
  // A's A (128 x 256 bf16, 64 KiB) and B (128 x 512, 128 KiB); GEMM B's A, B and, as beta = 1,
  // C (8 x 64 x 64 f32, 128 KiB each).
  const std::map<std::string, int> expected{{kGemmACall, 6},
                                            {kGemmBCall, 6},
                                            {kH2dCall, 6},
                                            {kD2hCall, 6},
                                            {"scratch fill kind=1 bytes=65536", 1},
                                            {"scratch fill kind=1 bytes=131072", 4}};
  EXPECT_EQ(calls(), expected);

  // GEMM A: warm-up takes 100, 100; the samples are 10, 12, 11, 13.
  const auto& a = row_of(r, kGemmA);
  EXPECT_EQ(a.gpu, "h200");
  EXPECT_EQ(a.source, kernels::EntrySource::kMeasured);
  EXPECT_EQ(a.stats.count, 4u);
  EXPECT_NEAR(a.stats.mean_us, 11.5, 1e-4);
  EXPECT_NEAR(a.stats.min_us, 10.0, 1e-4);
  EXPECT_NEAR(a.stats.max_us, 13.0, 1e-4);
  // deviations -1.5, 0.5, -0.5, 1.5: sum of squares 5, over n - 1 = 3.
  EXPECT_NEAR(a.stats.stddev_us, std::sqrt(5.0 / 3.0), 1e-4);
  EXPECT_NEAR(r.measured[0].median_us, 11.5, 1e-4);

  EXPECT_NEAR(row_of(r, kGemmB).stats.mean_us, 7.0, 1e-4);
  EXPECT_NEAR(row_of(r, kGemmB).stats.stddev_us, 0.0, 1e-4);

  // Copy: the table cycles 50 40 44 42 46; warm-up takes 50, 40; samples 44, 42, 46, 50.
  const auto& h2d = row_of(r, kH2d);
  EXPECT_NEAR(h2d.stats.mean_us, 45.5, 1e-4);
  EXPECT_NEAR(h2d.stats.min_us, 42.0, 1e-4);
  EXPECT_NEAR(h2d.stats.max_us, 50.0, 1e-4);
  EXPECT_NEAR(h2d.stats.stddev_us, std::sqrt(35.0 / 3.0), 1e-4);  // 2.25+12.25+0.25+20.25
  EXPECT_NEAR(r.measured[2].median_us, 45.0, 1e-4);
  EXPECT_NEAR(row_of(r, kD2h).stats.mean_us, 20.0, 1e-4);
}

TEST_F(ProfileStandin, SustainedLaunchesComeBeforeTheTimedOnes) {
  // GEMM B takes 7 us. Sustaining 1 ms: batches of 1, 2, 4, ..., 64 launches (127, 889 us),
  // then the 16 the remaining 111 us need at 7 us each: 143 = ceil(1000 / 7) launches, then 2
  // warm-up and 4 timed ones. The row holds the 4 timed samples only.
  const MeasureOptions options{
      .sustain_ms = 1, .warmup = 2, .repetitions = 4, .device = 0, .sequences = 0};
  const ProfileReport r = measure_signatures(api_, {kGemmB}, "h200", options);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(calls().at(kGemmBCall), 143 + 2 + 4);
  EXPECT_EQ(r.rows[0].stats.count, 4u);
  EXPECT_NEAR(r.rows[0].stats.mean_us, 7.0, 1e-4);
}

// PyTorch's linear layer with bias: addmm, A transposed, through cuBLASLt with the BIAS epilogue
// (4). Stored layouts, column-major: A is k x m = 64 x 256 (ld 64), B k x n = 64 x 1024, C and D
// m x n = 256 x 1024 (ld 256); the bias vector is set; cuBLASLt gets a 32 MiB workspace.
const char* kLtBias =
    "gemm:m=256,n=1024,k=64,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=t,op_b=n,beta=0,"
    "epilogue=bias";
const char* kLtBiasCall =
    "cublasLtMatmul compute=68 scale=0 transa=1 transb=0 epilogue=4 bias=1 "
    "A=14:64x256:ld64:batch1:stride0 B=14:64x1024:ld64:batch1:stride0 "
    "C=14:256x1024:ld256:batch1:stride0 D=14:256x1024:ld256:batch1:stride0 beta=0 "
    "workspace=33554432";
// Batched f16 GELU (32) without bias, B transposed (stored n x k = 128 x 32), C accumulated:
// strides are one matrix each (128 * 32 = 4096, 128 * 128 = 16384); CUDA_R_16F = 2.
const char* kLtGelu =
    "gemm:m=128,n=128,k=32,batch=4,a=f16,b=f16,c=f16,compute=f32,op_a=n,op_b=t,beta=1,"
    "epilogue=gelu";
const char* kLtGeluCall =
    "cublasLtMatmul compute=68 scale=0 transa=0 transb=1 epilogue=32 bias=0 "
    "A=2:128x32:ld128:batch4:stride4096 B=2:128x32:ld128:batch4:stride4096 "
    "C=2:128x128:ld128:batch4:stride16384 D=2:128x128:ld128:batch4:stride16384 beta=1 "
    "workspace=33554432";

TEST_F(ProfileStandin, EpilogueGemmsRunThroughCublasLt) {
  std::ofstream(dir_ / "times.txt", std::ios::app) << kLtBiasCall << " | 30 20 22 24\n"
                                                   << kLtGeluCall << " | 5\n";
  const MeasureOptions options{.warmup = 1, .repetitions = 3, .device = 0, .sequences = 0};
  const ProfileReport r = measure_signatures(api_, {kLtBias, kLtGelu}, "h200", options);
  ASSERT_EQ(r.rows.size(), 2u) << (r.failed.empty() ? "" : r.failed[0].reason);
  // Operands filled first: bias's A (64 x 256 bf16, 32 KiB), B (64 x 1024, 128 KiB) and bias
  // vector (256 bf16); GELU's A and B (4 x 128 x 32 f16, 32 KiB each) and, as beta = 1, C
  // (4 x 128 x 128, 128 KiB).
  const std::map<std::string, int> expected{{kLtBiasCall, 4},
                                            {kLtGeluCall, 4},
                                            {"scratch fill kind=1 bytes=32768", 3},
                                            {"scratch fill kind=1 bytes=131072", 2},
                                            {"scratch fill kind=1 bytes=512", 1}};
  EXPECT_EQ(calls(), expected);
  // Warm-up takes 30; samples 20, 22, 24: mean 22, sd sqrt((4 + 0 + 4) / 2) = 2.
  const auto& bias = row_of(r, kLtBias);
  EXPECT_NEAR(bias.stats.mean_us, 22.0, 1e-4);
  EXPECT_NEAR(bias.stats.stddev_us, 2.0, 1e-4);
  EXPECT_NEAR(r.measured[0].median_us, 22.0, 1e-4);
  EXPECT_NEAR(row_of(r, kLtGelu).stats.mean_us, 5.0, 1e-4);
}

TEST_F(ProfileStandin, ProvenanceNamesDeviceVersionsClocksAndTime) {
  const ProfileReport r = measure_signatures(api_, {kGemmB}, "h200", {});
  ASSERT_EQ(r.rows.size(), 1u);
  const kernels::Provenance& p = r.rows[0].provenance;
  EXPECT_EQ(p.device_name, "NVIDIA H200");
  EXPECT_EQ(p.driver_version, "cuda-driver-api 13.0");
  EXPECT_EQ(p.library_versions, "cudart=13.0;cublas=13.1.7;sm_clock_mhz=1980;mem_clock_mhz=3201");
  EXPECT_TRUE(std::regex_match(p.recorded_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << p.recorded_at;
  EXPECT_EQ(r.rows[0].stats.count, 20u);  // the default repetitions
  // 5 warm-up + 20 timed + 3 back-to-back sequences of 10.
  EXPECT_EQ(calls().at(kGemmBCall), 55);
  ASSERT_TRUE(r.rows[0].back_to_back.has_value());
  EXPECT_EQ(r.rows[0].back_to_back->length, 10u);
  EXPECT_EQ(r.rows[0].back_to_back->per_launch.count, 3u);
}

TEST_F(ProfileStandin, UnreplayableFamiliesAreNamedAndNeverLaunched) {
  GemmDesc fp8;
  fp8.m = fp8.n = fp8.k = 256;
  fp8.a = fp8.b = kernels::DType::kF8E4M3;
  CopyDesc peer;
  peer.kind = wire::CopyKind::kPeer;
  peer.bytes = 1024;
  peer.pinned_host = false;
  kernels::AttentionDesc attn;
  attn.batch = 1;
  attn.heads_q = attn.heads_kv = 8;
  attn.seq_q = attn.seq_k = 1024;
  attn.head_dim = 64;
  kernels::KernelDesc kernel;
  kernel.name = "_Z4busyv";
  kernels::MemoryOpDesc mem;
  mem.bytes_read = mem.bytes_written = 4096;
  const std::vector<std::string> sigs{kernels::signature(fp8),  kernels::signature(peer),
                                      kernels::signature(attn), kernels::signature(kernel),
                                      kernels::signature(mem),  kUnknownGemm};
  const ProfileReport r = measure_signatures(api_, sigs, "h200", {});
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.unsupported.size(), 5u);
  EXPECT_NE(r.unsupported[0].reason.find("FP8 inputs"), std::string::npos);
  EXPECT_NE(r.unsupported[1].reason.find("two GPUs"), std::string::npos);
  EXPECT_NE(r.unsupported[2].reason.find("no launch was recorded"), std::string::npos);
  EXPECT_NE(r.unsupported[3].reason.find("no launch was recorded"), std::string::npos);
  EXPECT_NE(r.unsupported[4].reason.find("bytes moved"), std::string::npos);
  // The GEMM was attempted: its first (warm-up) call failed and nothing else ran.
  ASSERT_EQ(r.failed.size(), 1u);
  EXPECT_EQ(r.failed[0].signature, kUnknownGemm);
  EXPECT_NE(r.failed[0].reason.find("cublasGemmStridedBatchedEx failed"), std::string::npos);
  // Before it, its A and B (128 x 128 f16, 32 KiB each) were filled.
  auto n = calls();
  EXPECT_EQ(n["scratch fill kind=1 bytes=32768"], 2);
  n.erase("scratch fill kind=1 bytes=32768");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n.begin()->second, 1);
}

TEST_F(ProfileStandin, MeasuredRowsPriceTheirGpuOnly) {
  const MeasureOptions options{.warmup = 2, .repetitions = 4, .device = 0, .sequences = 0};
  const ProfileReport r = measure_signatures(api_, {kGemmA}, "h200", options);
  const fs::path db_path = dir_ / "k.db";
  {
    auto db = kernels::KernelDb::open(db_path, kernels::KernelDb::Mode::kCreate);
    EXPECT_EQ(db.put(r.rows, kernels::OnConflict::kCombine), 1u);
  }
  const GemmDesc gemm = *kernels::parse_gemm_signature(kGemmA);
  const auto& catalog = kernels::GpuCatalog::builtin();

  kernels::CostModel on_h200;
  on_h200.set_database(kernels::load_kernel_db(db_path, "h200"));
  const kernels::KernelCost priced = on_h200.cost_of_gemm(gemm, catalog.find("h200"));
  EXPECT_EQ(priced.source, kernels::CostSource::kMeasured);
  EXPECT_NEAR(priced.duration.as_us(), 11.5, 1e-3);  // the measured mean

  // The same signature on an H100 is not priced from the H200's row.
  kernels::CostModel on_h100;
  on_h100.set_database(kernels::load_kernel_db(db_path, "h100"));
  EXPECT_EQ(on_h100.cost_of_gemm(gemm, catalog.find("h100")).source,
            kernels::CostSource::kModelled);
}

// cudaMemset* is recorded as the memory operation `memset` (write = bytes, read = 0); the
// profiler replays it with cudaMemsetAsync on a scratch buffer of that size, on its own stream,
// and a run prices memsets of that size from the row.
TEST_F(ProfileStandin, MemsetsAreMeasuredAndPriceMemsetsOfTheirSize) {
  const std::string sig = kernels::signature(kernels::memset_desc(65536));
  EXPECT_EQ(sig, "mem:op=memset,read=0,write=65536");
  std::ofstream(dir_ / "times.txt", std::ios::app) << "cudaMemsetAsync bytes=65536 | 3 4 5\n";
  const MeasureOptions options{.warmup = 1, .repetitions = 2, .device = 0, .sequences = 0};
  const ProfileReport r = measure_signatures(api_, {sig}, "h200", options);
  ASSERT_EQ(r.rows.size(), 1u) << (r.failed.empty() ? "" : r.failed[0].reason);
  // Only the measured calls reach the table (the scratch buffer's initialisation is on the
  // default stream): warm-up takes 3, the samples are 4 and 5.
  EXPECT_EQ(calls(), (std::map<std::string, int>{{"cudaMemsetAsync bytes=65536", 3}}));
  EXPECT_NEAR(row_of(r, sig).stats.mean_us, 4.5, 1e-4);

  const fs::path db_path = dir_ / "k.db";
  {
    auto db = kernels::KernelDb::open(db_path, kernels::KernelDb::Mode::kCreate);
    db.put(r.rows, kernels::OnConflict::kCombine);
  }
  kernels::CostModel model;
  model.set_database(kernels::load_kernel_db(db_path, "h200"));
  const auto& h200 = kernels::GpuCatalog::builtin().find("h200");
  const kernels::KernelCost measured = model.cost_of_memset(Bytes(65536), h200);
  EXPECT_EQ(measured.source, kernels::CostSource::kMeasured);
  EXPECT_EQ(measured.signature, sig);
  EXPECT_NEAR(measured.duration.as_us(), 4.5, 1e-3);
  // Another size is modelled: the device-local latency plus bytes over HBM.
  const kernels::KernelCost other = model.cost_of_memset(Bytes(1 << 20), h200);
  EXPECT_EQ(other.source, kernels::CostSource::kModelled);
  EXPECT_EQ(other.duration, model.memset_cost(Bytes(1 << 20), h200));
}

// After the lone launches, sequences of launches back to back between one pair of events: each
// sequence's time over its length is one sample of the per-launch time, and a row that has one
// prices its operation by it (a training step runs its kernels back to back).
TEST_F(ProfileStandin, BackToBackSequencesAreTimedStoredAndPrice) {
  // GEMM A cycles 100 100 10 12 11 13 through 1 warm-up, 2 timed and 2 sequences of 3:
  // warm-up 100; timed 100, 10; sequence 1: 12 + 11 + 13 = 36 -> 12 per launch; sequence 2:
  // 100 + 100 + 10 = 210 -> 70 per launch.
  const MeasureOptions options{
      .warmup = 1, .repetitions = 2, .device = 0, .sequence_length = 3, .sequences = 2};
  const ProfileReport r = measure_signatures(api_, {kGemmA}, "h200", options);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(calls().at(kGemmACall), 1 + 2 + 2 * 3);
  EXPECT_NEAR(r.rows[0].stats.mean_us, 55.0, 1e-4);
  ASSERT_TRUE(r.rows[0].back_to_back.has_value());
  EXPECT_EQ(r.rows[0].back_to_back->length, 3u);
  EXPECT_NEAR(r.rows[0].back_to_back->per_launch.mean_us, 41.0, 1e-4);
  EXPECT_NEAR(r.rows[0].back_to_back->per_launch.min_us, 12.0, 1e-4);
  EXPECT_NEAR(r.rows[0].back_to_back->per_launch.max_us, 70.0, 1e-4);
  ASSERT_EQ(r.measured[0].back_to_back_us.size(), 2u);

  // Stored, read back (schema version 2), pooled with a second profile of equal length, and
  // priced by the back-to-back mean.
  const fs::path db_path = dir_ / "k.db";
  {
    auto db = kernels::KernelDb::open(db_path, kernels::KernelDb::Mode::kCreate);
    EXPECT_EQ(db.schema_version(), 2);
    db.put(r.rows, kernels::OnConflict::kCombine);
    const auto back = db.lookup("h200", kGemmA);
    ASSERT_TRUE(back && back->back_to_back);
    EXPECT_NEAR(back->back_to_back->per_launch.mean_us, 41.0, 1e-4);
  }
  kernels::CostModel model;
  model.set_database(kernels::load_kernel_db(db_path, "h200"));
  const kernels::KernelCost c = model.cost_of_gemm(*kernels::parse_gemm_signature(kGemmA),
                                                   kernels::GpuCatalog::builtin().find("h200"));
  EXPECT_EQ(c.source, kernels::CostSource::kMeasured);
  EXPECT_NEAR(c.duration.as_us(), 41.0, 1e-3);
}

// The idle GPU's launch round trip: host time from the call to the stream synchronisation's
// return, less the events' time for the 4-byte memset. The stand-in's synchronisation takes
// 2 ms of real time; the memset 1 us of GPU time.
TEST_F(ProfileStandin, LaunchRoundTripIsHostTimeLessGpuTime) {
  std::ofstream(dir_ / "times.txt", std::ios::app) << "cudaMemsetAsync bytes=4 | 1\n";
  setenv("PHANTORA_STANDIN_GPU_SYNC_US", "2000", 1);
  const kernels::DeviceFact f =
      measure_launch_round_trip(api_, "h200", {.warmup = 1, .repetitions = 5, .device = 0});
  unsetenv("PHANTORA_STANDIN_GPU_SYNC_US");
  EXPECT_EQ(f.gpu, "h200");
  EXPECT_EQ(f.name, kernels::kLaunchRoundTrip);
  EXPECT_EQ(f.stats.count, 5u);
  EXPECT_EQ(calls().at("cudaMemsetAsync bytes=4"), 6);
  // At least the 2 ms the synchronisation sleeps, less the memset's 1 us; a loaded machine
  // may add some.
  EXPECT_GE(f.stats.min_us, 1999.0);
  EXPECT_LT(f.stats.mean_us, 2000.0 + 50000.0);
  EXPECT_EQ(f.provenance.device_name, "NVIDIA H200");

  // Stored and read back as the snapshot's launch round trip.
  const fs::path db_path = dir_ / "k.db";
  {
    auto db = kernels::KernelDb::open(db_path, kernels::KernelDb::Mode::kCreate);
    db.put_fact(f);
  }
  EXPECT_NEAR(*kernels::load_kernel_db(db_path, "h200")->launch_round_trip_us(), f.stats.mean_us,
              1e-6);
  EXPECT_FALSE(kernels::load_kernel_db(db_path, "h100")->launch_round_trip_us().has_value());
}

// Recorded launches (launch_records.hpp) relaunched with their arguments: parameters trimmed to
// the sizes the driver reports, device addresses moved into scratch buffers at the same offset
// (an allocation over 1 GiB from its lowest referenced offset, 512-aligned, to 1 GiB past its
// highest). The stand-in spells each launch's arguments; the expected spellings are worked out
// from the records below.
class RecordedLaunch : public ProfileStandin {
 protected:
  void SetUp() override {
    ProfileStandin::SetUp();
    std::ofstream(dir_ / "image", std::ios::binary) << std::string("\x50\xed\x55\xba", 4);
    std::ofstream(dir_ / "params.txt") << "k1 | 8 4\nk2 | 16\n";
    setenv("PHANTORA_STANDIN_GPU_PARAMS", (dir_ / "params.txt").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("PHANTORA_STANDIN_GPU_PARAMS");
    ProfileStandin::TearDown();
  }
  static std::string bytes(std::initializer_list<uint64_t> words) {
    std::string out;
    for (uint64_t w : words) out.append(reinterpret_cast<const char*>(&w), 8);
    return out;
  }
  // k1(float* p, int n) with p 16 bytes into a 4096-byte allocation and n = 7, its int read as
  // a window of 16 bytes; k2(struct {long tag; float* q;}) with q 2 GiB + 100 bytes into a
  // 3 GiB allocation.
  std::vector<LaunchRecord> records() const {
    LaunchRecord k1;
    k1.kernel = "k1";
    k1.image = dir_ / "image";
    k1.grid = {2, 1, 1};
    k1.block = {64, 1, 1};
    k1.params = {{bytes({0xdead0010}), true}, {bytes({7, 0xffffffffffffffff}), false}};
    k1.pointers = {{0, 0, 0, 16}};
    k1.allocations = {4096};
    LaunchRecord k2 = k1;
    k2.kernel = "k2";
    k2.params = {{bytes({0x0102030405060708, 0xbeef}), true}};
    k2.pointers = {{0, 8, 0, (uint64_t{2} << 30) + 100}};
    k2.allocations = {uint64_t{3} << 30};
    return {k1, k2};
  }
  static constexpr const char* kK1 = "kernel:name=k1,grid=2x1x1,block=64x1x1,smem=0";
  static constexpr const char* kK2 = "kernel:name=k2,grid=2x1x1,block=64x1x1,smem=0";
  static constexpr const char* kK1Call =
      "cuLaunchKernel k1 grid=2,1,1 block=64,1,1 smem=0 args=[@4096+16];07000000";
  static constexpr const char* kK2Call =
      "cuLaunchKernel k2 grid=2,1,1 block=64,1,1 smem=0 args=0807060504030201[@1073741824+100]";
};

TEST_F(RecordedLaunch, RelaunchedWithItsArgumentsOnScratchBuffers) {
  std::ofstream(dir_ / "times.txt", std::ios::app) << kK1Call << " | 3 5\n" << kK2Call << " | 8\n";
  const MeasureOptions options{.warmup = 1, .repetitions = 4, .device = 0, .sequences = 0};
  const std::vector<LaunchRecord> launches = records();
  EXPECT_EQ(modelled_signature(launches[0]), kK1);
  const ProfileReport r = measure_signatures(api_, {kK1, kK2}, "h200", options, launches);
  EXPECT_TRUE(r.failed.empty()) << (r.failed.empty() ? "" : r.failed[0].reason);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(calls(), (std::map<std::string, int>{{kK1Call, 5}, {kK2Call, 5}}));
  // k1 cycles 3 5: warm-up 3, samples 5 3 5 3.
  EXPECT_NEAR(row_of(r, kK1).stats.mean_us, 4.0, 1e-4);
  EXPECT_NEAR(row_of(r, kK2).stats.mean_us, 8.0, 1e-4);
}

TEST_F(RecordedLaunch, WithoutARecordNotMeasurable) {
  const ProfileReport r = measure_signatures(api_, {kK1}, "h200", {});
  ASSERT_EQ(r.unsupported.size(), 1u);
  EXPECT_NE(r.unsupported[0].reason.find("no launch was recorded"), std::string::npos);
}

TEST_F(RecordedLaunch, TooFewBytesRecordedIsNotMeasurable) {
  std::vector<LaunchRecord> launches = records();
  launches[1].params[0].bytes.resize(12);  // the driver says 16
  const ProfileReport r = measure_signatures(api_, {kK2}, "h200", {}, launches);
  ASSERT_EQ(r.unsupported.size(), 1u);
  EXPECT_EQ(r.unsupported[0].reason, "parameter 0 has 16 bytes and 12 were recorded");
}

// A relaunched kernel that faults takes the device with it: the library calls were measured
// first, the faulting signature is named and the rest are left untried.
TEST_F(RecordedLaunch, AFaultStopsMeasuringAndNamesTheKernel) {
  std::ofstream(dir_ / "times.txt", std::ios::app) << kK1Call << " | -1\n" << kK2Call << " | 8\n";
  const MeasureOptions options{.warmup = 1, .repetitions = 2, .device = 0, .sequences = 0};
  const ProfileReport r = measure_signatures(api_, {kK1, kGemmB, kK2}, "h200", options, records());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].signature, kGemmB);
  ASSERT_EQ(r.failed.size(), 1u);
  EXPECT_EQ(r.failed[0].signature, kK1);
  EXPECT_EQ(r.context_lost, kK1);
  EXPECT_EQ(r.not_attempted, std::vector<std::string>{kK2});
}

TEST_F(ProfileStandin, MissingLibraryIsNamed) {
  try {
    load_cuda_api(CudaLibraries::single("/nonexistent/libcudart.so"));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libcudart.so"), std::string::npos);
  }
}

}  // namespace
}  // namespace phantora::profiler
