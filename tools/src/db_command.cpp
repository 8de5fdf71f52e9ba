#include "db_command.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "db_calibrate.hpp"
#include "db_profile.hpp"
#include "numeric_options.hpp"
#include "phantora/kernels/analytical_model.hpp"
#include "phantora/kernels/cost_model.hpp"
#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_db.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "phantora/profiler/launch_records.hpp"
#include "phantora/profiler/measure.hpp"

namespace phantora::tools {

using kernels::DataError;
using kernels::DbEntry;
using kernels::KernelDb;

struct DbCommand::Options {
  CLI::App *list = nullptr, *show = nullptr, *estimate = nullptr, *stats = nullptr,
           *import = nullptr, *export_ = nullptr, *merge = nullptr, *missing = nullptr,
           *profile = nullptr, *calibrate = nullptr;
  std::string db;
  std::string other;  // CSV file, source database or output
  std::string signature;
  std::string gpu;
  std::string family;
  std::string source;
  size_t limit = 0;
  bool combine = false;
  std::string rescale_from, rescale_to;
  ProfileRequest profile_request;  // profile's own options (db and gpu are copied in)
  std::string cuda_library;
};

namespace {

// The canonical key of a --gpu argument (aliases accepted); empty stays empty.
std::string gpu_key(const std::string& name) {
  if (name.empty()) return {};
  return kernels::GpuCatalog::builtin().find(name).key;
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  // Written beside the target and renamed: a failed export leaves no half file behind.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw DataError(fmt::format("{}: cannot write", path));
    out << text;
    if (!out.flush()) throw DataError(fmt::format("{}: write failed", path));
  }
  std::filesystem::rename(tmp, path);
}

std::string short_stats(const DbEntry& e) {
  return fmt::format("{:>12.3f} {:>8}", e.stats.mean_us, e.stats.count);
}

// What a run without the database charges for a signature (CostModel, as the daemon prices it)
// and, where an analytical model priced it, what that price is made of. Null for kernels known
// only by name, whose price depends on the launch, and for a GPU the catalog lacks.
struct ModelPrice {
  kernels::KernelCost cost;
  std::optional<kernels::Estimate> terms;
  bool tiled = false;  // a GEMM or convolution: its compute runs in waves of output tiles
};

std::optional<ModelPrice> model_price(const kernels::OpDesc& op, const std::string& gpu) {
  const kernels::GpuPreset* preset = kernels::GpuCatalog::builtin().try_find(gpu);
  if (preset == nullptr) return std::nullopt;
  const kernels::CostModel model;  // no database: the models alone
  auto cost = model.cost_of(op, *preset);
  if (!cost) return std::nullopt;
  return ModelPrice{std::move(*cost),
                    kernels::analytical_estimate(op, *preset, model.model_params()),
                    std::holds_alternative<kernels::GemmDesc>(op) ||
                        std::holds_alternative<kernels::ConvDesc>(op)};
}

// What the model's price is made of (docs/cost-model.md): the compute and memory terms, and for
// a GEMM its waves of tiles and how its K was split, with the split's reduction kernel, and the
// rate its operands' alignment leaves it when their columns are not 16-byte aligned; for a
// convolution in NCHW, the transposes to and from channels-last.
void print_model_terms(const ModelPrice& price) {
  if (!price.terms) return;
  const kernels::Estimate& m = *price.terms;
  fmt::print("  model terms      compute {:.3f} us, memory {:.3f} us", m.compute_us, m.memory_us);
  if (price.tiled) {
    fmt::print("; {:g} wave(s) of {:g} x {:g} tiles, K in {:g} slice(s)", m.waves, m.tile_m,
               m.tile_n, m.k_slices);
    if (m.k_slices > 1) fmt::print(", their reduction {:.3f} us", m.reduce_us);
    if (m.alignment_rate != 1) {
      fmt::print("; columns {:g}-byte aligned, main loop at {:g} of the aligned rate",
                 m.alignment_bytes, m.alignment_rate);
    }
    if (m.layout_us > 0) fmt::print("; NCHW tensors transposed in {:.3f} us", m.layout_us);
  }
  fmt::print("\n");
}

// "1.1e+12 FLOP, 4.03e+08 B" where an analytical model priced it; empty for a copy.
std::string flops_and_bytes(const ModelPrice& price) {
  if (!price.terms) return {};
  return fmt::format("{:.3g} FLOP, {:.3g} B", price.terms->flops, price.terms->bytes);
}

int run_list(const DbCommand::Options& o) {
  const KernelDb db = KernelDb::open(o.db, KernelDb::Mode::kReadOnly);
  fmt::print("{:<10} {:<9} {:>12} {:>8}  {}\n", "gpu", "source", "mean_us", "count", "signature");
  size_t shown = 0;
  for (const DbEntry& e : db.entries(gpu_key(o.gpu))) {
    if (!o.family.empty() && kernels::signature_family(e.signature) != o.family) continue;
    if (!o.source.empty() && kernels::to_string(e.source) != o.source) continue;
    if (o.limit > 0 && shown == o.limit) break;
    fmt::print("{:<10} {:<9} {}  {}\n", e.gpu, kernels::to_string(e.source), short_stats(e),
               e.signature);
    ++shown;
  }
  return 0;
}

int run_show(const DbCommand::Options& o) {
  const KernelDb db = KernelDb::open(o.db, KernelDb::Mode::kReadOnly);
  std::vector<std::string> gpus = o.gpu.empty() ? db.gpus() : std::vector{gpu_key(o.gpu)};
  bool found = false;
  for (const std::string& gpu : gpus) {
    const auto e = db.lookup(gpu, o.signature);
    if (!e) continue;
    found = true;
    fmt::print("{}\n  gpu              {}\n  source           {}\n", e->signature, e->gpu,
               kernels::to_string(e->source));
    fmt::print("  count            {}\n  mean / min / max {:.3f} / {:.3f} / {:.3f} us\n",
               e->stats.count, e->stats.mean_us, e->stats.min_us, e->stats.max_us);
    fmt::print("  stddev           {:.3f} us\n", e->stats.stddev_us);
    fmt::print("  device           {}\n  driver           {}\n  libraries        {}\n",
               e->provenance.device_name, e->provenance.driver_version,
               e->provenance.library_versions);
    fmt::print("  recorded at      {}\n", e->provenance.recorded_at);
    const std::optional<kernels::OpDesc> op = kernels::parse_signature(e->signature);
    if (const auto m = op ? model_price(*op, gpu) : std::nullopt) {
      const double us = m->cost.duration.as_us();
      const std::string work = flops_and_bytes(*m);
      fmt::print("  model            {:.3f} us ({:.2f}x the measurement{}{})\n", us,
                 us / e->stats.mean_us, work.empty() ? "" : "; ", work);
      print_model_terms(*m);
    }
  }
  if (!found) {
    if (!kernels::is_canonical_signature(o.signature)) {
      throw DataError(
          fmt::format("'{}' is not a canonical signature (docs/kernels-db.md)", o.signature));
    }
    fmt::print(stderr,
               "phantora: {}: no row for {} (the cost models' price without a row: `phantora db "
               "estimate SIGNATURE --gpu GPU`)\n",
               o.db, o.signature);
    return 1;
  }
  return 0;
}

// The cost models' price of one signature, with no database: what a run charges for it when
// no measured row exists.
int run_estimate(const DbCommand::Options& o) {
  const std::optional<kernels::OpDesc> op = kernels::parse_signature(o.signature);
  if (!op) {
    throw DataError(
        fmt::format("'{}' is not a canonical signature (docs/kernels-db.md)", o.signature));
  }
  const std::string gpu = gpu_key(o.gpu);
  const auto m = model_price(*op, gpu);
  if (!m) {
    throw DataError(
        "a kernel: signature names a kernel by its name and grid, whose price without a "
        "measured row depends on its launch (docs/cost-model.md); `phantora db show` gives a row");
  }
  const std::string work = flops_and_bytes(*m);
  fmt::print("{}\n  gpu              {}\n", o.signature, gpu);
  fmt::print("  model            {:.3f} us{}\n", m->cost.duration.as_us(),
             work.empty() ? "" : fmt::format(" ({})", work));
  print_model_terms(*m);
  return 0;
}

int run_stats(const DbCommand::Options& o) {
  const KernelDb db = KernelDb::open(o.db, KernelDb::Mode::kReadOnly);
  fmt::print("{}: Phantora kernel database, schema version {}\n", o.db, db.schema_version());
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<size_t, uint64_t>> by;
  for (const DbEntry& e : db.entries()) {
    auto& [rows, samples] = by[{e.gpu, std::string(kernels::signature_family(e.signature)),
                                std::string(kernels::to_string(e.source))}];
    ++rows;
    samples += e.stats.count;
  }
  fmt::print("{:<10} {:<7} {:<9} {:>8} {:>10}\n", "gpu", "family", "source", "rows", "samples");
  for (const auto& [key, value] : by) {
    fmt::print("{:<10} {:<7} {:<9} {:>8} {:>10}\n", std::get<0>(key), std::get<1>(key),
               std::get<2>(key), value.first, value.second);
  }
  const auto missing = db.missing();
  uint64_t occurrences = 0;
  for (const auto& m : missing) occurrences += m.occurrences;
  fmt::print("missing signatures recorded by runs: {} ({} occurrences)\n", missing.size(),
             occurrences);
  return 0;
}

int run_import(const DbCommand::Options& o) {
  // Parse and check the whole CSV before the database is touched (or created).
  const std::vector<DbEntry> rows = kernels::entries_from_csv_file(o.other);
  KernelDb db = KernelDb::open(o.db, KernelDb::Mode::kCreate);
  const size_t n =
      db.put(rows, o.combine ? kernels::OnConflict::kCombine : kernels::OnConflict::kReplace);
  fmt::print("{}: imported {} of {} rows from {}\n", o.db, n, rows.size(), o.other);
  return 0;
}

int run_export(const DbCommand::Options& o) {
  const KernelDb db = KernelDb::open(o.db, KernelDb::Mode::kReadOnly);
  write_output(o.other, kernels::entries_to_csv(db.entries(gpu_key(o.gpu))));
  return 0;
}

int run_merge(const DbCommand::Options& o) {
  const KernelDb source = KernelDb::open(o.other, KernelDb::Mode::kReadOnly);
  KernelDb dest = KernelDb::open(o.db, KernelDb::Mode::kCreate);
  kernels::MergeOptions options;
  if (!o.rescale_from.empty()) options.rescale_from = o.rescale_from;
  if (!o.rescale_to.empty()) options.rescale_to = o.rescale_to;
  const kernels::MergeResult r = kernels::merge(dest, source, options);
  fmt::print("{}: merged {} rows from {}{}\n", o.db, r.written, o.other,
             r.kept > 0
                 ? fmt::format(" ({} rows kept: the destination's source ranks higher)", r.kept)
                 : "");
  return 0;
}

int run_missing(const DbCommand::Options& o) {
  const KernelDb db = KernelDb::open(o.db, KernelDb::Mode::kReadOnly);
  const auto rows = db.missing(gpu_key(o.gpu));
  if (!o.other.empty()) {
    write_output(o.other, kernels::missing_to_csv(rows));
    return 0;
  }
  // With a profiled job's launches beside the database: how `db profile` would measure each.
  const std::string dir = recorded_launches_dir(o.db);
  if (!std::filesystem::is_directory(dir)) {
    fmt::print("{:<10} {:>11} {:>12}  {}\n", "gpu", "occurrences", "modelled_us", "signature");
    for (const auto& m : rows) {
      fmt::print("{:<10} {:>11} {:>12.3f}  {}\n", m.gpu, m.occurrences, m.modelled_us, m.signature);
    }
    return 0;
  }
  const std::vector<profiler::LaunchRecord> records = profiler::read_launch_records(dir);
  const auto launches = profiler::launches_by_signature(records);
  std::map<std::string_view, double> time_by_way;  // total modelled time, us
  fmt::print("{:<10} {:>11} {:>12}  {:<15}  {}\n", "gpu", "occurrences", "modelled_us",
             "measured by", "signature");
  for (const auto& m : rows) {
    const auto launch = launches.find(m.signature);
    const std::string_view way = profiler::replayed_by_library_call(m.signature) ? "library call"
                                 : launch != launches.end() && !launch->second->image.empty()
                                     ? "recorded launch"
                                     : "nothing";
    time_by_way[way] += m.modelled_us * static_cast<double>(m.occurrences);
    fmt::print("{:<10} {:>11} {:>12.3f}  {:<15}  {}\n", m.gpu, m.occurrences, m.modelled_us, way,
               m.signature);
  }
  double total = 0;
  for (const auto& [way, us] : time_by_way) total += us;
  fmt::print("modelled time {:.3f} ms, by how `db profile` measures it:", total / 1000);
  for (const auto& [way, us] : time_by_way) {
    fmt::print("{} {} {:.3f} ms ({:.1f} %)", way == time_by_way.begin()->first ? "" : ";", way,
               us / 1000, total > 0 ? 100 * us / total : 0.0);
  }
  fmt::print(" (launches recorded in {})\n", dir);
  return 0;
}

int run_profile(const DbCommand::Options& o) {
  ProfileRequest r = o.profile_request;
  r.db = o.db;
  r.gpu = o.gpu;
  if (!o.cuda_library.empty()) r.cuda_library = o.cuda_library;
  return run_db_profile(r);
}

}  // namespace

DbCommand::DbCommand(CLI::App& app) : options_(std::make_unique<Options>()) {
  Options& o = *options_;
  cmd_ = app.add_subcommand("db", "Inspect, import, export, merge and profile the kernel database");
  cmd_->require_subcommand(1);
  auto db_arg = [&o](CLI::App* sub, bool must_exist = true) {
    CLI::Option* opt =
        sub->add_option("database", o.db, "Kernel database file (SQLite)")->required();
    if (must_exist) opt->check(CLI::ExistingFile);
  };
  auto gpu_opt = [&o](CLI::App* sub) {
    sub->add_option("--gpu", o.gpu, "Only this GPU model (see `phantora gpus`)");
  };

  o.list = cmd_->add_subcommand("list", "List rows: GPU, source, mean, count, signature");
  db_arg(o.list);
  gpu_opt(o.list);
  o.list->add_option("--family", o.family, "Only this family")
      ->check(CLI::IsMember({"gemm", "attn", "mem", "copy", "kernel"}));
  o.list->add_option("--source", o.source, "Only this source")
      ->check(CLI::IsMember({"measured", "imported", "pinned"}));
  o.list->add_option("--limit", o.limit, "At most this many rows")
      ->check(in_range("--limit", whole_at_least(1)));

  o.show = cmd_->add_subcommand("show", "One signature: statistics, provenance, model estimate");
  db_arg(o.show);
  o.show->add_option("signature", o.signature, "Canonical signature")->required();
  gpu_opt(o.show);

  o.estimate = cmd_->add_subcommand(
      "estimate", "The cost models' price of one signature on a GPU model (no database)");
  o.estimate->add_option("signature", o.signature, "Canonical signature")->required();
  o.estimate->add_option("--gpu", o.gpu, "GPU model (see `phantora gpus`)")->required();

  o.stats = cmd_->add_subcommand("stats", "Rows and samples by GPU, family and source");
  db_arg(o.stats);

  o.import = cmd_->add_subcommand("import", "Add the rows of a CSV (created when absent)");
  db_arg(o.import, false);
  o.import->add_option("csv", o.other, "CSV with the columns of docs/kernels-db.md")
      ->required()
      ->check(CLI::ExistingFile);
  o.import->add_flag("--combine", o.combine,
                     "Pool statistics with existing rows instead of replacing them");

  o.export_ = cmd_->add_subcommand("export", "Write the rows as CSV");
  db_arg(o.export_);
  o.export_->add_option("out", o.other, "Output file (default: standard output)");
  gpu_opt(o.export_);

  o.merge = cmd_->add_subcommand(
      "merge", "Merge SOURCE into DEST; refuses to mix GPU models unless told to rescale");
  db_arg(o.merge, false);
  o.merge->add_option("source", o.other, "Database to merge from")
      ->required()
      ->check(CLI::ExistingFile);
  CLI::Option* from = o.merge->add_option(
      "--rescale-from", o.rescale_from,
      "Take SOURCE's rows of this GPU model and rescale them by the ratio of peak figures");
  CLI::Option* to = o.merge->add_option("--rescale-to", o.rescale_to, "... to this GPU model");
  from->needs(to);
  to->needs(from);

  o.missing = cmd_->add_subcommand("missing", "Signatures runs had to model, costliest first");
  db_arg(o.missing);
  gpu_opt(o.missing);
  o.missing->add_option("--csv", o.other, "Write them as CSV to this file ('-': stdout)");

  o.profile = cmd_->add_subcommand(
      "profile",
      "Measure on this machine's GPU what the database lacks, and write the measured rows.\n"
      "With a command after --, first runs it under `phantora run --kernel-db DATABASE` (no GPU "
      "work), which lists what it had to model and records the first launch of each distinct "
      "kernel, configuration and decoded work with its argument bytes (DATABASE.profile-run/"
      "launches). Without a command, the launches a previous profile's job recorded there are "
      "used again. Measured: GEMMs (replayed on scratch matrices of standard normal values "
      "with the signature's types, transposes, batch and beta: with cublasGemmStridedBatchedEx, "
      "or cublasLtMatmul when the signature has a bias, ReLU or GELU epilogue), copies other "
      "than peer copies (cudaMemcpyAsync between "
      "scratch buffers, pinned or pageable host memory as recorded), memsets (cudaMemsetAsync), "
      "and attention, memory-bound and kernel signatures by relaunching the recorded launch: "
      "the kernel from its saved image (cuModuleLoadData), its parameters as the job passed "
      "them, each device address moved to a zeroed scratch buffer of its allocation's size. "
      "Each: --sustain-ms of GPU time of launches back to back (the GPU settles at the clock "
      "its power limit allows under that work, as in training), --warmup untimed "
      "launches, then --repetitions launches each between two CUDA events; the row holds their "
      "count, mean, min, max and standard deviation, the device name, driver, runtime and "
      "cuBLAS versions, clocks and the time. Then --sequences runs of --sequence-length "
      "launches back to back between one pair of events: the per-launch time, which prices the "
      "operation. The idle GPU's launch round trip "
      "is measured once. Not measured, each listed with the reason: signatures with no recorded "
      "launch (other than GEMMs, copies and memsets), FP8 GEMMs, other epilogues, peer copies. "
      "Exit status 6: a relaunched kernel left the GPU unusable; it is skipped from then on "
      "and a second profile measures the rest. "
      "docs/kernels-db.md, \"Measuring\".");
  // The database may also be given as --db, as in `phantora db profile --db FILE -- cmd`.
  o.profile->add_option("database,--db", o.db, "Kernel database file (SQLite)")->required();
  o.profile->add_option("--gpu", o.gpu,
                        "The preset this GPU is (needed only when its device name matches none)");
  ProfileRequest& pr = o.profile_request;
  o.profile
      ->add_option("--sustain-ms", pr.sustain_ms,
                   "GPU time of back-to-back launches before each signature is timed (0: none)")
      ->check(in_range("--sustain-ms", whole_from_to(0, 600000)))
      ->capture_default_str();
  o.profile->add_option("--warmup", pr.warmup, "Untimed launches before timing each signature")
      ->check(in_range("--warmup", whole_from_to(0, 1000)))
      ->capture_default_str();
  o.profile->add_option("--repetitions", pr.repetitions, "Timed launches per signature")
      ->check(in_range("--repetitions", whole_from_to(1, 100000)))
      ->capture_default_str();
  o.profile
      ->add_option("--sequences", pr.sequences,
                   "Back-to-back sequences per signature, after the lone launches (0: none)")
      ->check(in_range("--sequences", whole_from_to(0, 1000)))
      ->capture_default_str();
  o.profile->add_option("--sequence-length", pr.sequence_length, "Launches in each sequence")
      ->check(in_range("--sequence-length", whole_from_to(1, 10000)))
      ->capture_default_str();
  o.profile->add_option("--device", pr.device, "CUDA device ordinal to measure on")
      ->check(in_range("--device", whole_from_to(0, 1023)))
      ->capture_default_str();
  o.profile->add_option("--hosts", pr.hosts, "The job's simulated hosts (with a command)")
      ->check(in_range("--hosts", whole_at_least(1)))
      ->capture_default_str();
  o.profile->add_option("--gpus-per-host", pr.gpus_per_host, "... and GPUs per host")
      ->check(in_range("--gpus-per-host", whole_at_least(1)))
      ->capture_default_str();
  o.profile->add_option("--cuda-library", o.cuda_library,
                        "One library that provides the CUDA runtime, cuBLAS, cuBLASLt and driver "
                        "entry points (tests: the stand-in GPU); default: the system's libcudart, "
                        "libcublas, libcublasLt and libcuda.so.1");
  o.profile
      ->add_option("--signatures", pr.signatures_file,
                   "Also measure these canonical signatures, one per line (shape sweeps)")
      ->check(CLI::ExistingFile);
  o.profile->add_option("command", pr.job, "The job to run first, after --");

  o.calibrate = cmd_->add_subcommand(
      "calibrate",
      "Every measured row beside what the cost models would charge without it, and per GPU "
      "model and family the ratio predicted / measured (geometric mean, min, max). Fits nothing. "
      "--source imported compares the imported rows instead (a published table of "
      "measurements brought in with `db import`).");
  o.calibrate->add_option("database,--db", o.db, "Kernel database file (SQLite)")
      ->required()
      ->check(CLI::ExistingFile);
  gpu_opt(o.calibrate);
  o.calibrate->add_option("--source", o.source, "Compare the rows of this source")
      ->check(CLI::IsMember({"measured", "imported", "pinned"}))
      ->default_str("measured");
}

DbCommand::~DbCommand() = default;

bool DbCommand::chosen() const {
  return cmd_->parsed();
}

int DbCommand::run() const {
  const Options& o = *options_;
  if (o.list->parsed()) return run_list(o);
  if (o.show->parsed()) return run_show(o);
  if (o.estimate->parsed()) return run_estimate(o);
  if (o.stats->parsed()) return run_stats(o);
  if (o.import->parsed()) return run_import(o);
  if (o.export_->parsed()) return run_export(o);
  if (o.merge->parsed()) return run_merge(o);
  if (o.missing->parsed()) return run_missing(o);
  if (o.profile->parsed()) return run_profile(o);
  if (o.calibrate->parsed()) return run_db_calibrate(o.db, o.gpu, o.source);
  return 2;
}

}  // namespace phantora::tools
