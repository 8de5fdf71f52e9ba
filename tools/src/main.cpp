// The `phantora` command.
#include <iostream>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "db_command.hpp"
#include "job_output.hpp"
#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "report_compare.hpp"
#include "run_command.hpp"
#include "sweep_command.hpp"

using phantora::tools::RunOptions;

int main(int argc, char** argv) {
  CLI::App app{"phantora: run unmodified GPU programs on a simulated GPU cluster"};
  // At most one subcommand; anything else on the line is named in the error ("fly" in
  // `phantora fly` is "not expected", not a missing subcommand).
  app.require_subcommand(0, 1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "Daemon log level: trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a command on a simulated cluster");
  run_cmd->add_option("--hosts", run.hosts,
                      "Number of simulated hosts (default 1, or the topology's)");
  run_cmd->add_option("--gpus-per-host", run.gpus_per_host,
                      "GPUs per host (default 8, or the topology's)");
  run_cmd->add_option("--gpu", run.gpu,
                      "GPU model, see `phantora gpus` (default h100, or the topology's)");
  run_cmd->add_option("--topology", run.topology,
                      "Cluster topology: a TOML file (docs/topology.md) or a preset name "
                      "(dgx-a100, dgx-h100, dgx-h200, ethernet-2tier)");
  run_cmd->add_option("--nic-gbytes-per-s", run.nic_gbytes_per_s,
                      "Effective bandwidth of each NIC, GB/s per direction (overrides the "
                      "topology's; 400 Gb/s InfiniBand is about 48.5)");
  run_cmd->add_option("--oversubscription", run.oversubscription,
                      "Leaf-to-spine oversubscription ratio, >= 1 (overrides the topology's)");
  run_cmd
      ->add_option("--represent-dp", run.represent_dp,
                   "Simulate N data-parallel replicas of the job: it runs on --hosts hosts, the "
                   "cluster has N times as many, and the other replicas' traffic is simulated "
                   "as copies of the live one's (docs/scale.md)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_cmd
      ->add_option("--dp-comms", run.dp_comms,
                   "With --represent-dp: which of the job's NCCL communicators are "
                   "data-parallel: all (DDP/FSDP jobs), or size:K[,K...] (those with K ranks, "
                   "e.g. size:1 for a job launched with data-parallel size 1)")
      ->capture_default_str();
  run_cmd->add_option("--out", run.out, "Directory for report.json and trace.json")
      ->capture_default_str();
  run_cmd
      ->add_option("--cpu-time", run.cpu_time,
                   "How host time advances between calls: measured (process CPU time), model "
                   "(fixed cost per call, deterministic) or zero")
      ->check(CLI::IsMember({"measured", "model", "zero"}))
      ->capture_default_str();
  run_cmd
      ->add_option("--kernel-times", run.kernel_times,
                   "CSV of pinned kernel durations (header: kernel,duration_us)")
      ->check(CLI::ExistingFile);
  run_cmd
      ->add_option("--launch-latency-us", run.launch_latency_us,
                   "Latency from a launch call to the GPU starting the work")
      ->capture_default_str();
  run_cmd
      ->add_option("--call-cost-us", run.call_cost_us,
                   "Host time charged per GPU-work API call (measured and model modes)")
      ->capture_default_str();
  run_cmd->add_option("--kernel-db", run.kernel_db,
                      "Kernel database (SQLite, `phantora db`) to take measured costs from; the "
                      "signatures the run had to model are added to its `missing` table");
  run_cmd->add_option("--timeout", run.timeout_s, "Stop the run after this many wall-clock seconds")
      ->check(CLI::PositiveNumber);
  run_cmd
      ->add_option("--collective-timeout", run.collective_timeout_s,
                   "End the run when some ranks have waited this many wall-clock seconds for a "
                   "collective that others never called (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  run_cmd->add_flag("--quiet,-q", run.quiet, "Print no banner or summary");
  run_cmd->add_option("--step-time-regex", run.step_time_regex,
                      "Regex for the job's step-time lines: group 1 the number, optional group "
                      "2 the unit (s, ms, us; default ms). Default: \"step N ... step time X "
                      "ms\" and Megatron's \"elapsed time per iteration (ms): X\"");
  run_cmd->add_option("--baseline", run.baseline,
                      "report.json (or run directory) of an earlier run: exit 3 and say what got "
                      "slower when this run's step time is slower by more than --max-slowdown");
  std::string max_slowdown = "2%";
  run_cmd->add_option("--max-slowdown", max_slowdown,
                      "Allowed slowdown against --baseline, e.g. 2% (default)");
  run_cmd->add_option("command", run.command, "The command to run, after --")->required();

  CLI::App* gpus_cmd = app.add_subcommand("gpus", "List the GPU models the simulator knows");
  // Internal: the job-output copier `phantora run` starts (job_output.hpp). Hidden from --help.
  std::string tee_log;
  std::vector<std::string> tee_fds;
  CLI::App* tee_cmd = app.add_subcommand("__tee", "")->group("");
  tee_cmd->add_option("log", tee_log)->required();
  tee_cmd->add_option("fds", tee_fds)->required();
  std::string report_a, report_b;
  std::string report_max_slowdown;
  CLI::App* report_cmd =
      app.add_subcommand("report", "Compare two runs: step time, totals, kernels, collectives");
  report_cmd->add_option("baseline", report_a, "report.json or run directory")->required();
  report_cmd->add_option("current", report_b, "report.json or run directory")->required();
  report_cmd->add_option("--max-slowdown", report_max_slowdown,
                         "Exit 3 when the second run is slower than the first by more, e.g. 2%");
  phantora::tools::DbCommand db_cmd(app);
  phantora::tools::SweepCommand sweep_cmd(app);

  CLI11_PARSE(app, argc, argv);
  if (*tee_cmd) return phantora::tools::run_tee(tee_log, tee_fds);
  if (app.get_subcommands().empty()) {
    fmt::print(
        stderr,
        "phantora: error: name a subcommand: run, sweep, report, gpus or db (phantora --help)\n");
    return 2;
  }
  // The daemon's messages go to stderr: stdout belongs to the job.
  spdlog::set_default_logger(spdlog::stderr_color_mt("phantora"));
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("phantora: %l: %v");

  try {
    if (db_cmd.chosen()) return db_cmd.run();
    if (sweep_cmd.chosen()) return sweep_cmd.run();
    if (*gpus_cmd) {
      for (const auto& p : phantora::kernels::GpuCatalog::builtin().presets()) {
        std::cout << phantora::kernels::format_preset(p) << "\n";
      }
      return 0;
    }
    if (*report_cmd) {
      namespace t = phantora::tools;
      const auto cmp = t::compare_reports(t::load_report(report_a), t::load_report(report_b));
      std::cout << t::format_comparison(cmp, report_a, report_b);
      if (!report_max_slowdown.empty() &&
          cmp.headline.relative() > t::parse_percent(report_max_slowdown)) {
        return t::kRegressionExit;
      }
      return 0;
    }
    run.max_slowdown = phantora::tools::parse_percent(max_slowdown);
    return phantora::tools::run_command(run);
  } catch (const std::exception& e) {
    fmt::print(stderr, "phantora: error: {}\n", e.what());
    return 2;
  }
}
