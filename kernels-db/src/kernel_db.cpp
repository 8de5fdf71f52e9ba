#include "phantora/kernels/kernel_db.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "sqlite.hpp"

namespace phantora::kernels {
namespace {

using detail::Statement;

constexpr std::string_view kFormat = "phantora-kernel-db";

// The schema of version 1; docs/kernels-db.md describes every column.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE phantora_schema (
  format     TEXT NOT NULL,
  version    INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE entries (
  gpu              TEXT NOT NULL,
  signature        TEXT NOT NULL,
  family           TEXT NOT NULL,
  count            INTEGER NOT NULL CHECK (count > 0),
  mean_us          REAL NOT NULL CHECK (mean_us >= 0),
  min_us           REAL NOT NULL,
  max_us           REAL NOT NULL,
  stddev_us        REAL NOT NULL CHECK (stddev_us >= 0),
  source           TEXT NOT NULL CHECK (source IN ('measured', 'imported', 'pinned')),
  device_name      TEXT NOT NULL,
  driver_version   TEXT NOT NULL,
  library_versions TEXT NOT NULL,
  recorded_at      TEXT NOT NULL,
  PRIMARY KEY (gpu, signature)
) WITHOUT ROWID;
CREATE TABLE missing (
  gpu         TEXT NOT NULL,
  signature   TEXT NOT NULL,
  occurrences INTEGER NOT NULL CHECK (occurrences > 0),
  modelled_us REAL NOT NULL,
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  PRIMARY KEY (gpu, signature)
) WITHOUT ROWID;
)sql";

// Added in version 2 (a version-1 file opened for writing gets them).
constexpr const char* kSchemaV2Tables = R"sql(
CREATE TABLE IF NOT EXISTS sequences (
  gpu        TEXT NOT NULL,
  signature  TEXT NOT NULL,
  length     INTEGER NOT NULL CHECK (length > 0),
  count      INTEGER NOT NULL CHECK (count > 0),
  mean_us    REAL NOT NULL CHECK (mean_us >= 0),
  min_us     REAL NOT NULL,
  max_us     REAL NOT NULL,
  stddev_us  REAL NOT NULL CHECK (stddev_us >= 0),
  PRIMARY KEY (gpu, signature)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS device_facts (
  gpu              TEXT NOT NULL,
  name             TEXT NOT NULL,
  count            INTEGER NOT NULL CHECK (count > 0),
  mean_us          REAL NOT NULL,
  min_us           REAL NOT NULL,
  max_us           REAL NOT NULL,
  stddev_us        REAL NOT NULL CHECK (stddev_us >= 0),
  device_name      TEXT NOT NULL,
  driver_version   TEXT NOT NULL,
  library_versions TEXT NOT NULL,
  recorded_at      TEXT NOT NULL,
  PRIMARY KEY (gpu, name)
) WITHOUT ROWID;
)sql";

constexpr const char* kEntryColumns =
    "gpu, signature, count, mean_us, min_us, max_us, stddev_us, source, device_name, "
    "driver_version, library_versions, recorded_at";

DbEntry read_entry(const Statement& s, const std::string& file) {
  DbEntry e;
  e.gpu = s.text(0);
  e.signature = s.text(1);
  e.stats.count = static_cast<uint64_t>(s.integer(2));
  e.stats.mean_us = s.real(3);
  e.stats.min_us = s.real(4);
  e.stats.max_us = s.real(5);
  e.stats.stddev_us = s.real(6);
  const std::optional<EntrySource> source = parse_entry_source(s.text(7));
  if (!source)
    throw DataError(fmt::format("{}: row '{}' has an unknown source", file, e.signature));
  e.source = *source;
  e.provenance = {s.text(8), s.text(9), s.text(10), s.text(11)};
  return e;
}

// Rows with their back-to-back statistics: `entries` left-joined with `sequences` (a version-1
// file opened read-only has no such table: nothing to join).
std::string select_entries(bool has_sequences, std::string_view where) {
  std::string cols;
  for (std::string_view c :
       {"gpu", "signature", "count", "mean_us", "min_us", "max_us", "stddev_us", "source",
        "device_name", "driver_version", "library_versions", "recorded_at"}) {
    cols += fmt::format("{}e.{}", cols.empty() ? "" : ", ", c);
  }
  if (!has_sequences) return fmt::format("SELECT {} FROM entries e {}", cols, where);
  return fmt::format(
      "SELECT {}, q.length, q.count, q.mean_us, q.min_us, q.max_us, q.stddev_us FROM entries e "
      "LEFT JOIN sequences q ON q.gpu = e.gpu AND q.signature = e.signature {}",
      cols, where);
}

DbEntry read_joined(const Statement& s, const std::string& file, bool has_sequences) {
  DbEntry e = read_entry(s, file);
  if (has_sequences && s.integer(12) > 0) {
    SequenceStats q;
    q.length = static_cast<uint32_t>(s.integer(12));
    q.per_launch.count = static_cast<uint64_t>(s.integer(13));
    q.per_launch.mean_us = s.real(14);
    q.per_launch.min_us = s.real(15);
    q.per_launch.max_us = s.real(16);
    q.per_launch.stddev_us = s.real(17);
    e.back_to_back = q;
  }
  return e;
}

bool has_table(sqlite3* db, const std::string& file, std::string_view table) {
  Statement s(db, file, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
  s.bind(1, table);
  return s.step() && s.integer(0) > 0;
}

void check_entry(const DbEntry& e, std::string_view file) {
  auto fail = [&](std::string_view what) {
    throw DataError(fmt::format("{}: row ({}, {}): {}", file, e.gpu, e.signature, what));
  };
  if (e.gpu.empty()) fail("empty GPU model");
  if (!is_canonical_signature(e.signature)) fail("not a canonical signature (docs/kernels-db.md)");
  const DurationStats& s = e.stats;
  auto check_stats = [&](const DurationStats& s) {
    if (s.count == 0) fail("count must be positive");
    for (double v : {s.mean_us, s.min_us, s.max_us, s.stddev_us}) {
      if (!std::isfinite(v) || v < 0) fail("durations must be finite and not negative");
    }
    if (!(s.min_us <= s.mean_us && s.mean_us <= s.max_us))
      fail("needs min_us <= mean_us <= max_us");
  };
  check_stats(s);
  if (e.back_to_back) {
    if (e.back_to_back->length == 0) fail("a back-to-back sequence needs a length");
    check_stats(e.back_to_back->per_launch);
  }
}

// Which row wins when two meet under OnConflict::kCombine: the user's pin, then a measurement on
// this GPU, then an import (possibly rescaled from another GPU). Equal ranks pool.
int source_rank(EntrySource s) {
  switch (s) {
    case EntrySource::kPinned:
      return 2;
    case EntrySource::kMeasured:
      return 1;
    case EntrySource::kImported:
      return 0;
  }
  return 0;
}

int check_or_create_schema(sqlite3* db, const std::string& file, KernelDb::Mode mode) {
  int32_t app_id = 0;
  {
    Statement s(db, file, "PRAGMA application_id");
    if (s.step()) app_id = static_cast<int32_t>(s.integer(0));
  }
  if (app_id == 0 && mode == KernelDb::Mode::kCreate) {
    int64_t objects = 0;
    {
      Statement s(db, file, "SELECT count(*) FROM sqlite_master");
      if (s.step()) objects = s.integer(0);
    }
    if (objects == 0) {
      // WAL lets readers go on while one process writes; the mode is stored in the file.
      detail::exec(db, file, "PRAGMA journal_mode=WAL");
      detail::Transaction tx(db, file);
      Statement again(db, file, "SELECT count(*) FROM sqlite_master");
      if (again.step() && again.integer(0) == 0) {  // nobody created it meanwhile
        detail::exec(db, file, kSchemaV1);
        detail::exec(db, file, kSchemaV2Tables);
        Statement ins(db, file,
                      "INSERT INTO phantora_schema VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ'))");
        ins.bind(1, kFormat).bind(2, int64_t{kKernelDbSchemaVersion});
        ins.step();
        detail::exec(db, file, fmt::format("PRAGMA application_id={}", kKernelDbApplicationId));
      }
      tx.commit();
      app_id = kKernelDbApplicationId;
    }
  }
  if (app_id != kKernelDbApplicationId) {
    throw DataError(
        fmt::format("{}: not a Phantora kernel database (an SQLite file with application_id {:#x}, "
                    "expected {:#x})",
                    file, static_cast<uint32_t>(app_id), kKernelDbApplicationId));
  }
  std::string format;
  int64_t version = 0;
  {
    Statement s(db, file, "SELECT format, version FROM phantora_schema");
    if (!s.step()) throw DataError(fmt::format("{}: kernel database without a schema row", file));
    format = s.text(0);
    version = s.integer(1);
  }
  if (format != kFormat) {
    throw DataError(fmt::format("{}: not a Phantora kernel database (format '{}')", file, format));
  }
  if (version < 1 || version > kKernelDbSchemaVersion) {
    throw DataError(
        fmt::format("{}: kernel database schema version {}; this build reads versions 1 to {}",
                    file, version, kKernelDbSchemaVersion));
  }
  if (version == 1 && mode != KernelDb::Mode::kReadOnly) {
    // Version 2 only adds tables: a version-1 file opened for writing becomes version 2.
    detail::Transaction tx(db, file);
    detail::exec(db, file, kSchemaV2Tables);
    detail::exec(db, file,
                 fmt::format("UPDATE phantora_schema SET version = {}", kKernelDbSchemaVersion));
    tx.commit();
    version = kKernelDbSchemaVersion;
  }
  // A damaged page shows up here rather than in the middle of a run.
  Statement check(db, file, "PRAGMA quick_check");
  if (check.step() && check.text(0) != "ok") {
    throw DataError(fmt::format("{}: corrupt kernel database: {}", file, check.text(0)));
  }
  return static_cast<int>(version);
}

}  // namespace

std::string_view to_string(EntrySource s) {
  switch (s) {
    case EntrySource::kMeasured:
      return "measured";
    case EntrySource::kImported:
      return "imported";
    case EntrySource::kPinned:
      return "pinned";
  }
  return "unknown";
}

std::optional<EntrySource> parse_entry_source(std::string_view name) {
  for (EntrySource s : {EntrySource::kMeasured, EntrySource::kImported, EntrySource::kPinned}) {
    if (to_string(s) == name) return s;
  }
  return std::nullopt;
}

DurationStats DurationStats::of_samples(const std::vector<double>& samples_us) {
  DurationStats s;
  if (samples_us.empty()) return s;
  s.count = samples_us.size();
  s.min_us = *std::min_element(samples_us.begin(), samples_us.end());
  s.max_us = *std::max_element(samples_us.begin(), samples_us.end());
  double sum = 0;
  for (double v : samples_us) sum += v;
  s.mean_us = sum / static_cast<double>(s.count);
  double m2 = 0;
  for (double v : samples_us) m2 += (v - s.mean_us) * (v - s.mean_us);
  s.stddev_us = s.count > 1 ? std::sqrt(m2 / static_cast<double>(s.count - 1)) : 0.0;
  return s;
}

DurationStats DurationStats::combine(const DurationStats& a, const DurationStats& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  const double na = static_cast<double>(a.count), nb = static_cast<double>(b.count);
  const double n = na + nb;
  const double delta = b.mean_us - a.mean_us;
  const double m2a = a.stddev_us * a.stddev_us * (na - 1);
  const double m2b = b.stddev_us * b.stddev_us * (nb - 1);
  const double m2 = m2a + m2b + delta * delta * na * nb / n;
  DurationStats s;
  s.count = a.count + b.count;
  s.mean_us = a.mean_us + delta * nb / n;
  s.min_us = std::min(a.min_us, b.min_us);
  s.max_us = std::max(a.max_us, b.max_us);
  s.stddev_us = std::sqrt(std::max(0.0, m2 / (n - 1)));
  return s;
}

DurationStats DurationStats::scaled(double factor) const {
  DurationStats s = *this;
  s.mean_us *= factor;
  s.min_us *= factor;
  s.max_us *= factor;
  s.stddev_us *= factor;
  return s;
}

KernelDb::KernelDb(std::filesystem::path path, sqlite3* db, int version)
    : db_(db), path_(std::move(path)), schema_version_(version) {}

KernelDb::~KernelDb() {
  sqlite3_close(db_);
}

KernelDb::KernelDb(KernelDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      schema_version_(other.schema_version_) {}

KernelDb& KernelDb::operator=(KernelDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    schema_version_ = other.schema_version_;
  }
  return *this;
}

KernelDb KernelDb::open(const std::filesystem::path& path, Mode mode) {
  const std::string file = path.string();
  std::error_code ec;
  if (mode != Mode::kCreate && !std::filesystem::exists(path, ec)) {
    throw DataError(fmt::format("{}: kernel database does not exist", file));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw DataError(fmt::format("{}: is a directory, not a kernel database", file));
  }
  const int flags = mode == Mode::kReadOnly    ? SQLITE_OPEN_READONLY
                    : mode == Mode::kReadWrite ? SQLITE_OPEN_READWRITE
                                               : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw DataError(fmt::format("{}: cannot open kernel database: {}", file, msg));
  }
  // Writers hold the lock for one short transaction; others wait for it instead of failing.
  sqlite3_busy_timeout(db, 10000);
  try {
    const int version = check_or_create_schema(db, file, mode);
    return KernelDb(path, db, version);
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
}

std::optional<DbEntry> KernelDb::lookup(std::string_view gpu, std::string_view signature) const {
  const bool seq = has_table(db_, path_.string(), "sequences");
  Statement s(db_, path_.string(), select_entries(seq, "WHERE e.gpu = ? AND e.signature = ?"));
  s.bind(1, gpu).bind(2, signature);
  if (!s.step()) return std::nullopt;
  return read_joined(s, path_.string(), seq);
}

std::vector<DbEntry> KernelDb::entries(std::string_view gpu) const {
  const bool seq = has_table(db_, path_.string(), "sequences");
  const std::string where = gpu.empty() ? "" : "WHERE e.gpu = ? ";
  Statement s(db_, path_.string(), select_entries(seq, where + "ORDER BY e.gpu, e.signature"));
  if (!gpu.empty()) s.bind(1, gpu);
  std::vector<DbEntry> out;
  while (s.step()) out.push_back(read_joined(s, path_.string(), seq));
  return out;
}

void KernelDb::put_fact(const DeviceFact& f) {
  const std::string file = path_.string();
  if (f.gpu.empty() || f.name.empty() || f.stats.count == 0 || !std::isfinite(f.stats.mean_us)) {
    throw DataError(
        fmt::format("{}: device fact ({}, {}) without GPU, name or samples", file, f.gpu, f.name));
  }
  detail::Transaction tx(db_, file);
  Statement s(db_, file,
              "INSERT OR REPLACE INTO device_facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, f.gpu).bind(2, f.name).bind(3, static_cast<int64_t>(f.stats.count));
  s.bind(4, f.stats.mean_us).bind(5, f.stats.min_us).bind(6, f.stats.max_us);
  s.bind(7, f.stats.stddev_us).bind(8, f.provenance.device_name);
  s.bind(9, f.provenance.driver_version).bind(10, f.provenance.library_versions);
  s.bind(11, f.provenance.recorded_at);
  s.step();
  tx.commit();
}

std::optional<DeviceFact> KernelDb::fact(std::string_view gpu, std::string_view name) const {
  const std::string file = path_.string();
  if (!has_table(db_, file, "device_facts")) return std::nullopt;
  Statement s(db_, file,
              "SELECT count, mean_us, min_us, max_us, stddev_us, device_name, driver_version, "
              "library_versions, recorded_at FROM device_facts WHERE gpu = ? AND name = ?");
  s.bind(1, gpu).bind(2, name);
  if (!s.step()) return std::nullopt;
  DeviceFact f;
  f.gpu = std::string(gpu);
  f.name = std::string(name);
  f.stats = {static_cast<uint64_t>(s.integer(0)), s.real(1), s.real(2), s.real(3), s.real(4)};
  f.provenance = {s.text(5), s.text(6), s.text(7), s.text(8)};
  return f;
}

std::vector<std::string> KernelDb::gpus() const {
  Statement s(db_, path_.string(), "SELECT DISTINCT gpu FROM entries ORDER BY gpu");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

size_t KernelDb::put(const std::vector<DbEntry>& rows, OnConflict on_conflict) {
  const std::string file = path_.string();
  for (const DbEntry& e : rows) check_entry(e, file);
  detail::Transaction tx(db_, file);
  Statement upsert(db_, file,
                   fmt::format("INSERT OR REPLACE INTO entries ({}, family) VALUES "
                               "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               kEntryColumns));
  const bool seq = has_table(db_, file, "sequences");
  Statement find(db_, file, select_entries(seq, "WHERE e.gpu = ? AND e.signature = ?"));
  Statement put_sequence(
      db_, file,
      seq ? "INSERT OR REPLACE INTO sequences VALUES (?, ?, ?, ?, ?, ?, ?, ?)" : "SELECT 1");
  size_t written = 0;
  for (const DbEntry& incoming : rows) {
    DbEntry row = incoming;
    if (on_conflict == OnConflict::kCombine) {
      find.reset();
      find.bind(1, row.gpu).bind(2, row.signature);
      if (find.step()) {
        const DbEntry stored = read_joined(find, file, seq);
        const int have = source_rank(stored.source), incoming_rank = source_rank(row.source);
        if (have > incoming_rank) continue;  // e.g. a measurement beats a rescaled import
        if (have == incoming_rank) {
          row.stats = DurationStats::combine(stored.stats, row.stats);
          row.provenance = stored.provenance;  // the first measurement's provenance stays
          // Sequences of the same length pool; a new length replaces the old one.
          if (stored.back_to_back && row.back_to_back &&
              stored.back_to_back->length == row.back_to_back->length) {
            row.back_to_back->per_launch = DurationStats::combine(stored.back_to_back->per_launch,
                                                                  row.back_to_back->per_launch);
          } else if (!row.back_to_back) {
            row.back_to_back = stored.back_to_back;
          }
        }
      }
    }
    upsert.reset();
    upsert.bind(1, row.gpu).bind(2, row.signature);
    upsert.bind(3, static_cast<int64_t>(row.stats.count));
    upsert.bind(4, row.stats.mean_us).bind(5, row.stats.min_us).bind(6, row.stats.max_us);
    upsert.bind(7, row.stats.stddev_us).bind(8, to_string(row.source));
    upsert.bind(9, row.provenance.device_name).bind(10, row.provenance.driver_version);
    upsert.bind(11, row.provenance.library_versions).bind(12, row.provenance.recorded_at);
    upsert.bind(13, signature_family(row.signature));
    upsert.step();
    if (!row.back_to_back && seq) {
      Statement drop(db_, file, "DELETE FROM sequences WHERE gpu = ? AND signature = ?");
      drop.bind(1, row.gpu).bind(2, row.signature);
      drop.step();
    }
    if (row.back_to_back) {
      if (!seq) throw DataError(fmt::format("{}: opened read-only", file));
      const DurationStats& q = row.back_to_back->per_launch;
      put_sequence.reset();
      put_sequence.bind(1, row.gpu).bind(2, row.signature);
      put_sequence.bind(3, static_cast<int64_t>(row.back_to_back->length));
      put_sequence.bind(4, static_cast<int64_t>(q.count)).bind(5, q.mean_us);
      put_sequence.bind(6, q.min_us).bind(7, q.max_us).bind(8, q.stddev_us);
      put_sequence.step();
    }
    ++written;
  }
  tx.commit();
  return written;
}

void KernelDb::add_missing(const std::vector<MissingEntry>& rows) {
  const std::string file = path_.string();
  detail::Transaction tx(db_, file);
  Statement s(db_, file,
              "INSERT INTO missing VALUES (?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ'), "
              "strftime('%Y-%m-%dT%H:%M:%SZ')) ON CONFLICT (gpu, signature) DO UPDATE SET "
              "occurrences = occurrences + excluded.occurrences, "
              "modelled_us = excluded.modelled_us, last_seen = excluded.last_seen");
  for (const MissingEntry& m : rows) {
    if (m.occurrences == 0) continue;
    s.reset();
    s.bind(1, m.gpu).bind(2, m.signature).bind(3, static_cast<int64_t>(m.occurrences));
    s.bind(4, m.modelled_us);
    s.step();
  }
  tx.commit();
}

std::vector<MissingEntry> KernelDb::missing(std::string_view gpu) const {
  const std::string where = gpu.empty() ? "" : " WHERE gpu = ?";
  Statement s(db_, path_.string(),
              fmt::format("SELECT gpu, signature, occurrences, modelled_us FROM missing{} "
                          "ORDER BY occurrences * modelled_us DESC, gpu, signature",
                          where));
  if (!gpu.empty()) s.bind(1, gpu);
  std::vector<MissingEntry> out;
  while (s.step()) {
    out.push_back({s.text(0), s.text(1), static_cast<uint64_t>(s.integer(2)), s.real(3)});
  }
  return out;
}

size_t KernelDb::prune_missing() {
  const std::string file = path_.string();
  detail::Transaction tx(db_, file);
  detail::exec(db_, file,
               "DELETE FROM missing WHERE EXISTS (SELECT 1 FROM entries e WHERE "
               "e.gpu = missing.gpu AND e.signature = missing.signature)");
  const auto removed = static_cast<size_t>(sqlite3_changes(db_));
  tx.commit();
  return removed;
}

std::shared_ptr<const DbSnapshot> DbSnapshot::load(const KernelDb& db, std::string_view gpu) {
  auto snap = from_entries(std::string(gpu), db.entries(gpu));
  if (auto f = db.fact(gpu, kLaunchRoundTrip)) {
    std::const_pointer_cast<DbSnapshot>(snap)->launch_round_trip_us_ = f->stats.mean_us;
  }
  return snap;
}

std::shared_ptr<const DbSnapshot> DbSnapshot::from_entries(std::string gpu,
                                                           std::vector<DbEntry> rows) {
  auto snap = std::make_shared<DbSnapshot>();
  snap->gpu_ = std::move(gpu);
  for (DbEntry& e : rows) {
    if (e.gpu != snap->gpu_) continue;
    std::string key = e.signature;
    snap->by_signature_.emplace(std::move(key), std::move(e));
  }
  return snap;
}

const DbEntry* DbSnapshot::find(std::string_view signature) const {
  const auto it = by_signature_.find(std::string(signature));
  return it == by_signature_.end() ? nullptr : &it->second;
}

}  // namespace phantora::kernels
