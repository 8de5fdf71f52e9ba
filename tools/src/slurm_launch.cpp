#include "slurm_launch.hpp"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace phantora::tools {

std::filesystem::path check_slurm() {
  std::filesystem::path srun;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / "srun";
    if (access(candidate.c_str(), X_OK) == 0) {
      srun = candidate;
      break;
    }
  }
  if (srun.empty()) {
    throw std::invalid_argument(
        "--launcher slurm: srun is not on PATH. Run phantora on a machine with Slurm's client "
        "tools (Debian: slurm-client), inside an allocation");
  }
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') {
    throw std::invalid_argument(
        "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set). Start "
        "phantora in one, e.g. `salloc --nodes=2 phantora run --launcher slurm --hosts 2 ... -- "
        "CMD`, or from an sbatch script (docs/cluster-launch.md)");
  }
  return srun;
}

std::vector<std::string> host_argv(const std::string& phantora, const std::string& host_from,
                                   const JobShape& shape, const std::vector<std::string>& command) {
  std::vector<std::string> argv = {phantora,
                                   "__host",
                                   "--host-from",
                                   host_from,
                                   "--hosts",
                                   std::to_string(shape.hosts),
                                   "--gpus-per-host",
                                   std::to_string(shape.gpus_per_host),
                                   "--cpu-time",
                                   shape.cpu_time,
                                   "--epoch-ns",
                                   std::to_string(shape.epoch_ns),
                                   "--moe-imbalance",
                                   fmt::format("{}", shape.moe_imbalance),
                                   "--host-speed",
                                   fmt::format("{}", shape.host_speed),
                                   shape.warm_ranks ? "--warm-ranks" : "--no-warm-ranks",
                                   "--prices-key",
                                   shape.prices_key,
                                   "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> srun_argv(const std::filesystem::path& srun,
                                   const std::filesystem::path& phantora, const RunOptions& o,
                                   const JobShape& shape) {
  std::vector<std::string> argv = {srun.string(), fmt::format("--ntasks={}", shape.hosts)};
  if (o.hosts_per_node) argv.push_back(fmt::format("--ntasks-per-node={}", *o.hosts_per_node));
  // One host failing ends the step (as the local launcher's job ends); every variable reaches
  // the tasks, whatever the site's default.
  argv.insert(argv.end(), {"--kill-on-bad-exit=1", "--export=ALL", "--job-name=phantora-hosts"});
  argv.insert(argv.end(), o.srun_args.begin(), o.srun_args.end());
  const std::vector<std::string> host = host_argv(phantora, "SLURM_PROCID", shape, o.command);
  argv.insert(argv.end(), host.begin(), host.end());
  return argv;
}

}  // namespace phantora::tools
