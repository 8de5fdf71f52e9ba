#include "serve_command.hpp"

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "daemon.hpp"
#include "daemon_address.hpp"
#include "job_completion.hpp"
#include "run_outputs.hpp"
#include "run_setup.hpp"
#include "run_token.hpp"
#include "stop_signals.hpp"

namespace phantora::tools {
namespace {

// How long the job must have stayed finished before the run ends.
constexpr std::chrono::milliseconds kSettle{1000};

}  // namespace

int serve_command(const RunOptions& o) {
  const HostPort listen =
      parse_listen(o.listen.value_or(fmt::format("0.0.0.0:{}", kDefaultDaemonPort)));
  std::optional<std::string> token;
  if (o.token_file) token = read_token_file(*o.token_file);
  PreparedRun run = prepare_run(o);
  std::filesystem::create_directories(o.out);
  std::string token_from = o.token_file ? o.token_file->string() : "";
  if (!token) {
    token = random_token();
    token_from = (o.out / "token").string();
    write_private_file(token_from, *token + "\n");
  }
  run.config.token = *token;
  // Declared before the daemon: its thread reports to them until it is stopped.
  std::mutex mu;
  JobCompletion completion(run.cluster.hosts, kSettle);
  Daemon daemon(run, listen,
                ClientObserver{[&](sim::ClientId id, const wire::Hello& h) {
                                 std::lock_guard lock(mu);
                                 completion.joined(id, h.host, h.global_rank, h.world_size,
                                                   JobCompletion::Clock::now());
                               },
                               [&](sim::ClientId id, bool) {
                                 std::lock_guard lock(mu);
                                 completion.left(id, JobCompletion::Clock::now());
                               }});
  // Always said, -q or not: whoever starts the ranks needs the port.
  fmt::print(stderr,
             "phantora: serving {} host(s) x {} {}; listening on {}; the ranks' token is in {}\n",
             run.cluster.hosts, run.cluster.gpus_per_host, run.gpu->device_name(),
             HostPort{listen.host, daemon.tcp_port()}.to_string(), token_from);

  std::optional<StopSignals> stop(std::in_place);
  const auto start = JobCompletion::Clock::now();
  sim::RunOutcome outcome;
  outcome.launcher = "serve";
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = JobCompletion::Clock::now();
    std::lock_guard lock(mu);
    if (completion.done(now)) break;
    if (stop->caught()) {
      outcome.status = "interrupted";
      outcome.exit_code = 130;
      outcome.message = fmt::format(
          "interrupted (SIGINT/SIGTERM) while waiting for: {}; the report covers the run until "
          "then",
          completion.waiting_for());
      break;
    }
    if (const auto why = daemon.failure()) {
      outcome.status = "failed";
      outcome.exit_code = 1;
      outcome.message = "the simulator stopped the job: " + *why;
      break;
    }
    if (o.timeout_s && now - start > std::chrono::seconds(*o.timeout_s)) {
      outcome.status = "failed";
      outcome.exit_code = 124;
      outcome.message = fmt::format("the run exceeded --timeout {} s while waiting for: {}",
                                    *o.timeout_s, completion.waiting_for());
      break;
    }
  }
  stop.reset();  // a signal from here on ends phantora as usual
  {
    // Wall time of the job: from its first process to its last (waiting for the ranks to be
    // scheduled is not the simulation's slowness).
    std::lock_guard lock(mu);
    const auto end =
        outcome.status == "ok" ? completion.last_change() : JobCompletion::Clock::now();
    outcome.wall_seconds =
        completion.anyone() ? std::chrono::duration<double>(end - completion.first_joined()).count()
                            : 0.0;
  }
  if (!outcome.message.empty()) fmt::print(stderr, "phantora: {}\n", outcome.message);
  daemon.stop(std::chrono::milliseconds(2000));
  return write_outputs(o, run, daemon.simulation(), outcome, std::nullopt);
}

}  // namespace phantora::tools
