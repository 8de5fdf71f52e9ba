#include "db_calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "phantora/kernels/cost_model.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_db.hpp"
#include "phantora/kernels/op_desc.hpp"

namespace phantora::tools {
namespace {

// What a run without the database would charge for the signature: the same CostModel calls
// the daemon makes, with no database attached. Null for name-only kernels, whose price without
// a row depends on the launch (decoded arguments, grid), not on the signature alone.
std::optional<double> predicted_us(const kernels::CostModel& model, const std::string& sig,
                                   const kernels::GpuPreset& gpu) {
  const auto cost = model.cost_of_signature(sig, gpu);
  return cost ? std::optional(cost->duration.as_us()) : std::nullopt;
}

struct FamilySummary {
  size_t rows = 0, unmodelled = 0;
  double log_ratio_sum = 0;  // of predicted / measured, for the geometric mean
  double min_ratio = INFINITY, max_ratio = 0;
};

}  // namespace

int run_db_calibrate(const std::string& db_path, const std::string& gpu,
                     const std::string& source) {
  const kernels::EntrySource compared_source =
      kernels::parse_entry_source(source).value_or(kernels::EntrySource::kMeasured);
  const auto db = kernels::KernelDb::open(db_path, kernels::KernelDb::Mode::kReadOnly);
  const auto& catalog = kernels::GpuCatalog::builtin();
  const std::string key = gpu.empty() ? std::string() : catalog.find(gpu).key;
  const kernels::CostModel model;  // no database: the models alone
  std::map<std::pair<std::string, std::string>, FamilySummary> by_family;
  fmt::print("{:<10} {:<7} {:>12} {:>12} {:>8}  {}\n", "gpu", "family", "measured_us",
             "predicted_us", "pred/meas", "signature");
  for (const kernels::DbEntry& e : db.entries(key)) {
    // By default only what `db profile` measured: imported and pinned rows are no test of the
    // models unless the user says they hold measurements (a published table).
    if (e.source != compared_source) continue;
    const std::string family(kernels::signature_family(e.signature));
    FamilySummary& s = by_family[{e.gpu, family}];
    ++s.rows;
    const kernels::GpuPreset* preset = catalog.try_find(e.gpu);
    const auto predicted = preset ? predicted_us(model, e.signature, *preset) : std::nullopt;
    if (!predicted || e.stats.mean_us <= 0) {
      ++s.unmodelled;
      fmt::print("{:<10} {:<7} {:>12.3f} {:>12} {:>8}  {}\n", e.gpu, family, e.stats.mean_us, "-",
                 "-", e.signature);
      continue;
    }
    const double ratio = *predicted / e.stats.mean_us;
    s.log_ratio_sum += std::log(ratio);
    s.min_ratio = std::min(s.min_ratio, ratio);
    s.max_ratio = std::max(s.max_ratio, ratio);
    fmt::print("{:<10} {:<7} {:>12.3f} {:>12.3f} {:>8.3f}  {}\n", e.gpu, family, e.stats.mean_us,
               *predicted, ratio, e.signature);
  }
  fmt::print("\nper GPU model and family (pred/meas: geometric mean, min, max; 1 is exact)\n");
  fmt::print("{:<10} {:<7} {:>6} {:>10} {:>8} {:>8} {:>10}\n", "gpu", "family", "rows", "geomean",
             "min", "max", "no model");
  for (const auto& [k, s] : by_family) {
    const size_t compared = s.rows - s.unmodelled;
    if (compared == 0) {
      fmt::print("{:<10} {:<7} {:>6} {:>10} {:>8} {:>8} {:>10}\n", k.first, k.second, s.rows, "-",
                 "-", "-", s.unmodelled);
      continue;
    }
    fmt::print("{:<10} {:<7} {:>6} {:>10.3f} {:>8.3f} {:>8.3f} {:>10}\n", k.first, k.second, s.rows,
               std::exp(s.log_ratio_sum / static_cast<double>(compared)), s.min_ratio, s.max_ratio,
               s.unmodelled);
  }
  return 0;
}

}  // namespace phantora::tools
