#include "sweep_results.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "phantora/simcore/report.hpp"

namespace phantora::tools {
namespace {

std::string series_of(const SweepPoint& p) {
  std::string s = fmt::format("{} x{}/host", p.gpu, p.gpus_per_host);
  if (!p.topology.empty()) s += " " + std::filesystem::path(p.topology).stem().string();
  if (p.nic_gbytes_per_s) s += fmt::format(" nic {} GB/s", *p.nic_gbytes_per_s);
  if (p.oversubscription) s += fmt::format(" os {}", *p.oversubscription);
  for (const auto& [k, v] : p.vars) s += fmt::format(" {}={}", k, v);
  return s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::vector<std::string> var_names(const std::vector<PointResult>& results) {
  std::vector<std::string> names;
  for (const PointResult& r : results) {
    for (const auto& [k, v] : r.point.vars) {
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
    }
  }
  return names;
}

std::string opt(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : "";
}

}  // namespace

PointResult read_point(const SweepPoint& p, const std::filesystem::path& dir, double items,
                       int exit_code, double wall_s) {
  PointResult r;
  r.point = p;
  r.items_per_step = items;
  r.wall_s = wall_s;
  r.series = series_of(p);
  std::ifstream in(dir / "report.json");
  nlohmann::json rep;
  if (in) {
    try {
      rep = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception&) {
      rep = nullptr;
    }
  }
  if (!rep.is_object()) {
    r.reason = fmt::format("no report (phantora run exited with {}; see {})", exit_code,
                           (dir / "phantora.log").string());
    return r;
  }
  if (rep.value("status", "") != "ok") {
    r.reason = rep.value("message", fmt::format("exit status {}", rep.value("exit_code", 0)));
    return r;
  }
  r.simulated_s = rep.value("simulated_time_s", 0.0);
  if (rep.contains("steps")) {
    r.step_s = rep["steps"].value("median_s", 0.0);
    r.step_from_log = r.step_s > 0;
  }
  if (!r.step_from_log) r.step_s = r.simulated_s;
  if (r.step_s <= 0) {
    r.reason = "the run simulated no time";
    return r;
  }
  r.status = "ok";
  r.throughput = items / r.step_s;
  r.throughput_per_gpu = r.throughput / p.gpus();
  for (const auto& g : rep.value("gpus", nlohmann::json::array())) {
    r.peak_memory_bytes = std::max(r.peak_memory_bytes, g.value("peak_memory_bytes", 0.0));
  }
  const double exposed = rep["communication"].value("exposed_time_s", 0.0);
  // Exposed communication is summed over the GPUs that ran: the live ones.
  if (r.simulated_s > 0) r.exposed_comm_share = exposed / (p.live_gpus() * r.simulated_s);
  return r;
}

void compute_efficiency(std::vector<PointResult>& results) {
  std::map<std::string, const PointResult*> smallest;
  const PointResult* overall = nullptr;
  for (const PointResult& r : results) {
    if (r.status != "ok") continue;
    auto& s = smallest[r.series];
    if (s == nullptr || r.point.gpus() < s->point.gpus()) s = &r;
    if (overall == nullptr || r.point.gpus() < overall->point.gpus()) overall = &r;
  }
  std::map<std::string, int> members;
  for (const PointResult& r : results) members[r.series] += r.status == "ok";
  for (PointResult& r : results) {
    if (r.status != "ok") continue;
    const PointResult* ref = members[r.series] > 1 ? smallest[r.series] : overall;
    r.efficiency = ref->throughput_per_gpu > 0 ? r.throughput_per_gpu / ref->throughput_per_gpu : 0;
  }
}

void write_csv(const std::vector<PointResult>& results, const std::string& items_name,
               const std::filesystem::path& file) {
  const std::vector<std::string> vars = var_names(results);
  std::string out =
      "point,status,hosts,gpus_per_host,gpus,gpu,topology,nic_gbytes_per_s,"
      "oversubscription,represent_dp";
  for (const auto& v : vars) out += "," + csv_field(v);
  out += fmt::format(
      ",step_time_s,step_time_source,{0}_per_step,{0}_per_s,{0}_per_s_per_gpu,"
      "scaling_efficiency,peak_memory_bytes,exposed_communication_share,simulated_time_s,"
      "wall_time_s,reason\n",
      items_name);
  for (const PointResult& r : results) {
    const SweepPoint& p = r.point;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}", csv_field(p.name), r.status, p.hosts,
                       p.gpus_per_host, p.gpus(), csv_field(p.gpu), csv_field(p.topology),
                       opt(p.nic_gbytes_per_s), opt(p.oversubscription), p.replicas);
    for (const auto& v : vars) {
      auto it = p.vars.find(v);
      out += "," + (it == p.vars.end() ? std::string() : csv_field(it->second));
    }
    if (r.status == "ok") {
      out += fmt::format(",{:.9g},{},{:.9g},{:.9g},{:.9g},{:.6f},{:.0f},{:.6f},{:.9g},{:.3f},\n",
                         r.step_s, r.step_from_log ? "job" : "simulated_time", r.items_per_step,
                         r.throughput, r.throughput_per_gpu, r.efficiency, r.peak_memory_bytes,
                         r.exposed_comm_share, r.simulated_s, r.wall_s);
    } else {
      out += fmt::format(",,,,,,,,,,{:.3f},{}\n", r.wall_s, csv_field(r.reason));
    }
  }
  sim::write_file_atomically(file, out);
}

std::string markdown_table(const std::vector<PointResult>& results, const std::string& items_name) {
  std::string out = fmt::format(
      "| point | GPUs | step time | {0}/s | {0}/s per GPU | scaling efficiency | peak memory | "
      "exposed comm. |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
      items_name);
  for (const PointResult& r : results) {
    if (r.status != "ok") {
      out += fmt::format("| {} | {} | failed: {} | | | | | |\n", r.point.name, r.point.gpus(),
                         r.reason);
      continue;
    }
    out += fmt::format(
        "| {} | {} | {:.2f} ms{} | {:.4g} | {:.4g} | {:.1f}% | {:.2f} GiB | {:.1f}% |\n",
        r.point.name, r.point.gpus(), r.step_s * 1e3, r.step_from_log ? "" : " (run)", r.throughput,
        r.throughput_per_gpu, 100 * r.efficiency, r.peak_memory_bytes / (1 << 30),
        100 * r.exposed_comm_share);
  }
  return out;
}

}  // namespace phantora::tools
