#include "sweep_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "numeric_options.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/protocol.hpp"
#include "phantora/simcore/report.hpp"
#include "stop_signals.hpp"
#include "sweep_plots.hpp"
#include "sweep_results.hpp"

namespace phantora::tools {
namespace {

// A comma-separated axis, each value under the rule of the `phantora run` option it becomes.
template <typename T>
std::vector<T> parse_list(const std::string& text, const char* option, const NumberRule& rule) {
  std::vector<T> out;
  for (const std::string& item : split_list(text))
    out.push_back(static_cast<T>(parse_number(option, item, rule)));
  return out;
}

// The `phantora run` command line of one point.
std::vector<std::string> run_args(const SweepSpec& spec, const SweepPoint& p, int index,
                                  const std::filesystem::path& self,
                                  const std::filesystem::path& dir) {
  std::vector<std::string> a = {self.string(),     "run",
                                "--hosts",         std::to_string(p.hosts),
                                "--gpus-per-host", std::to_string(p.gpus_per_host),
                                "--gpu",           p.gpu,
                                "--cpu-time",      spec.cpu_time,
                                "--out",           dir.string()};
  if (!p.topology.empty()) a.insert(a.end(), {"--topology", p.topology});
  if (p.nic_gbytes_per_s)
    a.insert(a.end(), {"--nic-gbytes-per-s", fmt::format("{}", *p.nic_gbytes_per_s)});
  if (p.oversubscription)
    a.insert(a.end(), {"--oversubscription", fmt::format("{}", *p.oversubscription)});
  if (p.replicas > 1) {
    a.insert(a.end(), {"--represent-dp", std::to_string(p.replicas)});
    if (!spec.dp_comms.empty()) a.insert(a.end(), {"--dp-comms", spec.dp_comms});
  }
  if (spec.timeout_s) a.insert(a.end(), {"--timeout", std::to_string(*spec.timeout_s)});
  if (!spec.step_time_regex.empty()) a.insert(a.end(), {"--step-time-regex", spec.step_time_regex});
  a.push_back("--");
  for (const std::string& c : point_command(spec, p, index)) a.push_back(c);
  return a;
}

pid_t start_point(const std::vector<std::string>& args, const std::filesystem::path& log) {
  std::vector<char*> argv;
  for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error(
        fmt::format("cannot write {}: {}", log.string(), std::strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    ::close(STDIN_FILENO);
    ::open("/dev/null", O_RDONLY);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(fd);
  return pid;
}

std::string describe(const PointResult& r) {
  if (r.status != "ok") return "FAILED: " + r.reason;
  return fmt::format("ok, step {:.2f} ms{}, {:.1f} s wall", r.step_s * 1e3,
                     r.step_from_log ? "" : " (simulated time of the run)", r.wall_s);
}

}  // namespace

SweepCommand::SweepCommand(CLI::App& app) {
  cmd_ = app.add_subcommand(
      "sweep", "Run one workload over cluster variations; compare in a table and plots");
  cmd_->add_option("--hosts", hosts_, "Host counts, e.g. 1,2,4,8");
  cmd_->add_option("--gpus-per-host", gpus_per_host_, "GPUs per host, e.g. 8 or 4,8");
  cmd_->add_option("--gpu", gpu_, "GPU models, e.g. h100,h200 (`phantora gpus`)");
  cmd_->add_option("--topology", topology_, "Topology presets or files, comma separated");
  cmd_->add_option("--nic-gbytes-per-s", nic_,
                   "NIC bandwidths (GB/s per direction), e.g. 48.5,12.5");
  cmd_->add_option("--oversubscription", oversubscription_, "Leaf-to-spine ratios, e.g. 1,2,4");
  cmd_->add_option("--represent-dp", represent_dp_,
                   "Data-parallel replicas represented (phantora run --represent-dp), e.g. "
                   "1,16,128: the job runs on --hosts, the cluster is that many times larger");
  cmd_->add_option("--dp-comms", spec_.dp_comms,
                   "As for phantora run, for points with --represent-dp above 1");
  cmd_->add_option("--var", vars_,
                   "An axis of the workload's own placeholder: name=a,b (repeatable), e.g. "
                   "--var sharding=table-wise,dmt for {sharding}");
  cmd_->add_option("--file", file_, "TOML sweep file: axes or explicit points (docs/sweep.md)")
      ->check(CLI::ExistingFile);
  cmd_->add_option("--parallel", spec_.parallel, "Points run at once")
      ->check(in_range("--parallel", whole_at_least(1)))
      ->capture_default_str();
  cmd_->add_option("--out", spec_.out, "Directory for the points' runs, the table and the plots")
      ->capture_default_str();
  cmd_->add_option("--cpu-time", spec_.cpu_time, "As for phantora run: measured, model or zero")
      ->check(CLI::IsMember({"measured", "model", "zero"}))
      ->capture_default_str();
  cmd_->add_option("--timeout", spec_.timeout_s, "Wall-clock limit of each point, seconds")
      ->check(in_range("--timeout", whole_at_least(1)));
  cmd_->add_option("--step-time-regex", spec_.step_time_regex,
                   "As for phantora run: how to find step times in the job's output");
  cmd_->add_option("--items-per-step", spec_.items_per_step,
                   "Work per step for throughput, a product with placeholders, e.g. "
                   "'{gpus}*2*8192' tokens (default: steps)");
  cmd_->add_option("--items-name", spec_.items_name, "What the items are called, e.g. tokens")
      ->capture_default_str();
  cmd_->add_option("--port-base", spec_.port_base,
                   "{port} is this plus the point's index (rendezvous ports of points run at once)")
      ->check(in_range("--port-base", whole_from_to(1, 65535)))
      ->capture_default_str();
  cmd_->add_option("command", spec_.command,
                   "The workload, after --; placeholders {hosts} {gpus_per_host} {gpus} {gpu} "
                   "{topology} {nic} {oversubscription} {replicas} {live_gpus} {point} {port} "
                   "and a point's own");
}

int SweepCommand::run() {
  // Everything that can be wrong with the input is found before anything runs.
  std::vector<std::string> cli_command = spec_.command;
  if (!file_.empty()) read_sweep_file(file_, spec_);
  if (!cli_command.empty()) spec_.command = cli_command;
  SweepAxes axes;
  axes.hosts = parse_list<int>(hosts_, "--hosts", whole_at_least(1));
  axes.gpus_per_host = parse_list<int>(gpus_per_host_, "--gpus-per-host",
                                       whole_from_to(1, wire::kMaxDevicesPerHost - 1));
  axes.gpu = split_list(gpu_);
  axes.topology = split_list(topology_);
  axes.nic_gbytes_per_s = parse_list<double>(nic_, "--nic-gbytes-per-s", number_above(0));
  axes.oversubscription =
      parse_list<double>(oversubscription_, "--oversubscription", number_at_least(1));
  axes.represent_dp = parse_list<int>(represent_dp_, "--represent-dp", whole_at_least(1));
  for (const std::string& v : vars_) axes.vars.push_back(parse_var_axis(v));
  const bool cli_axes = !hosts_.empty() || !gpus_per_host_.empty() || !gpu_.empty() ||
                        !topology_.empty() || !nic_.empty() || !oversubscription_.empty() ||
                        !represent_dp_.empty() || !vars_.empty();
  if (cli_axes || spec_.points.empty()) spec_.points = expand_axes(axes);
  if (spec_.command.empty()) {
    throw std::invalid_argument("no workload given: phantora sweep [options] -- <command> [args]");
  }
  if (spec_.parallel < 1) throw std::invalid_argument("--parallel must be at least 1");
  if (!spec_.dp_comms.empty()) sim::DpCommRule::parse(spec_.dp_comms);  // named now if bad
  check_vars_used(spec_);
  for (const SweepPoint& p : spec_.points) {
    kernels::GpuCatalog::builtin().find(p.gpu);  // an unknown model is named now
  }
  std::vector<double> items;
  for (size_t i = 0; i < spec_.points.size(); ++i) {
    point_command(spec_, spec_.points[i], static_cast<int>(i));  // unknown placeholders
    items.push_back(items_per_step(spec_, spec_.points[i], static_cast<int>(i)));
  }

  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::filesystem::path points_dir = spec_.out / "points";
  std::filesystem::create_directories(points_dir);
  const size_t n = spec_.points.size();
  fmt::print(stderr, "phantora sweep: {} point(s), {} at a time; outputs in {}\n", n,
             spec_.parallel, spec_.out.string());

  std::optional<StopSignals> stop(std::in_place);

  std::vector<PointResult> results(n);
  std::vector<bool> done(n, false);
  struct Running {
    size_t index;
    std::chrono::steady_clock::time_point start;
  };
  std::map<pid_t, Running> running;
  size_t next = 0, finished = 0;
  while (finished < n) {
    while (!stop->caught() && running.size() < static_cast<size_t>(spec_.parallel) && next < n) {
      const SweepPoint& p = spec_.points[next];
      const std::filesystem::path dir = points_dir / p.name;
      std::filesystem::create_directories(dir);
      const pid_t pid =
          start_point(run_args(spec_, p, static_cast<int>(next), self, dir), dir / "phantora.log");
      running[pid] = {next, std::chrono::steady_clock::now()};
      fmt::print(stderr, "[{}/{}] {}: started ({} GPUs)\n", next + 1, n, p.name, p.gpus());
      ++next;
    }
    if (stop->caught() && next < n) {
      for (size_t i = next; i < n; ++i) {
        results[i].point = spec_.points[i];
        results[i].reason = "not run: the sweep was interrupted";
        done[i] = true;
        ++finished;
      }
      next = n;
      for (const auto& [pid, r] : running) kill(pid, SIGTERM);
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t i = it->second.index;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.start).count();
    running.erase(it);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    results[i] =
        read_point(spec_.points[i], points_dir / spec_.points[i].name, items[i], code, wall);
    done[i] = true;
    ++finished;
    fmt::print(stderr, "[{}/{}] {}: {}\n", i + 1, n, spec_.points[i].name, describe(results[i]));
  }
  const bool interrupted = stop->caught();
  stop.reset();  // a signal from here on ends phantora as usual

  compute_efficiency(results);
  write_csv(results, spec_.items_name, spec_.out / "summary.csv");
  const std::string table = markdown_table(results, spec_.items_name);
  std::string command_line;
  for (const auto& c : spec_.command) command_line += (command_line.empty() ? "" : " ") + c;
  sim::write_file_atomically(
      spec_.out / "summary.md",
      fmt::format("# phantora sweep\n\nWorkload: `{}`\n\n{}", command_line, table));
  // The PNGs first: the page shows them where gnuplot drew them.
  std::string why;
  const bool png = write_pngs(results, spec_.items_name, spec_.out, &why);
  sim::write_file_atomically(
      spec_.out / "index.html",
      sweep_html(results, spec_.items_name, "phantora sweep: " + command_line,
                 png ? std::optional(spec_.out) : std::nullopt));
  std::cout << table;
  fmt::print(stderr, "phantora sweep: {0}/summary.csv, {0}/summary.md, {0}/index.html{1}\n",
             spec_.out.string(),
             png ? fmt::format(", {}/{{step_time,throughput_per_gpu,scaling_efficiency}}.png",
                               spec_.out.string())
                 : "; no PNG plots: " + why);
  if (interrupted) return 130;
  for (const PointResult& r : results) {
    if (r.status != "ok") return 1;
  }
  return 0;
}

}  // namespace phantora::tools
