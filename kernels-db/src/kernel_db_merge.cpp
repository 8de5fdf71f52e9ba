// Merging kernel databases and rescaling measurements between GPU models.
#include <algorithm>
#include <optional>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "phantora/kernels/analytical_model.hpp"
#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_db.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "phantora/overloaded.hpp"

namespace phantora::kernels {
namespace {

// What fraction of its rated compute peak a part delivers at the clock it sustains under load:
// a measurement was taken at the measuring part's sustained clock (docs/cost-model.md, "Clocks").
double sustained_share(const GpuPreset& gpu) {
  return gpu.perf.sustained_clock_mhz / gpu.perf.tensor_peak_clock_mhz;
}

// The rate that bounds an operation of this signature on this GPU (any unit, same for both).
double bounding_rate(std::string_view sig, const GpuPreset& gpu) {
  const double hbm = gpu.perf.hbm.as_bytes_per_s();
  const std::optional<OpDesc> op = parse_signature(sig);
  if (!op) return hbm;
  const auto tensor = [&gpu](DType in, DType compute) {
    return peak_flops(gpu.perf, in, compute) * sustained_share(gpu);
  };
  return std::visit(
      Overloaded{
          [&](const GemmDesc& g) { return tensor(g.a, g.compute); },
          [&](const AttentionDesc& a) { return tensor(a.dtype, DType::kF32); },
          [&](const ConvDesc& c) {
            const GemmDesc g = conv_implicit_gemm(c);
            return tensor(g.a, g.compute);
          },
          [&](const CopyDesc& c) {
            // A host-to-host copy is the host's memcpy, the same on both parts.
            const std::optional<Bandwidth> link = copy_link(c.kind, gpu.perf);
            return link ? link->as_bytes_per_s() : 1.0;
          },
          // Memory-bound operations and kernels known only by name: most are bandwidth-bound.
          [&](const auto&) { return hbm; },
      },
      *op);
}

}  // namespace

double rescale_factor(std::string_view signature, const GpuPreset& from, const GpuPreset& to) {
  const double rate_from = bounding_rate(signature, from);
  const double rate_to = bounding_rate(signature, to);
  if (!(rate_from > 0) || !(rate_to > 0)) {
    throw DataError(fmt::format("cannot rescale '{}' from {} to {}: a peak figure is zero",
                                signature, from.key, to.key));
  }
  return rate_from / rate_to;
}

MergeResult merge(KernelDb& dest, const KernelDb& source, const MergeOptions& options) {
  const GpuCatalog& catalog = options.catalog != nullptr ? *options.catalog : GpuCatalog::builtin();
  if (options.rescale_from.has_value() != options.rescale_to.has_value()) {
    throw DataError("merge: --rescale-from and --rescale-to go together");
  }
  std::vector<DbEntry> rows;
  if (options.rescale_from) {
    const GpuPreset& from = catalog.find(*options.rescale_from);
    const GpuPreset& to = catalog.find(*options.rescale_to);
    rows = source.entries(from.key);
    if (rows.empty()) {
      throw DataError(fmt::format("{}: no rows for GPU '{}' to rescale (it holds: {})",
                                  source.path().string(), from.key,
                                  fmt::join(source.gpus(), ", ")));
    }
    for (DbEntry& e : rows) {
      const double factor = rescale_factor(e.signature, from, to);
      e.stats = e.stats.scaled(factor);
      if (e.back_to_back) e.back_to_back->per_launch = e.back_to_back->per_launch.scaled(factor);
      e.gpu = to.key;
      e.source = EntrySource::kImported;
      e.provenance.library_versions += fmt::format(
          "{}rescaled-from={}", e.provenance.library_versions.empty() ? "" : ";", from.key);
    }
  } else {
    const std::vector<std::string> have = dest.gpus();
    const std::vector<std::string> incoming = source.gpus();
    std::vector<std::string> foreign;
    for (const std::string& g : incoming) {
      if (std::find(have.begin(), have.end(), g) == have.end()) foreign.push_back(g);
    }
    if (!have.empty() && !foreign.empty()) {
      throw DataError(fmt::format(
          "refusing to merge {} (GPU models: {}) into {} (GPU models: {}): the measurements are "
          "of different GPUs. To convert them, pass --rescale-from {} --rescale-to {}",
          source.path().string(), fmt::join(incoming, ", "), dest.path().string(),
          fmt::join(have, ", "), foreign.front(), have.front()));
    }
    rows = source.entries();
  }
  MergeResult result;
  const size_t before = rows.size();
  result.written = dest.put(rows, OnConflict::kCombine);
  result.kept = before - result.written;
  return result;
}

}  // namespace phantora::kernels
