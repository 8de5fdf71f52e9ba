// What every process of a simulated host finds in its environment, whichever launcher started
// it: the shim preloaded, stand-ins for the driver libraries first on the library path, the
// Python start-up hook first on the module path, where the simulator is and which host this is.
// The local launcher adds it to each host's command; `phantora __host` (what srun and the
// Kubernetes pods start) adds it to its own environment and becomes the command.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace phantora::tools {

// Where the ranks find the daemon: exactly one of the two.
struct DaemonContact {
  std::filesystem::path socket;  // PHANTORA_SOCKET: a Unix socket on this machine
  std::string address;           // PHANTORA_ADDRESS: HOST:PORT over TCP
};

// What is the same for every host of the run.
struct JobShape {
  int hosts = 1;
  int gpus_per_host = 1;
  std::string cpu_time = "measured";
  int64_t epoch_ns = 0;  // time.time() at simulated time zero, the same in every rank
  // MoE routing the start-up hook supplies where a framework reads per-expert token counts
  // (tools/python/phantora_moe_routing.py): 0 balanced, s > 0 a Zipf-like skew.
  double moe_imbalance = 0;
  // Measured mode: the simulated host's CPU speed relative to this machine's (CPU time / speed).
  double host_speed = 1;
  // Python ranks run as children of a per-host process that has imported torch once
  // (tools/python/phantora_warm.py, docs/scale.md "Ranks from a warmed process").
  bool warm_ranks = true;
  // What prices the run's kernels (prices_key.hpp): the start-up hook keeps torch.compile's
  // cache apart per key.
  std::string prices_key{};
};

std::map<std::string, std::string> job_environment(const std::filesystem::path& shim,
                                                   const DaemonContact& contact,
                                                   const std::string& token, int host,
                                                   const JobShape& shape);

// `phantora __host --host-from VAR --hosts N ... -- COMMAND`: the host index is the integer in
// the environment variable VAR (SLURM_PROCID, JOB_COMPLETION_INDEX); the daemon's address and
// the token come from PHANTORA_ADDRESS and PHANTORA_TOKEN (never the command line). Replaces
// the process with COMMAND; returns only on failure (127 when COMMAND cannot be started).
int run_host(const std::string& host_from, const JobShape& shape,
             const std::vector<std::string>& command);

}  // namespace phantora::tools
