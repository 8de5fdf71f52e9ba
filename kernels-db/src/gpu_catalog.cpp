#include "phantora/kernels/gpu_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builtin_data.hpp"
#include "phantora/kernels/data_error.hpp"
#include "toml_reader.hpp"

namespace phantora::kernels {
namespace {

// The [gpu.<key>.device] table maps one to one onto DeviceLimits, and DeviceLimits onto
// wire::DeviceSpec; the field lists are data so that the parser, the printer, the conversion
// and the file stay in step.
struct Int32Field {
  const char* key;
  int32_t DeviceLimits::*member;
  int32_t wire::DeviceSpec::*wire;
  int64_t min;  // smallest sensible value
};
struct Uint64Field {
  const char* key;
  uint64_t DeviceLimits::*member;
  uint64_t wire::DeviceSpec::*wire;
  uint64_t min;
};

#define PHANTORA_FIELD(f, min) \
  { #f, &DeviceLimits::f, &wire::DeviceSpec::f, min }
constexpr Uint64Field kUint64Fields[] = {
    PHANTORA_FIELD(total_global_mem, 1),
    PHANTORA_FIELD(shared_mem_per_block, 1),
    PHANTORA_FIELD(shared_mem_per_block_optin, 1),
    PHANTORA_FIELD(shared_mem_per_multiprocessor, 1),
    PHANTORA_FIELD(reserved_shared_mem_per_block, 0),
};

constexpr Int32Field kInt32Fields[] = {
    PHANTORA_FIELD(cc_major, 1),
    PHANTORA_FIELD(cc_minor, 0),
    PHANTORA_FIELD(multiprocessor_count, 1),
    PHANTORA_FIELD(max_threads_per_block, 1),
    PHANTORA_FIELD(max_threads_per_multiprocessor, 1),
    PHANTORA_FIELD(max_blocks_per_multiprocessor, 1),
    PHANTORA_FIELD(regs_per_block, 1),
    PHANTORA_FIELD(regs_per_multiprocessor, 1),
    PHANTORA_FIELD(l2_cache_bytes, 1),
    PHANTORA_FIELD(persisting_l2_cache_max_bytes, 0),
    PHANTORA_FIELD(memory_bus_width_bits, 1),
    PHANTORA_FIELD(memory_clock_khz, 1),
    PHANTORA_FIELD(clock_khz, 1),
    PHANTORA_FIELD(async_engine_count, 0),
    PHANTORA_FIELD(pci_device_id, 0),
    PHANTORA_FIELD(pci_subsystem_id, 0),
    PHANTORA_FIELD(cooperative_launch, 0),
    PHANTORA_FIELD(cluster_launch, 0),
};
#undef PHANTORA_FIELD

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

DeviceLimits read_device(detail::TableReader t) {
  DeviceLimits spec;
  spec.name = t.string("name");
  constexpr size_t kWireName = sizeof(wire::DeviceSpec{}.name);  // with its NUL
  if (spec.name.empty() || spec.name.size() >= kWireName) {
    t.fail("name", fmt::format("must be 1 to {} characters", kWireName - 1));
  }
  for (const Uint64Field& f : kUint64Fields) {
    const int64_t v = t.integer(f.key);
    if (v < 0 || static_cast<uint64_t>(v) < f.min) {
      t.fail(f.key, fmt::format("must be at least {}", f.min));
    }
    spec.*f.member = static_cast<uint64_t>(v);
  }
  for (const Int32Field& f : kInt32Fields) {
    const int64_t v = t.integer(f.key);
    if (v < f.min || v > std::numeric_limits<int32_t>::max()) {
      t.fail(f.key,
             fmt::format("must be between {} and {}", f.min, std::numeric_limits<int32_t>::max()));
    }
    spec.*f.member = static_cast<int32_t>(v);
  }
  t.reject_unknown();
  return spec;
}

double read_positive(detail::TableReader& t, std::string_view key, bool zero_ok = false) {
  const double v = t.number(key);
  if (!(v > 0 || (zero_ok && v == 0))) {
    t.fail(key, zero_ok ? "must be zero or positive" : "must be positive");
  }
  return v;
}

GpuPerf read_perf(detail::TableReader t) {
  GpuPerf p;
  p.bf16_tflops = read_positive(t, "bf16_tflops");
  p.fp16_tflops = read_positive(t, "fp16_tflops");
  p.fp8_tflops = read_positive(t, "fp8_tflops", /*zero_ok=*/true);
  p.tf32_tflops = read_positive(t, "tf32_tflops");
  p.fp32_tflops = read_positive(t, "fp32_tflops");
  p.hbm = Bandwidth::gbytes_per_s(read_positive(t, "hbm_gbytes_per_s"));
  p.pcie = Bandwidth::gbytes_per_s(read_positive(t, "pcie_gbytes_per_s"));
  p.nvlink = Bandwidth::gbytes_per_s(read_positive(t, "nvlink_gbytes_per_s", true));
  const int64_t links = t.integer("nvlink_links");
  if (links < 0 || links > 64) t.fail("nvlink_links", "must be between 0 and 64");
  p.nvlink_links = static_cast<int>(links);
  p.tensor_peak_clock_mhz = read_positive(t, "tensor_peak_clock_mhz");
  p.sustained_clock_mhz = read_positive(t, "sustained_clock_mhz");
  t.reject_unknown();
  return p;
}

std::string known_names(const std::vector<GpuPreset>& presets) {
  std::string out;
  for (const GpuPreset& p : presets) {
    if (!out.empty()) out += ", ";
    out += p.key;
    if (!p.aliases.empty()) out += fmt::format(" ({})", fmt::join(p.aliases, ", "));
  }
  return out;
}

}  // namespace

GpuCatalog GpuCatalog::from_string(std::string_view toml_text, std::string_view source) {
  const toml::table doc = detail::parse_toml(toml_text, source);
  detail::TableReader root(doc, source, "");
  detail::TableReader gpus = root.table("gpu");
  root.reject_unknown();

  GpuCatalog catalog;
  std::vector<std::string> taken;  // every key and alias, lower case
  for (const std::string& key : gpus.keys()) {
    detail::TableReader t = gpus.table(key);
    GpuPreset p;
    p.key = lower(key);
    for (const std::string& alias : t.string_array("aliases")) p.aliases.push_back(lower(alias));
    p.description = t.string("description");
    p.device = read_device(t.table("device"));
    p.perf = read_perf(t.table("perf"));
    t.reject_unknown();
    std::vector<std::string> spellings = p.aliases;
    spellings.push_back(p.key);
    for (const std::string& s : spellings) {
      if (std::find(taken.begin(), taken.end(), s) != taken.end()) {
        gpus.fail(key, fmt::format("name or alias '{}' is used by another preset", s));
      }
      taken.push_back(s);
    }
    catalog.presets_.push_back(std::move(p));
  }
  if (catalog.presets_.empty()) gpus.fail("", "no presets");
  return catalog;
}

GpuCatalog GpuCatalog::from_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open GPU preset file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return from_string(text.str(), path.string());
}

const GpuCatalog& GpuCatalog::builtin() {
  static const GpuCatalog catalog = from_string(builtin::kGpusToml, "kernels-db/data/gpus.toml");
  return catalog;
}

const GpuPreset* GpuCatalog::try_find(std::string_view name) const {
  const std::string wanted = lower(name);
  for (const GpuPreset& p : presets_) {
    if (p.key == wanted) return &p;
    if (std::find(p.aliases.begin(), p.aliases.end(), wanted) != p.aliases.end()) return &p;
  }
  return nullptr;
}

const GpuPreset& GpuCatalog::find(std::string_view name) const {
  if (const GpuPreset* p = try_find(name)) return *p;
  throw DataError(fmt::format("unknown GPU '{}'; known GPUs: {}", name, known_names(presets_)));
}

std::vector<std::string> GpuCatalog::names() const {
  std::vector<std::string> out;
  for (const GpuPreset& p : presets_) out.push_back(p.key);
  return out;
}

wire::DeviceSpec to_device_spec(const GpuPreset& preset) {
  wire::DeviceSpec spec;
  const std::string& name = preset.device.name;  // checked to fit when the preset was read
  std::memcpy(spec.name, name.data(), std::min(name.size(), sizeof(spec.name) - 1));
  for (const Uint64Field& f : kUint64Fields) spec.*f.wire = preset.device.*f.member;
  for (const Int32Field& f : kInt32Fields) spec.*f.wire = preset.device.*f.member;
  return spec;
}

std::string format_preset(const GpuPreset& p) {
  std::string out = fmt::format("{} — {} (\"{}\")\n", p.key, p.description, p.device_name());
  for (const Uint64Field& f : kUint64Fields) {
    out += fmt::format("  {:<32} {}\n", f.key, p.device.*f.member);
  }
  for (const Int32Field& f : kInt32Fields) {
    out += fmt::format("  {:<32} {}\n", f.key, p.device.*f.member);
  }
  out += fmt::format("  {:<32} {} / {} / {} / {} / {}\n", "TFLOPS bf16/fp16/fp8/tf32/fp32",
                     p.perf.bf16_tflops, p.perf.fp16_tflops, p.perf.fp8_tflops, p.perf.tf32_tflops,
                     p.perf.fp32_tflops);
  out += fmt::format("  {:<32} {} / {} / {} ({} links)\n", "GB/s HBM/PCIe/NVLink",
                     p.perf.hbm.as_gbytes_per_s(), p.perf.pcie.as_gbytes_per_s(),
                     p.perf.nvlink.as_gbytes_per_s(), p.perf.nvlink_links);
  out += fmt::format("  {:<32} {} / {}\n", "SM clock MHz peak-rated/sustained",
                     p.perf.tensor_peak_clock_mhz, p.perf.sustained_clock_mhz);
  return out;
}

}  // namespace phantora::kernels
