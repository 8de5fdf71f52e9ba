#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "builtin_data.hpp"
#include "phantora/kernels/analytical_model.hpp"
#include "phantora/kernels/data_error.hpp"
#include "toml_reader.hpp"

namespace phantora::kernels {
namespace {

double fraction(detail::TableReader& t, std::string_view key, bool zero_ok = false) {
  const double v = t.number(key);
  if (!((v > 0 || (zero_ok && v == 0)) && v <= 1)) {
    t.fail(key, zero_ok ? "must be between 0 and 1" : "must be in (0, 1]");
  }
  return v;
}

double positive(detail::TableReader& t, std::string_view key) {
  const double v = t.number(key);
  if (!(v > 0)) t.fail(key, "must be positive");
  return v;
}

double non_negative(detail::TableReader& t, std::string_view key) {
  const double v = t.number(key);
  if (!(v >= 0)) t.fail(key, "must be zero or positive");
  return v;
}

uint64_t positive_int(detail::TableReader& t, std::string_view key) {
  const int64_t v = t.integer(key);
  if (v <= 0) t.fail(key, "must be a positive integer");
  return static_cast<uint64_t>(v);
}

}  // namespace

const ModelParams::PerGpu& ModelParams::for_gpu(std::string_view preset_key) const {
  if (auto it = per_gpu.find(preset_key); it != per_gpu.end()) return it->second;
  return per_gpu.at("default");
}

ModelParams ModelParams::from_string(std::string_view toml_text, std::string_view source) {
  const toml::table doc = detail::parse_toml(toml_text, source);
  detail::TableReader root(doc, source, "");
  ModelParams p;

  detail::TableReader gemm = root.table("gemm");
  p.gemm_tile_m = positive_int(gemm, "tile_m");
  p.gemm_tile_n = positive_int(gemm, "tile_n");
  p.gemm_tile_k = positive_int(gemm, "tile_k");
  p.gemm_narrow_tile_step = positive_int(gemm, "narrow_tile_step");
  p.gemm_smem_bytes_per_clock = positive(gemm, "smem_bytes_per_clock");
  p.gemm_tile_cost_k = non_negative(gemm, "tile_cost_k");
  p.gemm_overhead = SimTime::us(positive(gemm, "overhead_us"));
  p.gemm_misaligned_rate = fraction(gemm, "misaligned_rate");
  gemm.reject_unknown();

  detail::TableReader attn = root.table("attention");
  p.attention_tile_q = positive_int(attn, "tile_q");
  p.attention_overhead = SimTime::us(positive(attn, "overhead_us"));
  p.attention_backward_flops_factor = positive(attn, "backward_flops_factor");
  p.attention_fa2_s0 = {non_negative(attn, "fa2_forward_s0"),
                        non_negative(attn, "fa2_backward_s0")};
  p.attention_fa3_s0 = {non_negative(attn, "fa3_forward_s0"),
                        non_negative(attn, "fa3_backward_s0")};
  p.attention_fa2_head_dim = {positive(attn, "fa2_head_dim_64"),
                              positive(attn, "fa2_head_dim_256")};
  p.attention_fa3_head_dim = {positive(attn, "fa3_head_dim_64"),
                              positive(attn, "fa3_head_dim_256")};
  p.attention_cudnn_s0 = {non_negative(attn, "cudnn_forward_s0"),
                          non_negative(attn, "cudnn_backward_s0")};
  p.attention_cudnn_head_dim = {positive(attn, "cudnn_head_dim_64"),
                                positive(attn, "cudnn_head_dim_256")};
  p.attention_mem_efficient_rate = positive(attn, "mem_efficient_rate");
  p.attention_mem_efficient_s0 = non_negative(attn, "mem_efficient_s0");
  p.attention_mem_efficient_head_dim = {positive(attn, "mem_efficient_head_dim_64"),
                                        positive(attn, "mem_efficient_head_dim_256")};
  p.attention_f32_mma_passes = positive(attn, "f32_mma_passes");
  attn.reject_unknown();

  detail::TableReader mem = root.table("memory_bound");
  p.memory_floor = SimTime::us(positive(mem, "floor_us"));
  mem.reject_unknown();

  detail::TableReader gpus = root.table("gpu");
  for (const std::string& key : gpus.keys()) {
    detail::TableReader t = gpus.table(key);
    PerGpu g;
    g.gemm_efficiency = fraction(t, "gemm_efficiency");
    g.gemm_efficiency_k = static_cast<double>(positive_int(t, "gemm_efficiency_k"));
    g.fa2_forward = fraction(t, "fa2_forward");
    g.fa2_backward = fraction(t, "fa2_backward");
    g.fa3_forward = fraction(t, "fa3_forward", /*zero_ok=*/true);
    g.fa3_backward = fraction(t, "fa3_backward", /*zero_ok=*/true);
    if ((g.fa3_forward == 0) != (g.fa3_backward == 0)) {
      t.fail("fa3_backward", "fa3_forward and fa3_backward must both be 0 or both positive");
    }
    g.cudnn_forward = fraction(t, "cudnn_forward", /*zero_ok=*/true);
    g.cudnn_backward = fraction(t, "cudnn_backward", /*zero_ok=*/true);
    if ((g.cudnn_forward == 0) != (g.cudnn_backward == 0)) {
      t.fail("cudnn_backward", "cudnn_forward and cudnn_backward must both be 0 or both positive");
    }
    g.flex_forward = positive(t, "flex_forward");
    g.flex_backward = positive(t, "flex_backward");
    g.memory_efficiency = fraction(t, "memory_efficiency");
    g.gemm_clock_mhz = non_negative(t, "gemm_clock_mhz");
    g.attention_clock_mhz = non_negative(t, "attention_clock_mhz");
    t.reject_unknown();
    p.per_gpu.emplace(key, g);
  }
  if (!p.per_gpu.contains("default")) gpus.fail("default", "missing (the row for unlisted GPUs)");
  root.reject_unknown();
  return p;
}

ModelParams ModelParams::from_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open model constants file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return from_string(text.str(), path.string());
}

const ModelParams& ModelParams::builtin() {
  static const ModelParams params =
      from_string(builtin::kModelsToml, "kernels-db/data/models.toml");
  return params;
}

}  // namespace phantora::kernels
