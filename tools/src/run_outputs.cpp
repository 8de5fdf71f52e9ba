#include "run_outputs.hpp"

#include <sys/resource.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "memory_gate.hpp"
#include "phantora/kernels/cost_model.hpp"
#include "report_compare.hpp"
#include "step_times.hpp"

namespace phantora::tools {
namespace {

// report.json's gpu_time.by_family: for each signature family, per source, the operations
// priced and the time charged (docs/report.md).
nlohmann::json priced_by_family(const sim::KernelsCostProvider::PricedByFamily& priced) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, p] : priced) {
    out[key.first][std::string(kernels::to_string(key.second))] = {{"count", p.count},
                                                                   {"time_s", p.time.as_seconds()}};
  }
  return out;
}

// One summary line per family: where its time came from.
void print_by_family(const nlohmann::json& by_family) {
  fmt::print(stderr, "  GPU time by family and source:\n");
  for (const auto& [family, sources] : by_family.items()) {
    std::string line;
    for (const auto& [source, v] : sources.items()) {
      line += fmt::format("  {} {:.3f} ms ({})", source, v["time_s"].get<double>() * 1e3,
                          v["count"].get<uint64_t>());
    }
    fmt::print(stderr, "    {:<8}{}\n", family, line);
  }
}

}  // namespace

int write_outputs(const RunOptions& o, const PreparedRun& run, sim::Simulation& simulation,
                  sim::RunOutcome outcome, const std::optional<std::filesystem::path>& job_log) {
  std::vector<double> step_times;
  if (job_log) {
    std::ifstream log(*job_log);
    for (std::string line; std::getline(log, line);) {
      if (const auto t = run.scanner.scan(line)) step_times.push_back(*t);
    }
  }
  if (const auto steps = summarize_steps(step_times)) {
    outcome.steps = {{"count", steps->times_s.size()},
                     {"times_s", steps->times_s},
                     {"skipped_first", steps->skipped_first},
                     {"median_s", steps->median_s},
                     {"mean_s", steps->mean_s},
                     {"pattern", run.scanner.description()}};
  }

  const sim::RunStats& stats = simulation.finish();
  {
    // The phantora process: the daemon's thread and the launcher's polling (the job's
    // processes are its children and not counted: RUSAGE_SELF).
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    outcome.simulator_cpu_seconds =
        static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
        static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
    outcome.simulator_max_rss_bytes = static_cast<double>(self.ru_maxrss) * 1024.0;
  }
  nlohmann::json report = sim::make_report(run.config, stats, outcome);
  report["gpu_time"]["by_family"] = priced_by_family(run.costs->priced());
  sim::write_file_atomically(o.out / "report.json", report.dump(2) + "\n");
  if (o.kernel_db) kernels::record_missing(*o.kernel_db, run.costs->model().missing());
  {
    std::ostringstream links;
    simulation.network().write_links_csv(links);
    sim::write_file_atomically(o.out / "links.csv", links.str());
  }
  if (o.quiet && outcome.status != "ok") {
    // No summary, but a run that did not end well still says why.
    fmt::print(stderr, "phantora: {}: {}\n", outcome.status, outcome.message);
  }
  if (!o.quiet) {
    std::cerr << sim::summary_table(report);
    print_by_family(report["gpu_time"]["by_family"]);
    fmt::print(stderr, "  outputs: {0}/report.json, {0}/trace.json, {0}/links.csv{1}\n",
               o.out.string(), job_log ? fmt::format(", {}", job_log->string()) : "");
  }
  if (run.baseline) {
    const ReportComparison cmp = compare_reports(*run.baseline, report);
    const double change = cmp.headline.relative();
    const bool slower = change > o.max_slowdown;
    fmt::print(stderr, "phantora: against baseline {}: {} {:+.2f}% (limit +{:.2f}%){}\n",
               o.baseline->string(), cmp.headline.name, 100 * change, 100 * o.max_slowdown,
               slower ? ": REGRESSION" : ": ok");
    bool grew = false;
    if (o.max_memory_growth) {
      const MemoryGate memory = check_memory_growth(*run.baseline, report, *o.max_memory_growth);
      fmt::print(stderr, "phantora: against baseline {}: {}", o.baseline->string(),
                 format_memory_gate(memory, *o.max_memory_growth));
      grew = memory.regression();
    }
    if (slower || grew || !o.quiet) std::cerr << format_comparison(cmp, "baseline", "this run");
    if ((slower || grew) && outcome.exit_code == 0) return kRegressionExit;
  }
  return outcome.exit_code;
}

}  // namespace phantora::tools
