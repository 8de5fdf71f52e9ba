#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "builtin_data.hpp"
#include "phantora/kernels/cost_model.hpp"
#include "phantora/kernels/data_error.hpp"
#include "toml_reader.hpp"

namespace phantora::kernels {
namespace {

double positive(detail::TableReader& t, std::string_view key) {
  const double v = t.number(key);
  if (!(v > 0)) t.fail(key, "must be positive");
  return v;
}

}  // namespace

CostParams CostParams::from_string(std::string_view toml_text, std::string_view source) {
  const toml::table doc = detail::parse_toml(toml_text, source);
  detail::TableReader root(doc, source, "");
  CostParams p;

  detail::TableReader kernel = root.table("default_kernel");
  p.kernel_floor = SimTime::us(positive(kernel, "floor_us"));
  p.kernel_per_wave = SimTime::us(positive(kernel, "per_wave_us"));
  kernel.reject_unknown();

  detail::TableReader copy = root.table("copy");
  p.host_device_latency = SimTime::us(positive(copy, "host_device_latency_us"));
  p.device_local_latency = SimTime::us(positive(copy, "device_local_latency_us"));
  p.pageable_factor = positive(copy, "pageable_factor");
  if (p.pageable_factor > 1) copy.fail("pageable_factor", "must not exceed 1");
  p.host_to_host = Bandwidth::gbytes_per_s(positive(copy, "host_to_host_gbytes_per_s"));
  copy.reject_unknown();

  root.reject_unknown();
  return p;
}

CostParams CostParams::from_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open cost model file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return from_string(text.str(), path.string());
}

const CostParams& CostParams::builtin() {
  static const CostParams params =
      from_string(builtin::kCostModelToml, "kernels-db/data/cost_model.toml");
  return params;
}

}  // namespace phantora::kernels
