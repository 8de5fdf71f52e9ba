// The `phantora` command.
#include <iostream>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "db_command.hpp"
#include "host_environment.hpp"
#include "job_output.hpp"
#include "memory_gate.hpp"
#include "numeric_options.hpp"
#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/netmodel/gpu_systems.hpp"
#include "phantora/protocol.hpp"
#include "report_compare.hpp"
#include "run_command.hpp"
#include "serve_command.hpp"
#include "sweep_command.hpp"

using phantora::tools::in_range;
using phantora::tools::number_above;
using phantora::tools::number_at_least;
using phantora::tools::RunOptions;
using phantora::tools::whole_at_least;
using phantora::tools::whole_from_to;

namespace {

// The options that shape the simulation, common to `run` and `serve`.
void add_simulation_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--hosts", o.hosts, "Number of simulated hosts (default 1, or the topology's)")
      ->check(in_range("--hosts", whole_at_least(1)));
  cmd->add_option("--gpus-per-host", o.gpus_per_host,
                  "GPUs per host (default 8, or the topology's)")
      ->check(
          in_range("--gpus-per-host", whole_from_to(1, phantora::wire::kMaxDevicesPerHost - 1)));
  cmd->add_option("--gpu", o.gpu,
                  "GPU model, see `phantora gpus` (default h100, or the topology's)");
  cmd->add_option("--topology", o.topology,
                  "Cluster topology: a TOML file (docs/topology.md) or a preset name "
                  "(dgx-a100, dgx-h100, dgx-h200, dgx-b200, gb200-nvl72, ethernet-2tier)");
  cmd->add_option("--nic-gbytes-per-s", o.nic_gbytes_per_s,
                  "Effective bandwidth of each NIC, GB/s per direction (overrides the "
                  "topology's; 400 Gb/s InfiniBand is about 48.5)")
      ->check(in_range("--nic-gbytes-per-s", number_above(0)));
  cmd->add_option("--oversubscription", o.oversubscription,
                  "Leaf-to-spine oversubscription ratio, >= 1 (overrides the topology's)")
      ->check(in_range("--oversubscription", number_at_least(1)));
  cmd->add_option("--represent-dp", o.represent_dp,
                  "Simulate N data-parallel replicas of the job: it runs on --hosts hosts, the "
                  "cluster has N times as many, and the other replicas' traffic is simulated "
                  "as copies of the live one's (docs/scale.md)")
      ->check(in_range("--represent-dp", whole_at_least(1)))
      ->capture_default_str();
  cmd->add_option("--dp-comms", o.dp_comms,
                  "With --represent-dp: which of the job's NCCL communicators are "
                  "data-parallel: all (DDP/FSDP jobs), or size:K[,K...] (those with K ranks, "
                  "e.g. size:2 for a tensor-parallel job launched with data-parallel size 2)")
      ->capture_default_str();
  cmd->add_option("--cpu-time", o.cpu_time,
                  "How host time advances between calls: measured (process CPU time), model "
                  "(fixed cost per call, deterministic) or zero")
      ->check(CLI::IsMember({"measured", "model", "zero"}))
      ->capture_default_str();
  cmd->add_option("--host-speed", o.host_speed,
                  "With --cpu-time measured: the simulated host's single-thread CPU speed "
                  "relative to this machine's (2 = twice as fast: CPU time counts half); "
                  "scripts/host-speed.py measures it (docs/time.md, \"Host speed\")")
      ->check(in_range("--host-speed", number_above(0)))
      ->capture_default_str();
  cmd->add_option("--moe-imbalance", o.moe_imbalance,
                  "MoE routing where a framework reads per-expert token counts that the "
                  "simulator does not compute (TorchTitan's expert parallelism): 0 = every "
                  "expert gets an equal share, s > 0 = shares proportional to 1/(rank+1)^s "
                  "(docs/frameworks/torchtitan.md)")
      ->check(in_range("--moe-imbalance", number_at_least(0)))
      ->capture_default_str();
  cmd->add_flag("--warm-ranks,!--no-warm-ranks", o.warm_ranks,
                "Python ranks start as children of a per-host process that has already "
                "imported PHANTORA_WARM_MODULES (default torch,torch._dynamo), sharing its memory; "
                "--no-warm-ranks starts every rank as a process of its own (docs/scale.md)")
      ->capture_default_str();
  cmd->add_option("--kernel-times", o.kernel_times,
                  "CSV of pinned kernel durations (header: kernel,duration_us)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--launch-latency-us", o.launch_latency_us,
                  "Latency from a launch call to the GPU starting the work (default: the "
                  "--kernel-db's measured launch round trip for the GPU, else 4)")
      ->check(in_range("--launch-latency-us", number_at_least(0)));
  cmd->add_option("--call-cost-us", o.call_cost_us,
                  "Host time charged per GPU-work API call (measured and model modes)")
      ->check(in_range("--call-cost-us", number_at_least(0)))
      ->capture_default_str();
  cmd->add_option("--kernel-db", o.kernel_db,
                  "Kernel database (SQLite, `phantora db`) to take measured costs from; the "
                  "signatures the run had to model are added to its `missing` table");
  cmd->add_option("--collective-timeout", o.collective_timeout_s,
                  "End the run when some ranks have waited this many wall-clock seconds for a "
                  "collective that others never called (0: never)")
      ->check(in_range("--collective-timeout", whole_at_least(0)))
      ->capture_default_str();
}

void add_token_option(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--token-file", o.token_file,
                  "File holding the run's token (16-32 printable characters), which ranks "
                  "must show: over TCP the only authentication. Default: a random token");
}

}  // namespace

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
  add_simulation_options(run_cmd, run);
  run_cmd->add_option("--out", run.out, "Directory for report.json and trace.json")
      ->capture_default_str();
  run_cmd->add_option("--timeout", run.timeout_s, "Stop the run after this many wall-clock seconds")
      ->check(in_range("--timeout", whole_at_least(1)));
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
  std::string max_memory_growth;
  run_cmd->add_option("--max-memory-growth", max_memory_growth,
                      "With --baseline: exit 3 and name the GPU when a GPU's peak memory is above "
                      "the baseline's by more than this, e.g. 5% (default: not checked)");
  run_cmd
      ->add_option("--expect-steps", run.expect_steps,
                   "How many step-time lines the job will print: the progress line on a "
                   "terminal then estimates the time left (default: no estimate)")
      ->check(CLI::PositiveNumber);
  run_cmd
      ->add_option("--launcher", run.launcher,
                   "Who starts the hosts' commands: local (here), slurm (one srun across the "
                   "allocation phantora runs in) or k8s (write Kubernetes manifests instead of "
                   "running; docs/cluster-launch.md)")
      ->check(CLI::IsMember({"local", "slurm", "k8s"}))
      ->capture_default_str();
  run_cmd->add_option("--listen", run.listen,
                      "The simulator listens on TCP at HOST:PORT (port 0: any; 0.0.0.0: every "
                      "address) instead of a private Unix socket; default for slurm 0.0.0.0:0");
  run_cmd->add_option("--advertise", run.advertise,
                      "Host name the ranks reach the simulator by, when --listen's host is a "
                      "wildcard (default: this machine's name for slurm, loopback for local)");
  add_token_option(run_cmd, run);
  run_cmd
      ->add_option("--hosts-per-node", run.hosts_per_node,
                   "slurm: simulated hosts per node (srun --ntasks-per-node); default: Slurm's "
                   "distribution over the allocation")
      ->check(in_range("--hosts-per-node", whole_at_least(1)));
  run_cmd
      ->add_option("--srun-arg", run.srun_args,
                   "slurm: one more option for srun, e.g. --srun-arg=--cpus-per-task=4 "
                   "(repeatable)")
      ->allow_extra_args(false);
  run_cmd->add_option("--k8s-image", run.k8s_image,
                      "k8s: container image holding phantora (at the same path) and the job");
  run_cmd->add_option("--k8s-out", run.k8s_out, "k8s: directory to write the manifests to");
  run_cmd->add_option("--k8s-name", run.k8s_name, "k8s: prefix of the objects' names")
      ->capture_default_str();
  run_cmd->add_option("--k8s-namespace", run.k8s_namespace, "k8s: namespace of the objects");
  run_cmd
      ->add_option("--k8s-port", run.k8s_port,
                   fmt::format("k8s: the daemon's TCP port (default {})",
                               phantora::tools::kDefaultDaemonPort))
      ->check(in_range("--k8s-port", whole_from_to(1, 65535)));
  run_cmd->add_option("--k8s-phantora", run.k8s_phantora,
                      "k8s: phantora's path inside the image (default: this phantora's path)");
  run_cmd->add_option("--k8s-out-claim", run.k8s_out_claim,
                      "k8s: PersistentVolumeClaim for the daemon's outputs (default: an "
                      "emptyDir; the summary is in the daemon's log either way)");
  run_cmd->add_option("command", run.command, "The command to run, after --")->required();

  RunOptions serve;
  CLI::App* serve_cmd = app.add_subcommand(
      "serve",
      "Run the simulator alone, on TCP, for ranks started elsewhere; writes the report when "
      "they have all finished (docs/cluster-launch.md)");
  add_simulation_options(serve_cmd, serve);
  serve_cmd->add_option("--listen", serve.listen,
                        fmt::format("HOST:PORT to listen on (port 0: any; default 0.0.0.0:{})",
                                    phantora::tools::kDefaultDaemonPort));
  add_token_option(serve_cmd, serve);
  serve_cmd->add_option("--out", serve.out, "Directory for report.json and trace.json")
      ->capture_default_str();
  serve_cmd
      ->add_option("--timeout", serve.timeout_s,
                   "End the run after this many wall-clock seconds, ranks or not")
      ->check(in_range("--timeout", whole_at_least(1)));
  serve_cmd->add_flag("--quiet,-q", serve.quiet, "Print no summary");

  // Internal: one simulated host of a run whose ranks another launcher starts (srun's tasks,
  // the Kubernetes pods; host_environment.hpp). Hidden from --help.
  std::string host_from;
  phantora::tools::JobShape host_shape;
  std::vector<std::string> host_command;
  CLI::App* host_cmd = app.add_subcommand("__host", "")->group("");
  host_cmd->add_option("--host-from", host_from)->required();
  host_cmd->add_option("--hosts", host_shape.hosts)->required();
  host_cmd->add_option("--gpus-per-host", host_shape.gpus_per_host)->required();
  host_cmd->add_option("--cpu-time", host_shape.cpu_time)
      ->check(CLI::IsMember({"measured", "model", "zero"}));
  host_cmd->add_option("--epoch-ns", host_shape.epoch_ns);
  host_cmd->add_option("--moe-imbalance", host_shape.moe_imbalance)->check(CLI::NonNegativeNumber);
  host_cmd->add_option("--host-speed", host_shape.host_speed)->check(CLI::PositiveNumber);
  host_cmd->add_flag("--warm-ranks,!--no-warm-ranks", host_shape.warm_ranks);
  host_cmd->add_option("--prices-key", host_shape.prices_key);
  host_cmd->add_option("command", host_command)->required();

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
  std::string report_max_memory_growth;
  report_cmd->add_option("--max-memory-growth", report_max_memory_growth,
                         "Exit 3 when a GPU's peak memory in the second run is above the first's "
                         "by more, e.g. 5%");
  phantora::tools::DbCommand db_cmd(app);
  phantora::tools::SweepCommand sweep_cmd(app);

  try {
    app.parse(argc, argv);
  } catch (const phantora::tools::OptionValueError& e) {
    // A number out of its option's range: the same words and exit status as other bad input.
    fmt::print(stderr, "phantora: error: {}\n", e.what());
    return 2;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*tee_cmd) return phantora::tools::run_tee(tee_log, tee_fds);
  if (*host_cmd) {
    try {
      return phantora::tools::run_host(host_from, host_shape, host_command);
    } catch (const std::exception& e) {
      fmt::print(stderr, "phantora: error: {}\n", e.what());
      return 2;
    }
  }
  if (app.get_subcommands().empty()) {
    fmt::print(
        stderr,
        "phantora: error: name a subcommand: run, serve, sweep, report, gpus or db (phantora "
        "--help)\n");
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
        std::cout << phantora::kernels::format_preset(p);
        // The network a run gets with this --gpu and no --topology.
        if (const auto* s = phantora::net::system_of_gpu(p.key))
          std::cout << fmt::format("  {:<32} {} ({})\n", "network (no --topology)", s->topology,
                                   s->source);
        std::cout << "\n";
      }
      return 0;
    }
    if (*report_cmd) {
      namespace t = phantora::tools;
      // Limits are checked before anything is printed; -1: not asked for (parse_percent
      // refuses negative ones).
      const double slowdown_limit =
          report_max_slowdown.empty() ? -1 : t::parse_percent(report_max_slowdown);
      const double memory_limit =
          report_max_memory_growth.empty() ? -1 : t::parse_percent(report_max_memory_growth);
      const nlohmann::json a = t::load_report(report_a), b = t::load_report(report_b);
      const auto cmp = t::compare_reports(a, b);
      std::cout << t::format_comparison(cmp, report_a, report_b);
      bool regression = slowdown_limit >= 0 && cmp.headline.relative() > slowdown_limit;
      if (memory_limit >= 0) {
        const t::MemoryGate memory = t::check_memory_growth(a, b, memory_limit);
        std::cout << t::format_memory_gate(memory, memory_limit);
        regression = regression || memory.regression();
      }
      return regression ? t::kRegressionExit : 0;
    }
    if (*serve_cmd) return phantora::tools::serve_command(serve);
    run.max_slowdown = phantora::tools::parse_percent(max_slowdown);
    if (!max_memory_growth.empty()) {
      run.max_memory_growth = phantora::tools::parse_percent(max_memory_growth);
    }
    return phantora::tools::run_command(run);
  } catch (const std::exception& e) {
    fmt::print(stderr, "phantora: error: {}\n", e.what());
    return 2;
  }
}
