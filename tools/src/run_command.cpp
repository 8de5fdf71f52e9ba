#include "run_command.hpp"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "job_output.hpp"
#include "launcher.hpp"
#include "phantora/kernels/cost_model.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/netmodel/topology.hpp"
#include "phantora/simcore/kernels_cost_provider.hpp"
#include "phantora/simcore/report.hpp"
#include "phantora/simcore/server.hpp"
#include "phantora/simcore/simulation.hpp"
#include "report_compare.hpp"
#include "shim_location.hpp"
#include "step_times.hpp"

namespace phantora::tools {
namespace {

wire::CpuTimeMode parse_cpu_time(const std::string& s) {
  if (s == "measured") return wire::CpuTimeMode::kMeasured;
  if (s == "model") return wire::CpuTimeMode::kModel;
  if (s == "zero") return wire::CpuTimeMode::kZero;
  throw std::invalid_argument(
      fmt::format("--cpu-time must be measured, model or zero (got '{}')", s));
}

std::string random_token() {
  unsigned char raw[16];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(raw), sizeof(raw))) {
    throw std::runtime_error("cannot read /dev/urandom for the run token");
  }
  std::string token;
  for (unsigned char c : raw) token += fmt::format("{:02x}", c);
  return token;  // 32 characters: the whole wire::Hello::token field
}

// A private directory (mode 0700, from mkdtemp) for the run's socket; removed at the end.
class RunDirectory {
 public:
  RunDirectory() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "phantora-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("cannot create a private run directory");
    path_ = tmpl;
  }
  ~RunDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The cluster: from the topology file where one is given (flags may repeat its figures but not
// contradict them), else from the flags on a preset that matches the GPU model.
struct Cluster {
  int hosts = 1;
  int gpus_per_host = 8;
  std::string gpu = "h100";
  std::shared_ptr<const net::Topology> topology;
};

std::shared_ptr<const net::Topology> load_topology(const std::string& name_or_file, int hosts) {
  if (std::filesystem::exists(name_or_file)) {
    return std::make_shared<const net::Topology>(net::Topology::from_file(name_or_file));
  }
  const std::vector<std::string> presets = net::Topology::preset_names();
  if (std::find(presets.begin(), presets.end(), name_or_file) == presets.end()) {
    throw std::invalid_argument(fmt::format("--topology {}: no such file, and not a preset ({})",
                                            name_or_file, fmt::join(presets, ", ")));
  }
  return std::make_shared<const net::Topology>(net::Topology::preset(name_or_file, hosts));
}

// With --represent-dp N the topology describes the whole simulated cluster (N x the live hosts);
// `hosts` stays the live count, the hosts the job's command runs on.
Cluster resolve_cluster(const RunOptions& o) {
  Cluster c;
  const int replicas = o.represent_dp;
  if (replicas < 1) throw std::invalid_argument("--represent-dp must be at least 1");
  const bool is_file = o.topology && std::filesystem::exists(*o.topology);
  if (o.topology && is_file) {
    auto topo = load_topology(*o.topology, 0);
    auto agree = [&](const char* flag, auto given, auto in_file) {
      if (given && *given != in_file) {
        throw std::invalid_argument(fmt::format("{} {} contradicts the topology file {} ({})", flag,
                                                *given, *o.topology, in_file));
      }
    };
    if (topo->hosts() % replicas != 0) {
      throw std::invalid_argument(
          fmt::format("--represent-dp {}: the topology file {} has {} hosts, not a multiple of it",
                      replicas, o.topology->c_str(), topo->hosts()));
    }
    agree(replicas > 1 ? "--hosts (live hosts: the file's hosts / --represent-dp)" : "--hosts",
          o.hosts, topo->hosts() / replicas);
    agree("--gpus-per-host", o.gpus_per_host, topo->gpus_per_host());
    c.hosts = topo->hosts() / replicas;
    c.gpus_per_host = topo->gpus_per_host();
    c.gpu = o.gpu.value_or(topo->gpu_model());
    c.topology = std::move(topo);
  } else {
    c.hosts = o.hosts.value_or(1);
    c.gpus_per_host = o.gpus_per_host.value_or(8);
    c.gpu = o.gpu.value_or("h100");
    if (o.topology) {
      // A preset: its fabric with the flags' counts.
      net::TopologySpec spec = load_topology(*o.topology, c.hosts * replicas)->spec();
      if (o.gpus_per_host && *o.gpus_per_host != spec.gpus_per_host) {
        spec.gpus_per_host = *o.gpus_per_host;
        spec.rails = net::TopologySpec::default_rails(spec.gpus_per_host, spec.nics_per_host);
      }
      spec.gpu_model = c.gpu;
      c.topology = std::make_shared<const net::Topology>(std::move(spec));
    }
  }
  if (o.nic_gbytes_per_s || o.oversubscription) {
    net::TopologySpec spec =
        c.topology ? c.topology->spec()
                   : net::Topology::for_cluster(c.hosts * replicas, c.gpus_per_host, c.gpu).spec();
    if (o.nic_gbytes_per_s) {
      if (!(*o.nic_gbytes_per_s > 0))
        throw std::invalid_argument("--nic-gbytes-per-s must be positive");
      spec.nic_bandwidth = Bandwidth::gbytes_per_s(*o.nic_gbytes_per_s);
    }
    if (o.oversubscription) {
      if (!(*o.oversubscription >= 1))
        throw std::invalid_argument("--oversubscription must be at least 1");
      spec.oversubscription = *o.oversubscription;
    }
    c.topology = std::make_shared<const net::Topology>(std::move(spec));
  }
  return c;
}

}  // namespace

// What every process of host `h` finds in its environment: the shim preloaded, stand-ins for
// the driver libraries first on the library path, the Python start-up hook first on the
// module path, and where the simulator is.
std::map<std::string, std::string> job_environment(const std::filesystem::path& shim,
                                                   const std::filesystem::path& socket,
                                                   const std::string& token, int h,
                                                   const Cluster& cluster,
                                                   const std::string& cpu_time, int64_t epoch_ns) {
  auto prepend = [](const std::string& first, const char* var) {
    const char* rest = std::getenv(var);
    return first + (rest != nullptr && *rest != '\0' ? ":" + std::string(rest) : "");
  };
  return {
      // Stand-ins for libcuda.so.1 and libnvidia-ml.so.1, built next to the shim
      // (intercept/CMakeLists.txt), are found first by programs that open them by name.
      {"LD_LIBRARY_PATH", prepend((shim.parent_path() / "standin").string(), "LD_LIBRARY_PATH")},
      {"LD_PRELOAD", prepend(shim.string(), "LD_PRELOAD")},
      {"PYTHONPATH", prepend(find_python_hook().string(), "PYTHONPATH")},
      {"PHANTORA_SOCKET", socket.string()},
      {"PHANTORA_TOKEN", token},
      {"PHANTORA_HOST", std::to_string(h)},
      {"PHANTORA_HOSTS", std::to_string(cluster.hosts)},
      {"PHANTORA_GPUS_PER_HOST", std::to_string(cluster.gpus_per_host)},
      {"PHANTORA_CPU_TIME", cpu_time},
      {"PHANTORA_EPOCH_NS", std::to_string(epoch_ns)},
      // PyTorch: prefer flash attention over cuDNN's (cuDNN cannot run here; docs/pytorch.md).
      {"TORCH_CUDNN_SDPA_DEPRIORITIZED", "1"},
  };
}

int run_command(const RunOptions& o) {
  // Everything that can be wrong with the input is checked before anything starts.
  if (o.command.empty())
    throw std::invalid_argument("no command given: phantora run [options] -- <command> [args]");
  const Cluster cluster = resolve_cluster(o);
  const sim::DpCommRule dp_comms = sim::DpCommRule::parse(o.dp_comms);
  if (cluster.hosts < 1) throw std::invalid_argument("--hosts must be at least 1");
  if (cluster.gpus_per_host < 1 || cluster.gpus_per_host > wire::kMaxDevicesPerHost - 1) {
    throw std::invalid_argument(
        fmt::format("--gpus-per-host must be between 1 and {}", wire::kMaxDevicesPerHost - 1));
  }
  if (o.launch_latency_us < 0 || o.call_cost_us < 0) {
    throw std::invalid_argument("--launch-latency-us and --call-cost-us must not be negative");
  }
  const kernels::GpuPreset& gpu = kernels::GpuCatalog::builtin().find(cluster.gpu);
  const StepTimeScanner scanner(o.step_time_regex);
  std::optional<nlohmann::json> baseline;
  if (o.baseline) baseline = load_report(*o.baseline);
  kernels::KernelTimes pinned;
  if (o.kernel_times) pinned = kernels::KernelTimes::from_csv(*o.kernel_times);
  const std::filesystem::path shim = find_shim();
  kernels::CostModel cost_model(kernels::CostParams::builtin(), std::move(pinned));
  if (o.kernel_db) cost_model.set_database(kernels::load_kernel_db(*o.kernel_db, gpu.key));
  // Only now that the input is known to be good does anything get written.
  std::filesystem::create_directories(o.out);

  sim::SimulationConfig config;
  config.hosts = cluster.hosts;
  config.gpus_per_host = cluster.gpus_per_host;
  config.gpu_name = gpu.key;
  config.device = kernels::to_device_spec(gpu);
  config.cpu_time = parse_cpu_time(o.cpu_time);
  config.per_call_cost = SimTime::us(o.call_cost_us);
  config.launch_latency = SimTime::us(o.launch_latency_us);
  config.token = random_token();
  config.trace_path = o.out / "trace.json";
  config.topology = cluster.topology;
  config.collective_timeout = std::chrono::seconds(o.collective_timeout_s);
  config.replicas = o.represent_dp;
  config.dp_comms = dp_comms;

  sim::KernelsCostProvider costs(std::move(cost_model), gpu);
  sim::Simulation simulation(config, costs);
  RunDirectory run_dir;
  const std::filesystem::path socket = run_dir.path() / "daemon.sock";
  boost::asio::io_context io;
  sim::Server server(io, socket, simulation);
  std::thread io_thread([&io] { io.run(); });

  // One epoch for time.time() in every rank (the start-up hook adds the simulated clock).
  const int64_t epoch_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  // The job's output goes through phantora: to the terminal as it comes, and into job.log,
  // where the step times are read from.
  JobOutput job_output(o.out / "job.log");
  std::vector<HostLaunch> launches;
  for (int h = 0; h < cluster.hosts; ++h) {
    HostLaunch l;
    l.host = h;
    l.argv = o.command;
    l.env = job_environment(shim, socket, config.token, h, cluster, o.cpu_time, epoch_ns);
    // Python buffers a pipe's output in blocks; line by line keeps the log in step with the
    // terminal (the user's own setting wins).
    if (std::getenv("PYTHONUNBUFFERED") == nullptr) l.env["PYTHONUNBUFFERED"] = "1";
    const JobOutput::HostPipes pipes = job_output.add_host();
    l.stdout_fd = pipes.stdout_write;
    l.stderr_fd = pipes.stderr_write;
    launches.push_back(std::move(l));
  }
  job_output.start(std::filesystem::read_symlink("/proc/self/exe"));
  if (!o.quiet) {
    if (config.replicas > 1) {
      fmt::print(stderr,
                 "phantora: simulating {} host(s) x {} {}: {} live, the rest {} data-parallel "
                 "replica(s) of them (dp comms: {}); running: {}\n",
                 config.represented_hosts(), cluster.gpus_per_host, gpu.device_name(),
                 cluster.hosts, config.replicas - 1, config.dp_comms.describe(),
                 fmt::join(o.command, " "));
    } else {
      fmt::print(stderr, "phantora: simulating {} host(s) x {} {} ; running: {}\n", cluster.hosts,
                 cluster.gpus_per_host, gpu.device_name(), fmt::join(o.command, " "));
    }
  }

  const auto wall_start = std::chrono::steady_clock::now();
  LaunchResult launched;
  std::string launch_error;
  // The daemon thread reports a job that cannot go on (collectives that disagree); the
  // launcher polls for it and stops the job.
  std::mutex failure_mu;
  std::optional<std::string> failure;
  boost::asio::post(io, [&] {
    server.set_failure_handler([&](const std::string& why) {
      std::lock_guard lock(failure_mu);
      failure = why;
    });
  });
  try {
    launched = launch_and_wait(
        launches, o.timeout_s ? std::optional(std::chrono::seconds(*o.timeout_s)) : std::nullopt,
        [&]() -> std::optional<std::string> {
          std::lock_guard lock(failure_mu);
          return failure;
        });
  } catch (const std::exception& e) {
    launch_error = e.what();
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  job_output.finish(std::chrono::milliseconds(2000));

  // The job's processes are gone; their connections close. Give stragglers (a process that
  // escaped its host's process group) a moment, then end the daemon.
  boost::asio::post(io, [&server, &io] {
    server.shutdown(std::chrono::milliseconds(2000), [&io] { io.stop(); });
  });
  io_thread.join();

  sim::RunOutcome outcome;
  outcome.wall_seconds = wall;
  outcome.command = o.command;
  if (!launch_error.empty()) {
    outcome.status = "failed";
    outcome.exit_code = 127;
    outcome.message = launch_error;
  }
  for (const HostExit& e : launched.hosts) {
    if (e.exit_code != 0 && outcome.exit_code == 0) {
      outcome.status = "failed";
      outcome.exit_code = e.exit_code;
      outcome.message = fmt::format("host {} (pid {}) {}", e.host, e.pid, e.how);
    }
  }
  if (launched.timed_out) {
    outcome.status = "failed";
    outcome.exit_code = 124;
    outcome.message = fmt::format("the run exceeded --timeout {} s and was stopped", *o.timeout_s);
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

  std::vector<double> step_times;
  {
    std::ifstream log(job_output.log_path());
    for (std::string line; std::getline(log, line);) {
      if (const auto t = scanner.scan(line)) step_times.push_back(*t);
    }
  }
  if (const auto steps = summarize_steps(step_times)) {
    outcome.steps = {{"count", steps->times_s.size()},
                     {"times_s", steps->times_s},
                     {"skipped_first", steps->skipped_first},
                     {"median_s", steps->median_s},
                     {"mean_s", steps->mean_s},
                     {"pattern", scanner.description()}};
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
  const nlohmann::json report = sim::make_report(config, stats, outcome);
  sim::write_file_atomically(o.out / "report.json", report.dump(2) + "\n");
  if (o.kernel_db) kernels::record_missing(*o.kernel_db, costs.model().missing());
  {
    std::ostringstream links;
    simulation.network().write_links_csv(links);
    sim::write_file_atomically(o.out / "links.csv", links.str());
  }
  if (!o.quiet) {
    std::cerr << sim::summary_table(report);
    fmt::print(stderr, "  outputs: {0}/report.json, {0}/trace.json, {0}/links.csv, {0}/job.log\n",
               o.out.string());
  }
  if (baseline) {
    const ReportComparison cmp = compare_reports(*baseline, report);
    const double change = cmp.headline.relative();
    const bool slower = change > o.max_slowdown;
    fmt::print(stderr, "phantora: against baseline {}: {} {:+.2f}% (limit +{:.2f}%){}\n",
               o.baseline->string(), cmp.headline.name, 100 * change, 100 * o.max_slowdown,
               slower ? ": REGRESSION" : ": ok");
    if (slower || !o.quiet) std::cerr << format_comparison(cmp, "baseline", "this run");
    if (slower && outcome.exit_code == 0) return kRegressionExit;
  }
  return outcome.exit_code;
}

}  // namespace phantora::tools
