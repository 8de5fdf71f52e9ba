#include "phantora/simcore/report.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <variant>

#include <fmt/format.h>

#include "phantora/kernels/kernel_name.hpp"
#include "phantora/netmodel/topology_figures.hpp"

namespace phantora::sim {
namespace {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", b, units[u]);
}

// The network the run simulated and where each of its figures came from (docs/report.md).
nlohmann::json topology_json(const net::TopologySpec& spec) {
  nlohmann::json figures = nlohmann::json::object();
  for (const net::TopologyFigure& f : net::figures(spec)) {
    nlohmann::json value;
    std::visit([&value](const auto& v) { value = v; }, f.value);
    figures[f.key] = {{"value", value}, {"source", f.source}};
  }
  return {{"name", spec.name},
          {"description", spec.description},
          {"from", spec.source},
          {"figures", figures}};
}

std::string human_time(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

}  // namespace

nlohmann::json make_report(const SimulationConfig& config, const RunStats& stats,
                           const RunOutcome& outcome) {
  using nlohmann::json;
  json r;
  r["schema"] = kReportSchema;
  r["status"] = outcome.status;
  r["exit_code"] = outcome.exit_code;
  if (!outcome.message.empty()) r["message"] = outcome.message;
  r["command"] = outcome.command;
  r["launcher"] = outcome.launcher;
  if (!outcome.steps.is_null()) r["steps"] = outcome.steps;
  r["cluster"] = {{"hosts", config.hosts},
                  {"gpus_per_host", config.gpus_per_host},
                  {"gpu", config.gpu_name},
                  {"gpu_name", std::string(config.device.name)}};
  if (config.replicas > 1) {
    // `--represent-dp`: the job ran on `hosts`; the network carried every replica's traffic.
    r["cluster"]["represented"] = {{"replicas", config.replicas},
                                   {"hosts", config.represented_hosts()},
                                   {"gpus", config.represented_hosts() * config.gpus_per_host},
                                   {"dp_comms", config.dp_comms.describe()}};
  }
  if (config.topology) r["topology"] = topology_json(config.topology->spec());
  r["cpu_time"] = std::string(wire::cpu_time_name(config.cpu_time));
  r["host_speed"] = config.host_speed;
  r["launch_latency"] = {{"us", config.launch_latency.as_us()},
                         {"from", config.launch_latency_from}};
  r["simulated_time_s"] = stats.simulated_end.as_seconds();
  r["simulated_time_ps"] = stats.simulated_end.as_ps();
  r["wall_time_s"] = outcome.wall_seconds;
  r["slowdown"] = stats.simulated_end.as_seconds() > 0
                      ? outcome.wall_seconds / stats.simulated_end.as_seconds()
                      : 0.0;

  // Ranks in a stable order (host, rank, local rank, pid), not connection order.
  std::vector<ClientInfo> clients = stats.clients;
  std::sort(clients.begin(), clients.end(), [](const ClientInfo& a, const ClientInfo& b) {
    return std::tie(a.host, a.global_rank, a.local_rank, a.pid) <
           std::tie(b.host, b.global_rank, b.local_rank, b.pid);
  });
  json ranks = json::array();
  json helpers = json::array();
  for (const ClientInfo& c : clients) {
    // Processes that only asked about devices (a launcher counting GPUs) are not ranks.
    (c.used_gpu ? ranks : helpers)
        .push_back({{"host", c.host},
                    {"pid", c.pid},
                    {"rank", c.global_rank},
                    {"local_rank", c.local_rank},
                    {"host_clock_s", c.host_clock.as_seconds()},
                    {"end", c.end},
                    {"lapsed_handoffs", c.lapsed_handoffs}});
  }
  r["ranks"] = ranks;
  r["helper_processes"] = helpers;

  json gpus = json::array();
  SimTime streams_overlap;
  for (size_t g = 0; g < stats.gpus.size(); ++g) {
    const GpuStats& s = stats.gpus[g];
    gpus.push_back({{"gpu", g},
                    {"host", static_cast<int>(g) / config.gpus_per_host},
                    {"device", static_cast<int>(g) % config.gpus_per_host},
                    {"peak_memory_bytes", s.peak_memory},
                    {"busy_s", s.busy.as_seconds()},
                    {"communication_s", s.communication.as_seconds()},
                    {"exposed_communication_s", s.exposed_communication.as_seconds()},
                    {"streams_overlap_s", s.streams_overlap.as_seconds()}});
    streams_overlap += s.streams_overlap;
  }
  r["gpus"] = gpus;

  SimTime total;
  for (const auto& [src, t] : stats.gpu_time_by_source) total += t;
  json by_source = json::object();
  for (const auto& [src, t] : stats.gpu_time_by_source) {
    by_source[std::string(to_string(src))] = {
        {"time_s", t.as_seconds()},
        {"share", total.as_ps() > 0
                      ? static_cast<double>(t.as_ps()) / static_cast<double>(total.as_ps())
                      : 0.0}};
  }
  r["gpu_time"] = {{"total_s", total.as_seconds()},
                   {"by_source", by_source},
                   {"shared_with_nccl",
                    {{"kernels", stats.kernels_shared_with_nccl},
                     {"added_s", stats.shared_with_nccl.as_seconds()}}},
                   {"streams_overlap_s", streams_overlap.as_seconds()}};

  json counts = json::object();
  for (const auto& [kind, n] : stats.op_counts) counts[to_string(kind)] = n;
  r["op_counts"] = counts;
  // What the simulator itself did and used: events are GPU operations plus network transfers
  // and flows, each an event (or two) of the discrete-event core.
  uint64_t ops = 0;
  for (const auto& [kind, n] : stats.op_counts) ops += n;
  const uint64_t events = ops + stats.network.transfers + stats.network.flows;
  r["simulator"] = {
      {"gpu_ops", ops},
      {"network_transfers", stats.network.transfers},
      {"network_flows", stats.network.flows},
      {"rate_solves", stats.network.rate_solves},
      {"events", events},
      {"cpu_s", outcome.simulator_cpu_seconds},
      {"max_rss_bytes", outcome.simulator_max_rss_bytes},
      {"events_per_cpu_s",
       outcome.simulator_cpu_seconds > 0 ? events / outcome.simulator_cpu_seconds : 0.0}};

  const auto tallies = [](const std::map<std::string, OpTally>& by_kind) {
    json out = json::object();
    for (const auto& [kind, t] : by_kind) out[kind] = {{"count", t.count}, {"bytes", t.bytes}};
    return out;
  };
  json communicators = json::array();
  for (const auto& [id, c] : stats.communication.by_communicator) {
    communicators.push_back({{"id", id},
                             {"ranks", c.gpus.size()},
                             {"gpus", c.gpus},
                             {"operations", tallies(c.operations)}});
  }
  SimTime comm_total, exposed_total;
  for (const GpuStats& g : stats.gpus) {
    comm_total += g.communication;
    exposed_total += g.exposed_communication;
  }
  r["communication"] = {{"operations", tallies(stats.communication.by_kind)},
                        {"communicators", communicators},
                        {"time_s", comm_total.as_seconds()},
                        {"exposed_time_s", exposed_total.as_seconds()},
                        {"late_collective_starts", stats.late_collective_starts}};
  r["unfinished"] = stats.unfinished;

  std::vector<std::pair<std::string, KernelStats>> kernels(stats.kernels.begin(),
                                                           stats.kernels.end());
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    return a.second.total != b.second.total ? a.second.total > b.second.total : a.first < b.first;
  });
  auto row = [](const std::string& name, const KernelStats& k) {
    return json{{"kernel", kernels::kernel_base_name(name)},
                {"mangled", name},
                {"count", k.count},
                {"total_s", k.total.as_seconds()},
                {"source", std::string(source_name(k.source))}};
  };
  json top = json::array();
  // Every kernel no model knows, by name, so that a small default-priced share still says what
  // it is made of (and what `phantora db profile` would measure).
  json defaulted = json::array();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto& [name, k] = kernels[i];
    if (i < 20) top.push_back(row(name, k));
    if (k.source == CostSource::kDefault) defaulted.push_back(row(name, k));
  }
  r["top_kernels"] = top;
  r["gpu_time"]["defaulted_kernels"] = defaulted;
  return r;
}

std::string summary_table(const nlohmann::json& r) {
  std::string out;
  auto line = [&out](std::string_view k, const std::string& v) {
    out += fmt::format("  {:<28} {}\n", k, v);
  };
  out += "phantora summary\n";
  const auto& cl = r["cluster"];
  line("cluster", fmt::format("{} host(s) x {} {} ({})", cl["hosts"].get<int>(),
                              cl["gpus_per_host"].get<int>(), cl["gpu"].get<std::string>(),
                              cl["gpu_name"].get<std::string>()));
  if (cl.contains("represented")) {
    const auto& rep = cl["represented"];
    line("represented cluster",
         fmt::format("{} host(s) = {} data-parallel replicas of the live hosts (dp comms: {})",
                     rep["hosts"].get<int>(), rep["replicas"].get<int>(),
                     rep["dp_comms"].get<std::string>()));
  }
  if (r.contains("topology")) {
    const auto& t = r["topology"];
    line("topology",
         fmt::format("{} ({}){}", t["name"].get<std::string>(), t["from"].get<std::string>(),
                     t["description"].get<std::string>().empty()
                         ? ""
                         : ": " + t["description"].get<std::string>()));
    out += "    figure                        value      source\n";
    for (const auto& [key, f] : t["figures"].items()) {
      const auto& v = f["value"];
      out += fmt::format("    {:<29} {:<10} {}\n", key,
                         v.is_string() ? v.get<std::string>() : v.dump(),
                         f["source"].get<std::string>());
    }
  }
  // A message of several lines (what a stopped run waited for) stays under its heading.
  std::string message = r.contains("message") ? ": " + r["message"].get<std::string>() : "";
  for (size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', at + 1))
    message.insert(at + 1, "  ");
  line("status", r["status"].get<std::string>() + message);
  // Said once, here: the job's own log may show losses and norms that look like a broken run.
  line("tensor values",
       "not computed: losses, gradient norms and any other number the job reads back from a "
       "GPU are not the model's; times, memory and communication are what is simulated");
  line("ranks (processes)", std::to_string(r["ranks"].size()) +
                                (r["helper_processes"].empty()
                                     ? ""
                                     : fmt::format(" (+{} helper process(es) with no GPU work)",
                                                   r["helper_processes"].size())));
  line("simulated time", human_time(r["simulated_time_s"].get<double>()));
  if (r.contains("steps")) {
    const auto& st = r["steps"];
    line("step time (median)",
         fmt::format("{} over {} step(s) the job printed{}",
                     human_time(st["median_s"].get<double>()),
                     st["count"].get<size_t>() - (st["skipped_first"].get<bool>() ? 1 : 0),
                     st["skipped_first"].get<bool>() ? ", first left out" : ""));
  }
  line("wall time", human_time(r["wall_time_s"].get<double>()));
  line("slowdown (wall/simulated)", fmt::format("{:.3g}x", r["slowdown"].get<double>()));
  const double speed = r.value("host_speed", 1.0);
  line("cpu time mode", speed != 1 ? fmt::format("{} (host {:.3g}x this machine)",
                                                 r["cpu_time"].get<std::string>(), speed)
                                   : r["cpu_time"].get<std::string>());
  if (r.contains("simulator")) {
    const auto& s = r["simulator"];
    line("simulator (phantora itself)",
         fmt::format("{} events, {:.1f} s CPU, {:.0f} MiB peak resident",
                     s["events"].get<uint64_t>(), s["cpu_s"].get<double>(),
                     s["max_rss_bytes"].get<double>() / (1 << 20)));
  }
  std::string shares;
  for (const auto& [src, v] : r["gpu_time"]["by_source"].items()) {
    shares += fmt::format("{}{} {:.1f}%", shares.empty() ? "" : ", ", src,
                          v["share"].get<double>() * 100);
  }
  line("GPU work (kernels, copies)", human_time(r["gpu_time"]["total_s"].get<double>()) +
                                         (shares.empty() ? "" : " (" + shares + ")"));
  if (const auto& shared = r["gpu_time"]["shared_with_nccl"];
      shared["kernels"].get<uint64_t>() > 0) {
    line("kernels beside NCCL",
         fmt::format("{} kernels, {} longer than alone (NCCL held SMs and HBM bandwidth)",
                     shared["kernels"].get<uint64_t>(),
                     human_time(shared["added_s"].get<double>())));
  }
  if (const double overlap = r["gpu_time"].value("streams_overlap_s", 0.0); overlap > 0) {
    line("kernels on parallel streams",
         fmt::format("{} of kernel time beside another stream's kernels, each priced alone",
                     human_time(overlap)));
  }
  const auto& comm = r["communication"];
  if (!comm["operations"].empty()) {
    std::string ops;
    for (const auto& [kind, v] : comm["operations"].items()) {
      ops += fmt::format("{}{} x{}", ops.empty() ? "" : ", ", kind, v["count"].get<uint64_t>());
    }
    line("collectives", ops);
    line("communication (all GPUs)",
         fmt::format("{}, exposed {}", human_time(comm["time_s"].get<double>()),
                     human_time(comm["exposed_time_s"].get<double>())));
  }
  if (!r["unfinished"].empty()) {
    out += "  still waiting when the run ended:\n";
    for (const auto& w : r["unfinished"]) out += fmt::format("    {}\n", w.get<std::string>());
  }
  out += "  peak memory per GPU:\n";
  // Large clusters: list the GPUs that were used, at most a screenful.
  constexpr size_t kMaxGpuLines = 16;
  size_t shown = 0, idle = 0;
  for (const auto& g : r["gpus"]) {
    if (g["peak_memory_bytes"].get<int64_t>() == 0 && g["busy_s"].get<double>() == 0) {
      ++idle;
      continue;
    }
    if (++shown > kMaxGpuLines) continue;
    out += fmt::format("    host {} GPU {}: {:>12}   busy {}\n", g["host"].get<int>(),
                       g["device"].get<int>(), human_bytes(g["peak_memory_bytes"].get<double>()),
                       human_time(g["busy_s"].get<double>()));
  }
  if (shown > kMaxGpuLines)
    out += fmt::format("    ... {} more GPU(s) in report.json\n", shown - kMaxGpuLines);
  if (idle > 0) out += fmt::format("    {} GPU(s) unused\n", idle);
  if (!r["top_kernels"].empty()) {
    out += "  top kernels by GPU time:\n";
    for (size_t i = 0; i < std::min<size_t>(r["top_kernels"].size(), 5); ++i) {
      const auto& k = r["top_kernels"][i];
      std::string name = k["kernel"].get<std::string>();
      if (name.size() > 60) name = name.substr(0, 57) + "...";
      out += fmt::format("    {:<60} x{:<6} {:>12} ({})\n", name, k["count"].get<uint64_t>(),
                         human_time(k["total_s"].get<double>()), k["source"].get<std::string>());
    }
  }
  return out;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    f << content;
    f.flush();
    if (!f) throw std::runtime_error(fmt::format("writing {} failed", tmp.string()));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace phantora::sim
