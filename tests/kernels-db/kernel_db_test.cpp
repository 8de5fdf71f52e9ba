#include "phantora/kernels/kernel_db.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/op_desc.hpp"

namespace phantora::kernels {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class KernelDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("phantora-kdb-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file(const std::string& name) const { return dir_ / name; }

  fs::path dir_;
};

std::string gemm_sig(uint64_t m) {
  GemmDesc d;
  d.m = m;
  d.n = d.k = 1024;
  return signature(d);
}

DbEntry entry(std::string gpu, std::string sig, double mean,
              EntrySource source = EntrySource::kMeasured) {
  DbEntry e;
  e.gpu = std::move(gpu);
  e.signature = std::move(sig);
  e.stats = DurationStats::of_samples({mean * 0.9, mean, mean * 1.1});
  e.source = source;
  e.provenance = {"NVIDIA H100 80GB HBM3", "550.54.15", "cuda=12.4;cublas=12.4.5",
                  "2025-06-01T12:00:00Z"};
  return e;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(KernelDbTest, RoundTripThroughTheFile) {
  {
    KernelDb db = KernelDb::open(file("k.db"), KernelDb::Mode::kCreate);
    EXPECT_EQ(db.schema_version(), kKernelDbSchemaVersion);
    EXPECT_EQ(db.put({entry("h100", gemm_sig(128), 10.0), entry("h100", gemm_sig(256), 20.0)},
                     OnConflict::kReplace),
              2u);
  }
  const KernelDb db = KernelDb::open(file("k.db"), KernelDb::Mode::kReadOnly);
  const auto e = db.lookup("h100", gemm_sig(256));
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->stats.mean_us, 20.0);
  EXPECT_DOUBLE_EQ(e->stats.min_us, 18.0);
  EXPECT_DOUBLE_EQ(e->stats.max_us, 22.0);
  EXPECT_DOUBLE_EQ(e->stats.stddev_us, 2.0);  // samples 18, 20, 22: sample stddev 2
  EXPECT_EQ(e->stats.count, 3u);
  EXPECT_EQ(e->provenance.driver_version, "550.54.15");
  EXPECT_FALSE(db.lookup("a100-80gb", gemm_sig(256)).has_value());  // keyed by GPU too
  EXPECT_FALSE(db.lookup("h100", gemm_sig(512)).has_value());
  EXPECT_EQ(db.entries().size(), 2u);
  EXPECT_EQ(db.gpus(), std::vector<std::string>{"h100"});
}

TEST_F(KernelDbTest, AWriteWithOneBadRowWritesNothing) {
  KernelDb db = KernelDb::open(file("k.db"), KernelDb::Mode::kCreate);
  DbEntry bad = entry("h100", "gemm:m=1", 5.0);  // not canonical
  EXPECT_THROW(db.put({entry("h100", gemm_sig(128), 10.0), bad}, OnConflict::kReplace), DataError);
  EXPECT_TRUE(db.entries().empty());
  DbEntry inverted = entry("h100", gemm_sig(64), 5.0);
  inverted.stats.min_us = 6.0;  // min above mean
  EXPECT_THROW(db.put({inverted}, OnConflict::kReplace), DataError);
  EXPECT_TRUE(db.entries().empty());
}

TEST_F(KernelDbTest, CombinePoolsEqualSourcesAndKeepsBetterOnes) {
  KernelDb db = KernelDb::open(file("k.db"), KernelDb::Mode::kCreate);
  DbEntry a = entry("h100", gemm_sig(128), 0);
  a.stats = DurationStats::of_samples({1, 2, 3});
  DbEntry b = a;
  b.stats = DurationStats::of_samples({4, 5});
  db.put({a}, OnConflict::kReplace);
  db.put({b}, OnConflict::kCombine);
  const DurationStats all = DurationStats::of_samples({1, 2, 3, 4, 5});
  const DurationStats pooled = db.lookup("h100", a.signature)->stats;
  EXPECT_EQ(pooled.count, 5u);
  EXPECT_DOUBLE_EQ(pooled.mean_us, 3.0);
  EXPECT_NEAR(pooled.stddev_us, all.stddev_us, 1e-12);  // sqrt(2.5)
  EXPECT_DOUBLE_EQ(pooled.min_us, 1.0);
  EXPECT_DOUBLE_EQ(pooled.max_us, 5.0);

  DbEntry pinned = entry("h100", gemm_sig(256), 7.0, EntrySource::kPinned);
  db.put({pinned}, OnConflict::kReplace);
  EXPECT_EQ(db.put({entry("h100", gemm_sig(256), 100.0)}, OnConflict::kCombine), 0u);
  EXPECT_DOUBLE_EQ(db.lookup("h100", pinned.signature)->stats.mean_us, 7.0);

  // A measurement beats an import; an import is replaced by a measurement.
  EXPECT_EQ(
      db.put({entry("h100", gemm_sig(128), 99.0, EntrySource::kImported)}, OnConflict::kCombine),
      0u);
  EXPECT_EQ(db.lookup("h100", a.signature)->stats.count, 5u);
  db.put({entry("h100", gemm_sig(512), 50.0, EntrySource::kImported)}, OnConflict::kReplace);
  db.put({entry("h100", gemm_sig(512), 10.0)}, OnConflict::kCombine);
  const DbEntry replaced = *db.lookup("h100", gemm_sig(512));
  EXPECT_EQ(replaced.source, EntrySource::kMeasured);
  EXPECT_DOUBLE_EQ(replaced.stats.mean_us, 10.0);
}

TEST_F(KernelDbTest, ReadersReadWhileOneWriterWrites) {
  const fs::path path = file("k.db");
  { KernelDb::open(path, KernelDb::Mode::kCreate); }
  constexpr int kBatches = 40, kBatch = 25;
  std::atomic<bool> writing{true};
  std::atomic<int> reads{0};
  std::atomic<int> torn{0};
  std::thread writer([&] {
    KernelDb db = KernelDb::open(path, KernelDb::Mode::kReadWrite);
    for (int b = 0; b < kBatches; ++b) {
      std::vector<DbEntry> rows;
      for (int i = 0; i < kBatch; ++i) {
        rows.push_back(entry("h100", gemm_sig(static_cast<uint64_t>(b * kBatch + i + 1)), 1.0));
      }
      db.put(rows, OnConflict::kReplace);
    }
    writing = false;
  });
  auto reader = [&] {
    const KernelDb db = KernelDb::open(path, KernelDb::Mode::kReadOnly);
    do {
      // A transaction is all or nothing: a reader sees whole batches only.
      if (db.entries("h100").size() % kBatch != 0) ++torn;
      ++reads;
    } while (writing);
  };
  std::thread r1(reader), r2(reader);
  writer.join();
  r1.join();
  r2.join();
  EXPECT_EQ(torn, 0);
  EXPECT_GT(reads, 2);
  EXPECT_EQ(KernelDb::open(path, KernelDb::Mode::kReadOnly).entries().size(),
            size_t{kBatches * kBatch});
}

TEST_F(KernelDbTest, CorruptForeignAndMissingFilesAreRefusedByName) {
  const fs::path garbage = file("garbage.db");
  std::ofstream(garbage) << std::string(4096, 'x');
  std::string msg = message_of([&] { KernelDb::open(garbage, KernelDb::Mode::kReadOnly); });
  EXPECT_NE(msg.find(garbage.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a Phantora kernel database"), std::string::npos) << msg;
  // kCreate must not overwrite it either.
  EXPECT_THROW(KernelDb::open(garbage, KernelDb::Mode::kCreate), DataError);

  const fs::path foreign = file("foreign.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "CREATE TABLE t (x INTEGER)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  msg = message_of([&] { KernelDb::open(foreign, KernelDb::Mode::kCreate); });
  EXPECT_NE(msg.find(foreign.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a Phantora kernel database"), std::string::npos) << msg;

  msg = message_of([&] { KernelDb::open(file("absent.db"), KernelDb::Mode::kReadOnly); });
  EXPECT_NE(msg.find("absent.db: kernel database does not exist"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(file("absent.db")));
}

TEST_F(KernelDbTest, DamagedPagesAreReported) {
  const fs::path path = file("k.db");
  {
    KernelDb db = KernelDb::open(path, KernelDb::Mode::kCreate);
    std::vector<DbEntry> rows;
    for (uint64_t m = 1; m <= 400; ++m) rows.push_back(entry("h100", gemm_sig(m), 1.0));
    db.put(rows, OnConflict::kReplace);
    sqlite3* raw = nullptr;  // fold the WAL into the main file
    sqlite3_open(path.c_str(), &raw);
    sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", nullptr,
                 nullptr, nullptr);
    sqlite3_close(raw);
  }
  // Overwrite the middle of the file (table pages) with garbage, keeping the header.
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 3 * 4096u);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(2 * 4096));
    const std::string junk(static_cast<size_t>(size) - 2 * 4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const std::string msg = message_of([&] { KernelDb::open(path, KernelDb::Mode::kReadOnly); });
  EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("corrupt"), std::string::npos) << msg;
}

TEST_F(KernelDbTest, NewerSchemaIsRefused) {
  const fs::path path = file("k.db");
  { KernelDb::open(path, KernelDb::Mode::kCreate); }
  sqlite3* raw = nullptr;
  sqlite3_open(path.c_str(), &raw);
  sqlite3_exec(raw, "UPDATE phantora_schema SET version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  const std::string msg = message_of([&] { KernelDb::open(path, KernelDb::Mode::kReadOnly); });
  EXPECT_NE(msg.find("schema version 99"), std::string::npos) << msg;
}

TEST_F(KernelDbTest, CsvExportImportRoundTripIsExact) {
  DbEntry odd = entry("h100", gemm_sig(100), 1.0 / 3.0);
  odd.provenance.device_name = "name, with \"quotes\"";
  const std::vector<DbEntry> rows = {odd,
                                     entry("a100-80gb", gemm_sig(7), 12.5, EntrySource::kPinned)};
  const std::string csv = entries_to_csv(rows);
  const std::vector<DbEntry> back = entries_from_csv(csv, "x.csv");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(entries_to_csv(back), csv);
  EXPECT_EQ(back[0].stats.mean_us, odd.stats.mean_us);  // bit for bit
  EXPECT_EQ(back[0].provenance.device_name, odd.provenance.device_name);
  EXPECT_EQ(back[1].source, EntrySource::kPinned);

  // Through a database and out again.
  KernelDb db = KernelDb::open(file("k.db"), KernelDb::Mode::kCreate);
  db.put(back, OnConflict::kReplace);
  std::vector<DbEntry> sorted = rows;
  std::sort(sorted.begin(), sorted.end(),
            [](const DbEntry& a, const DbEntry& b) { return a.gpu < b.gpu; });
  EXPECT_EQ(entries_to_csv(db.entries()), entries_to_csv(sorted));
}

TEST_F(KernelDbTest, CsvErrorsNameTheLine) {
  const std::string header =
      "gpu,signature,count,mean_us,min_us,max_us,stddev_us,source,device_name,driver_version,"
      "library_versions,recorded_at\n";
  const std::string row = "h100,\"" + gemm_sig(8) + "\",1,2,2,2,0,measured,d,v,l,t\n";
  EXPECT_EQ(entries_from_csv(header + row, "x.csv").size(), 1u);
  EXPECT_NE(message_of([&] { entries_from_csv(header + row + row, "x.csv"); }).find("x.csv:3:"),
            std::string::npos);
  const std::string negative = "h100,\"" + gemm_sig(8) + "\",1,-2,2,2,0,measured,d,v,l,t\n";
  EXPECT_NE(message_of([&] { entries_from_csv(header + negative, "x.csv"); }).find("x.csv:2:"),
            std::string::npos);
  const std::string bad_source = "h100,\"" + gemm_sig(8) + "\",1,2,2,2,0,guessed,d,v,l,t\n";
  EXPECT_NE(message_of([&] { entries_from_csv(header + bad_source, "x.csv"); }).find("guessed"),
            std::string::npos);
  EXPECT_NE(message_of([&] { entries_from_csv("a,b\n", "x.csv"); }).find("bad header"),
            std::string::npos);
}

TEST_F(KernelDbTest, MergeRefusesToMixGpuModels) {
  KernelDb h100 = KernelDb::open(file("h100.db"), KernelDb::Mode::kCreate);
  h100.put({entry("h100", gemm_sig(128), 10.0)}, OnConflict::kReplace);
  KernelDb a100 = KernelDb::open(file("a100.db"), KernelDb::Mode::kCreate);
  a100.put({entry("a100-80gb", gemm_sig(128), 30.0)}, OnConflict::kReplace);

  const std::string msg = message_of([&] { merge(h100, a100, {}); });
  EXPECT_NE(msg.find("refusing to merge"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--rescale-from a100-80gb --rescale-to h100"), std::string::npos) << msg;
  EXPECT_EQ(h100.entries().size(), 1u);  // unchanged
  EXPECT_DOUBLE_EQ(h100.lookup("h100", gemm_sig(128))->stats.mean_us, 10.0);

  // Same model: pooled.
  KernelDb more = KernelDb::open(file("more.db"), KernelDb::Mode::kCreate);
  more.put({entry("h100", gemm_sig(128), 10.0), entry("h100", gemm_sig(64), 5.0)},
           OnConflict::kReplace);
  EXPECT_EQ(merge(h100, more, {}).written, 2u);
  EXPECT_EQ(h100.lookup("h100", gemm_sig(128))->stats.count, 6u);
}

TEST_F(KernelDbTest, MergeRescalesByTheBoundingPeak) {
  KernelDb a100 = KernelDb::open(file("a100.db"), KernelDb::Mode::kCreate);
  const std::string copy = signature(CopyDesc{wire::CopyKind::kDeviceToDevice, 1 << 30, true});
  a100.put({entry("a100-80gb", gemm_sig(128), 31.2), entry("a100-80gb", copy, 1000.0)},
           OnConflict::kReplace);
  KernelDb h100 = KernelDb::open(file("h100.db"), KernelDb::Mode::kCreate);
  h100.put({entry("h100", gemm_sig(4), 1.0)}, OnConflict::kReplace);

  MergeOptions opt;
  opt.rescale_from = "a100";  // aliases are fine
  opt.rescale_to = "h100";
  EXPECT_EQ(merge(h100, a100, opt).written, 2u);
  // bf16 GEMM: × the sustained compute rates, A100 312 × 1410/1410 over H100 989.4 × 1575/1830
  // (gpus.toml's clocks); device copy: × HBM 2039 / 3350, not scaled by any SM clock.
  const DbEntry g = *h100.lookup("h100", gemm_sig(128));
  EXPECT_NEAR(g.stats.mean_us, 31.2 * 312.0 / (989.4 * 1575.0 / 1830.0), 1e-9);
  EXPECT_EQ(g.source, EntrySource::kImported);
  EXPECT_NE(g.provenance.library_versions.find("rescaled-from=a100-80gb"), std::string::npos);
  EXPECT_NEAR(h100.lookup("h100", copy)->stats.mean_us, 1000.0 * 2039.0 / 3350.0, 1e-9);
  EXPECT_FALSE(h100.lookup("a100-80gb", copy).has_value());

  const GpuCatalog& cat = GpuCatalog::builtin();
  // H100 and H200 share the GH100 tensor cores, not the HBM nor the clock they sustain at 700 W
  // (1575 and 1500 MHz, gpus.toml).
  EXPECT_NEAR(rescale_factor(gemm_sig(64), cat.find("h100"), cat.find("h200")), 1575.0 / 1500.0,
              1e-12);
  EXPECT_DOUBLE_EQ(rescale_factor(copy, cat.find("h100"), cat.find("h200")), 3350.0 / 4800.0);
  // A 500 W limit slows compute by the clock, not bytes.
  EXPECT_NEAR(rescale_factor(gemm_sig(64), cat.find("h100"), cat.find("h100-500w")),
              1575.0 / 1410.0, 1e-12);
  EXPECT_DOUBLE_EQ(rescale_factor(copy, cat.find("h100"), cat.find("h100-500w")), 1.0);
}

TEST_F(KernelDbTest, MissingSignaturesAccumulateAndArePruned) {
  KernelDb db = KernelDb::open(file("k.db"), KernelDb::Mode::kCreate);
  db.add_missing({{"h100", gemm_sig(8), 3, 5.0}, {"h100", gemm_sig(16), 1, 50.0}});
  db.add_missing({{"h100", gemm_sig(8), 2, 5.0}});
  const std::vector<MissingEntry> m = db.missing("h100");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].signature, gemm_sig(16));  // 50 µs in total before 25 µs
  EXPECT_EQ(m[1].occurrences, 5u);
  db.put({entry("h100", gemm_sig(8), 4.0)}, OnConflict::kReplace);
  EXPECT_EQ(db.prune_missing(), 1u);
  EXPECT_EQ(db.missing().size(), 1u);
}

}  // namespace
}  // namespace phantora::kernels
