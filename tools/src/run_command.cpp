#include "run_command.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "daemon.hpp"
#include "daemon_address.hpp"
#include "host_environment.hpp"
#include "job_output.hpp"
#include "k8s_manifests.hpp"
#include "launcher.hpp"
#include "prices_key.hpp"
#include "run_outputs.hpp"
#include "run_progress.hpp"
#include "run_setup.hpp"
#include "run_token.hpp"
#include "shim_location.hpp"
#include "slurm_launch.hpp"
#include "stall_snapshot.hpp"

namespace phantora::tools {
namespace {

sim::RunOutcome outcome_of(const RunOptions& o, const LaunchResult& launched,
                           const std::string& launch_error, const std::string& stalled_on,
                           double wall) {
  sim::RunOutcome outcome;
  outcome.wall_seconds = wall;
  outcome.command = o.command;
  outcome.launcher = o.launcher;
  if (!launch_error.empty()) {
    outcome.status = "failed";
    outcome.exit_code = 127;
    outcome.message = launch_error;
  }
  for (const HostExit& e : launched.hosts) {
    if (e.exit_code != 0 && outcome.exit_code == 0) {
      outcome.status = "failed";
      outcome.exit_code = e.exit_code;
      outcome.message = o.launcher == "slurm"
                            ? fmt::format("srun (pid {}) {}", e.pid, e.how)
                            : fmt::format("host {} (pid {}) {}", e.host, e.pid, e.how);
    }
  }
  if (launched.timed_out) {
    outcome.status = "failed";
    outcome.exit_code = 124;
    outcome.message = fmt::format("the run exceeded --timeout {} s and was stopped", *o.timeout_s);
    if (!stalled_on.empty())
      outcome.message += fmt::format("; the simulation stood so a moment before:\n{}", stalled_on);
  }
  if (!launched.aborted.empty()) {
    outcome.status = "failed";
    outcome.exit_code = 1;
    outcome.message = "the simulator stopped the job: " + launched.aborted;
  }
  if (launched.interrupted) {
    outcome.status = "interrupted";
    outcome.exit_code = 130;
    outcome.message = "interrupted (SIGINT/SIGTERM); the report covers the run until then";
  }
  return outcome;
}

}  // namespace

int run_command(const RunOptions& o) {
  // Everything that can be wrong with the input is checked before anything starts.
  if (o.command.empty())
    throw std::invalid_argument("no command given: phantora run [options] -- <command> [args]");
  if (o.launcher == "k8s") return write_k8s_manifests(o);
  if (o.launcher != "local" && o.launcher != "slurm") {
    throw std::invalid_argument(
        fmt::format("--launcher must be local, slurm or k8s (got '{}')", o.launcher));
  }
  const bool slurm = o.launcher == "slurm";
  if (!slurm && (o.hosts_per_node || !o.srun_args.empty()))
    throw std::invalid_argument("--hosts-per-node and --srun-arg go with --launcher slurm");
  std::optional<HostPort> listen;
  if (o.listen) listen = parse_listen(*o.listen);
  // The ranks of a Slurm job may run on any node of the allocation: every address, by default.
  if (slurm && !listen) listen = HostPort{"0.0.0.0", 0};
  if (o.advertise && !listen) throw std::invalid_argument("--advertise goes with --listen");
  const std::filesystem::path srun = slurm ? check_slurm() : std::filesystem::path();
  const std::string token = o.token_file ? read_token_file(*o.token_file) : random_token();
  PreparedRun run = prepare_run(o);
  const std::filesystem::path shim = find_shim();
  // Only now that the input is known to be good does anything get written.
  std::filesystem::create_directories(o.out);

  run.config.token = token;
  // Before the daemon: it tells the progress line who connects, until it stops.
  RunProgress progress(RunProgress::wanted(o), run.scanner, o.out / "job.log", o.expect_steps);
  // Before the daemon too: its thread may still run what was posted until the daemon goes.
  StallSnapshot stall;
  Daemon daemon(run, listen, progress.observer());
  DaemonContact contact{daemon.socket(), ""};
  if (listen) {
    contact.address = rank_address(*listen, daemon.tcp_port(), o.advertise, slurm);
    if (slurm && !o.advertise && is_loopback(listen->host)) {
      fmt::print(stderr,
                 "phantora: warning: the simulator listens on loopback ({}); only ranks on this "
                 "machine can reach it\n",
                 listen->host);
    }
  }

  // One epoch for time.time() in every rank (the start-up hook adds the simulated clock).
  const JobShape shape{run.cluster.hosts,
                       run.cluster.gpus_per_host,
                       o.cpu_time,
                       std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count(),
                       o.moe_imbalance,
                       o.host_speed,
                       o.warm_ranks,
                       prices_key(run.cluster.gpu, o.kernel_db, o.kernel_times)};
  // The job's output goes through phantora: to the terminal as it comes, and into job.log,
  // where the step times are read from. Under Slurm, srun brings every task's output back.
  JobOutput job_output(o.out / "job.log");
  std::vector<HostLaunch> launches;
  const int processes = slurm ? 1 : shape.hosts;
  for (int h = 0; h < processes; ++h) {
    HostLaunch l;
    l.host = h;
    if (slurm) {
      l.argv = srun_argv(srun, std::filesystem::read_symlink("/proc/self/exe"), o, shape);
      // What `phantora __host` needs on every node; secrets stay off the command line.
      l.env = {{"PHANTORA_ADDRESS", contact.address}, {"PHANTORA_TOKEN", token}};
    } else {
      l.argv = o.command;
      l.env = job_environment(shim, contact, token, h, shape);
      // Python buffers a pipe's output in blocks; line by line keeps the log in step with the
      // terminal (the user's own setting wins).
      if (std::getenv("PYTHONUNBUFFERED") == nullptr) l.env["PYTHONUNBUFFERED"] = "1";
    }
    const JobOutput::HostPipes pipes = job_output.add_host();
    l.stdout_fd = pipes.stdout_write;
    l.stderr_fd = pipes.stderr_write;
    launches.push_back(std::move(l));
  }
  if (progress.active()) job_output.add_status_line();
  job_output.start(std::filesystem::read_symlink("/proc/self/exe"));
  if (!o.quiet) {
    const sim::SimulationConfig& config = run.config;
    if (config.replicas > 1) {
      fmt::print(stderr,
                 "phantora: simulating {} host(s) x {} {} on {}: {} live, the rest {} "
                 "data-parallel replica(s) of them (dp comms: {}); running{}: {}\n",
                 config.represented_hosts(), run.cluster.gpus_per_host, run.gpu->device_name(),
                 run.cluster.topology->spec().name, run.cluster.hosts, config.replicas - 1,
                 config.dp_comms.describe(), slurm ? " through srun" : "",
                 fmt::join(o.command, " "));
    } else {
      fmt::print(stderr, "phantora: simulating {} host(s) x {} {} on {}; running{}: {}\n",
                 run.cluster.hosts, run.cluster.gpus_per_host, run.gpu->device_name(),
                 run.cluster.topology->spec().name, slurm ? " through srun" : "",
                 fmt::join(o.command, " "));
    }
    if (listen) {
      fmt::print(stderr, "phantora: the simulator listens on {} (ranks connect to {})\n",
                 HostPort{listen->host, daemon.tcp_port()}.to_string(), contact.address);
    }
  }

  const auto wall_start = std::chrono::steady_clock::now();
  LaunchResult launched;
  std::string launch_error;
  try {
    // The daemon reports a job that cannot go on (collectives that disagree); the launcher
    // polls for it and stops the job. The poll also keeps the progress line up to date.
    launched = launch_and_wait(
        launches, o.timeout_s ? std::optional(std::chrono::seconds(*o.timeout_s)) : std::nullopt,
        [&] {
          progress.tick(daemon, job_output);
          if (o.timeout_s) stall.refresh(daemon);
          return daemon.failure();
        },
        [&] { daemon.job_stopped(); });
  } catch (const std::exception& e) {
    launch_error = e.what();
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  job_output.finish(std::chrono::milliseconds(2000));

  // The job's processes are gone; their connections close. Give stragglers (a process that
  // escaped its host's process group) a moment, then end the daemon.
  daemon.stop(std::chrono::milliseconds(2000));
  return write_outputs(o, run, daemon.simulation(),
                       outcome_of(o, launched, launch_error, stall.last(), wall),
                       job_output.log_path());
}

}  // namespace phantora::tools
