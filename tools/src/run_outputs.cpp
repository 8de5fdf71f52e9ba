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
  const nlohmann::json report = sim::make_report(run.config, stats, outcome);
  sim::write_file_atomically(o.out / "report.json", report.dump(2) + "\n");
  if (o.kernel_db) kernels::record_missing(*o.kernel_db, run.costs->model().missing());
  {
    std::ostringstream links;
    simulation.network().write_links_csv(links);
    sim::write_file_atomically(o.out / "links.csv", links.str());
  }
  if (!o.quiet) {
    std::cerr << sim::summary_table(report);
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
