// The kernel database: measured durations of GPU operations keyed by GPU model and canonical
// signature (op_desc.hpp), stored in SQLite. Schema, CSV columns and merge rules:
// docs/kernels-db.md.
//
// Many processes may read one file while one writes: the file is in WAL mode, every write is
// one transaction (all of a call's rows or none), and readers can open it read-only. A file
// that is not a Phantora kernel database, a corrupt one, or one from a newer schema is refused
// with a DataError naming the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct sqlite3;

namespace phantora::kernels {

class GpuCatalog;
struct GpuPreset;

inline constexpr int kKernelDbSchemaVersion = 2;
inline constexpr int32_t kKernelDbApplicationId = 0x50484b44;  // "PHKD" in the SQLite header

// Where a row came from: measured by `phantora db profile`, imported from a CSV or another
// database (possibly rescaled), or pinned by the user (never overwritten by a merge).
enum class EntrySource : uint8_t { kMeasured, kImported, kPinned };
std::string_view to_string(EntrySource s);
std::optional<EntrySource> parse_entry_source(std::string_view name);

// Statistics of the measured durations, in microseconds. stddev is the sample standard
// deviation (n - 1), 0 for a single sample.
struct DurationStats {
  uint64_t count = 0;
  double mean_us = 0, min_us = 0, max_us = 0, stddev_us = 0;

  static DurationStats of_samples(const std::vector<double>& samples_us);
  // The statistics of both sample sets together (Chan et al.'s pairwise update).
  static DurationStats combine(const DurationStats& a, const DurationStats& b);
  DurationStats scaled(double factor) const;
};

struct Provenance {
  std::string device_name;       // as the device reported it, e.g. "NVIDIA H100 80GB HBM3"
  std::string driver_version;    // e.g. "550.54.15"
  std::string library_versions;  // e.g. "cuda=12.4;cublas=12.4.5"
  std::string recorded_at;       // ISO 8601 UTC, e.g. "2025-06-01T12:00:00Z"
};

// The operation timed `length` times back to back between one pair of events: the duration of
// one launch in such a sequence (schema version 2, table `sequences`). A training step runs its
// kernels back to back, so where a row has one it prices the operation (docs/kernels-db.md,
// "Back to back").
struct SequenceStats {
  uint32_t length = 0;
  DurationStats per_launch;
};

struct DbEntry {
  std::string gpu;        // GPU preset key (gpus.toml), e.g. "h100"
  std::string signature;  // canonical (op_desc.hpp)
  DurationStats stats;    // each launch timed alone, between its own pair of events
  EntrySource source = EntrySource::kMeasured;
  Provenance provenance;
  std::optional<SequenceStats> back_to_back;
};

// A measured property of a GPU rather than of one operation (schema version 2, table
// `device_facts`), e.g. kLaunchRoundTrip.
struct DeviceFact {
  std::string gpu;
  std::string name;
  DurationStats stats;
  Provenance provenance;
};

// Host-observed time from an operation's launch on an idle GPU to its completion being seen by
// the host, less the operation's own duration: what the engine's launch latency stands for.
inline constexpr std::string_view kLaunchRoundTrip = "launch_round_trip";

// A signature a run had to model because the database did not have it.
struct MissingEntry {
  std::string gpu;
  std::string signature;
  uint64_t occurrences = 0;
  double modelled_us = 0;  // what the model charged for one occurrence
};

enum class OnConflict : uint8_t {
  kReplace,  // the new row replaces the stored one (import)
  // The better source wins (pinned > measured > imported); equal sources pool their statistics
  // and keep the stored provenance (merge, profile).
  kCombine,
};

class KernelDb {
 public:
  enum class Mode : uint8_t {
    kReadOnly,   // the file must exist; nothing is ever written
    kReadWrite,  // the file must exist
    kCreate,     // created (with the schema) when absent
  };

  static KernelDb open(const std::filesystem::path& path, Mode mode);
  ~KernelDb();
  KernelDb(KernelDb&& other) noexcept;
  KernelDb& operator=(KernelDb&& other) noexcept;
  KernelDb(const KernelDb&) = delete;
  KernelDb& operator=(const KernelDb&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const { return schema_version_; }

  std::optional<DbEntry> lookup(std::string_view gpu, std::string_view signature) const;
  // Rows of one GPU (all GPUs when empty), ordered by GPU and signature.
  std::vector<DbEntry> entries(std::string_view gpu = {}) const;
  std::vector<std::string> gpus() const;  // GPU keys that have rows, sorted

  // One transaction: every row is checked (canonical signature, sane statistics) before any is
  // written; on an error nothing changes. Returns the number of rows written or combined.
  size_t put(const std::vector<DbEntry>& rows, OnConflict on_conflict);

  // Device facts: put replaces the stored fact of that GPU and name.
  void put_fact(const DeviceFact& fact);
  std::optional<DeviceFact> fact(std::string_view gpu, std::string_view name) const;

  // Adds occurrences to the missing table (one transaction).
  void add_missing(const std::vector<MissingEntry>& rows);
  std::vector<MissingEntry> missing(std::string_view gpu = {}) const;
  // Forgets missing signatures that now have a row (after profiling). Returns how many.
  size_t prune_missing();

 private:
  KernelDb(std::filesystem::path path, sqlite3* db, int version);
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  int schema_version_ = 0;
};

// The rows of one GPU held in memory: what the daemon looks up per launch without touching the
// file again.
class DbSnapshot {
 public:
  static std::shared_ptr<const DbSnapshot> load(const KernelDb& db, std::string_view gpu);
  static std::shared_ptr<const DbSnapshot> from_entries(std::string gpu, std::vector<DbEntry> rows);

  const DbEntry* find(std::string_view signature) const;
  const std::string& gpu() const { return gpu_; }
  size_t size() const { return by_signature_.size(); }
  // The measured launch round trip of this GPU (kLaunchRoundTrip), if the database has one.
  std::optional<double> launch_round_trip_us() const { return launch_round_trip_us_; }

 private:
  std::string gpu_;
  std::unordered_map<std::string, DbEntry> by_signature_;
  std::optional<double> launch_round_trip_us_;
};

// CSV with the header of docs/kernels-db.md:
// gpu,signature,count,mean_us,min_us,max_us,stddev_us,source,device_name,driver_version,
// library_versions,recorded_at
std::string entries_to_csv(const std::vector<DbEntry>& rows);
// Throws DataError naming source:line for any bad row; a signature must be canonical.
std::vector<DbEntry> entries_from_csv(std::string_view text, std::string_view source);
std::vector<DbEntry> entries_from_csv_file(const std::filesystem::path& path);

// CSV of missing signatures: gpu,signature,occurrences,modelled_us
std::string missing_to_csv(const std::vector<MissingEntry>& rows);

// How a duration measured on `from` maps to `to`: multiply by peak(from) / peak(to), with the
// peak that bounds the operation: the GEMM's input-type tensor peak, the attention dtype's
// peak, the copy kind's link (PCIe, HBM, NVLink) and HBM for memory-bound and other kernels.
double rescale_factor(std::string_view signature, const GpuPreset& from, const GpuPreset& to);

struct MergeOptions {
  // Rescale rows of GPU `rescale_from` to GPU `rescale_to` (both preset keys or aliases).
  std::optional<std::string> rescale_from, rescale_to;
  const GpuCatalog* catalog = nullptr;  // the built-in catalog when null
};

struct MergeResult {
  size_t written = 0;  // rows added or pooled into existing ones
  size_t kept = 0;     // rows skipped: the destination's row has a better source
};

// Merges `source` into `dest` in one transaction. Without rescaling, refuses (DataError) when
// the destination is not empty and the source holds a GPU model the destination does not: a
// merge never mixes measurements of different models by accident. With rescaling, takes only
// the source's rows of `rescale_from` and stores them as `rescale_to`, durations multiplied by
// rescale_factor, source "imported" and a provenance note. Rows meet existing ones under
// OnConflict::kCombine.
MergeResult merge(KernelDb& dest, const KernelDb& source, const MergeOptions& options);

}  // namespace phantora::kernels
