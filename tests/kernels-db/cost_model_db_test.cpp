// CostModel's resolution order with a kernel database attached, and the missing-signature log.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "phantora/kernels/cost_model.hpp"

namespace phantora::kernels {
namespace {

const GpuPreset& h100() {
  return GpuCatalog::builtin().find("h100");
}

GemmDesc gemm(uint64_t s) {
  GemmDesc d;
  d.m = d.n = d.k = s;
  return d;
}

DbEntry row(std::string sig, double mean_us, EntrySource source = EntrySource::kMeasured) {
  DbEntry e;
  e.gpu = "h100";
  e.signature = std::move(sig);
  e.stats = {1, mean_us, mean_us, mean_us, 0};
  e.source = source;
  return e;
}

TEST(CostModelDb, DatabaseFirstThenModelEachTaggedWithItsSignature) {
  CostModel model;
  model.set_database(DbSnapshot::from_entries("h100", {row(signature(gemm(4096)), 150.0)}));

  const KernelCost hit = model.cost_of_gemm(gemm(4096), h100());
  EXPECT_EQ(hit.source, CostSource::kMeasured);
  EXPECT_EQ(hit.duration, SimTime::us(150.0));
  EXPECT_EQ(hit.signature, signature(gemm(4096)));
  // A measured row gives the time; what the GEMM moves through HBM is still its description's
  // (A, B and C in bf16 once each), for the kernels it shares the GPU with.
  EXPECT_EQ(hit.hbm_bytes, 3.0 * 4096 * 4096 * 2);

  const KernelCost miss = model.cost_of_gemm(gemm(2048), h100());
  EXPECT_EQ(miss.source, CostSource::kModelled);
  EXPECT_EQ(miss.duration, gemm_estimate(gemm(2048), h100(), ModelParams::builtin()).duration);
  EXPECT_EQ(miss.hbm_bytes, 3.0 * 2048 * 2048 * 2);
  model.cost_of_gemm(gemm(2048), h100());

  const std::vector<MissingEntry> missing = model.missing().entries();
  ASSERT_EQ(missing.size(), 1u);  // the measured one is not missing
  EXPECT_EQ(missing[0].signature, signature(gemm(2048)));
  EXPECT_EQ(missing[0].occurrences, 2u);
  EXPECT_NEAR(missing[0].modelled_us, miss.duration.as_us(), 1e-9);
}

TEST(CostModelDb, RowsOfAnotherGpuAreNotUsed) {
  CostModel model;
  model.set_database(DbSnapshot::from_entries("h100", {row(signature(gemm(4096)), 150.0)}));
  EXPECT_EQ(model.cost_of_gemm(gemm(4096), GpuCatalog::builtin().find("h200")).source,
            CostSource::kModelled);
}

TEST(CostModelDb, KernelsArePinnedThenMeasuredThenDefault) {
  const KernelLaunchInfo launch{"_Z4busyPfi", {1000, 1, 1}, {256, 1, 1}, 0};
  const KernelLaunchInfo other{"_Z5otherv", {1, 1, 1}, {32, 1, 1}, 0};
  CostModel model(CostParams::builtin(),
                  KernelTimes::from_csv_text("kernel,duration_us\nbusy,9\n", "t"));
  model.set_database(
      DbSnapshot::from_entries("h100", {row(kernel_signature(launch), 42.0),
                                        row(kernel_signature(other), 7.0, EntrySource::kPinned)}));
  const KernelCost pinned = model.cost_of_kernel(launch, h100());
  EXPECT_EQ(pinned.source, CostSource::kPinned);  // the user's CSV beats the database
  EXPECT_EQ(pinned.duration, SimTime::us(9));
  EXPECT_EQ(pinned.signature, "kernel:name=_Z4busyPfi,grid=1000x1x1,block=256x1x1,smem=0");
  const KernelCost db_pinned = model.cost_of_kernel(other, h100());
  EXPECT_EQ(db_pinned.source, CostSource::kPinned);
  EXPECT_EQ(db_pinned.duration, SimTime::us(7));
  const KernelLaunchInfo unknown{"_Z7unknownv", {1, 1, 1}, {32, 1, 1}, 0};
  EXPECT_EQ(model.cost_of_kernel(unknown, h100()).source, CostSource::kDefault);
  EXPECT_EQ(model.missing().size(), 1u);
}

TEST(CostModelDb, AttentionMemoryAndCopiesGoThroughTheDatabase) {
  AttentionDesc a;
  a.batch = 1;
  a.heads_q = a.heads_kv = 8;
  a.seq_q = a.seq_k = 1024;
  a.head_dim = 64;
  const CopyDesc c{wire::CopyKind::kHostToDevice, 1 << 20, true};
  CostModel model;
  model.set_database(DbSnapshot::from_entries("h100", {row(signature(c), 30.0)}));
  EXPECT_EQ(model.cost_of_copy(c, h100()).source, CostSource::kMeasured);
  EXPECT_EQ(model.cost_of_copy(c, h100()).duration, SimTime::us(30.0));
  const CopyDesc pageable{wire::CopyKind::kHostToDevice, 1 << 20, false};
  const KernelCost modelled = model.cost_of_copy(pageable, h100());
  EXPECT_EQ(modelled.source, CostSource::kModelled);
  EXPECT_EQ(modelled.duration,
            model.copy_cost(pageable.kind, Bytes(pageable.bytes), false, h100()));
  EXPECT_EQ(model.cost_of_attention(a, h100()).source, CostSource::kModelled);
  EXPECT_EQ(model.cost_of_memory_op(MemoryOpDesc{"softmax", 1 << 20, 1 << 20}, h100()).source,
            CostSource::kModelled);
  EXPECT_EQ(model.missing().size(), 3u);
}

TEST(CostModelDb, RunHelpersLoadAndRecordThroughAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("phantora-run-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  {
    KernelDb db = KernelDb::open(path, KernelDb::Mode::kCreate);
    db.put({row(signature(gemm(4096)), 150.0)}, OnConflict::kReplace);
  }
  CostModel model;
  model.set_database(load_kernel_db(path, "h100"));
  ASSERT_NE(model.database(), nullptr);
  EXPECT_EQ(model.database()->size(), 1u);
  EXPECT_EQ(model.cost_of_gemm(gemm(4096), h100()).source, CostSource::kMeasured);
  model.cost_of_gemm(gemm(1024), h100());
  record_missing(path, model.missing());
  record_missing(path, model.missing());  // a second run adds its occurrences
  const std::vector<MissingEntry> m =
      KernelDb::open(path, KernelDb::Mode::kReadOnly).missing("h100");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].signature, signature(gemm(1024)));
  EXPECT_EQ(m[0].occurrences, 2u);
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
}

}  // namespace
}  // namespace phantora::kernels
