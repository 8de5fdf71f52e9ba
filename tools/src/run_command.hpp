// `phantora run`: simulate a cluster and run the job's command on it: here (the local
// launcher), across a Slurm allocation, or — for Kubernetes — write the manifests that do.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace phantora::tools {

inline constexpr double kDefaultLaunchLatencyUs = 4.0;

struct RunOptions {
  // Unset: from --topology if given, else 1 host x 8 H100.
  std::optional<int> hosts;
  std::optional<int> gpus_per_host;
  std::optional<std::string> gpu;
  // A topology file, or the name of a preset (netmodel/data: dgx-a100, dgx-h100, ...).
  std::optional<std::string> topology;
  // Adjustments to the topology (file, preset or the default for the GPU model).
  std::optional<double> nic_gbytes_per_s;  // per NIC, per direction
  std::optional<double> oversubscription;  // leaf-to-spine, >= 1
  // The job is one of this many data-parallel slices of the cluster (simcore/replicas.hpp);
  // dp_comms says which of its communicators are data-parallel ("all", "size:K[,K...]").
  int represent_dp = 1;
  std::string dp_comms = "all";
  std::filesystem::path out = "phantora-out";
  std::string cpu_time = "measured";
  double moe_imbalance = 0;  // JobShape::moe_imbalance
  double host_speed = 1;     // JobShape::host_speed
  bool warm_ranks = true;    // JobShape::warm_ranks
  std::optional<std::filesystem::path> kernel_times;
  std::optional<std::filesystem::path> kernel_db;
  // Unset: the kernel database's measured launch round trip for the GPU, else
  // kDefaultLaunchLatencyUs.
  std::optional<double> launch_latency_us;
  double call_cost_us = 2.0;
  std::optional<int> timeout_s;
  int collective_timeout_s = 300;
  bool quiet = false;
  // Step times from the job's output (step_times.hpp); empty: the built-in patterns.
  std::string step_time_regex;
  // Regression gate: compare with this report and fail past max_slowdown (a fraction).
  std::optional<std::filesystem::path> baseline;
  double max_slowdown = 0.02;
  // Memory gate beside it: fail when a GPU's peak memory grew by more (a fraction); unset: off.
  std::optional<double> max_memory_growth;
  // How many step lines the job will print, for the progress line's estimate of time left
  // (run_progress.hpp); unset: no estimate.
  std::optional<int> expect_steps;
  std::vector<std::string> command;

  // How the hosts' commands are started (docs/cluster-launch.md): "local" (processes here),
  // "slurm" (one srun across the allocation phantora runs in) or "k8s" (write manifests).
  std::string launcher = "local";
  // TCP address the daemon listens on (HOST:PORT, port 0: any). Unset: a private Unix socket
  // for the local launcher, 0.0.0.0:0 for slurm.
  std::optional<std::string> listen;
  // The host name the ranks reach the daemon by, when --listen's host is a wildcard (slurm:
  // this machine's name; local: loopback).
  std::optional<std::string> advertise;
  // A file holding the run's token (16 to 32 printable characters); unset: a random one.
  std::optional<std::filesystem::path> token_file;
  // slurm: simulated hosts per node (srun --ntasks-per-node), and more srun options.
  std::optional<int> hosts_per_node;
  std::vector<std::string> srun_args;
  // k8s (k8s_manifests.hpp).
  std::optional<std::string> k8s_image;
  std::optional<std::filesystem::path> k8s_out;
  std::string k8s_name = "phantora";
  std::optional<std::string> k8s_namespace;
  int k8s_port = 0;                          // 0: kDefaultDaemonPort
  std::optional<std::string> k8s_phantora;   // phantora's path in the image; default: this one's
  std::optional<std::string> k8s_out_claim;  // PersistentVolumeClaim for the daemon's --out
};

// The port a daemon listens on when none is chosen and it must be known in advance (k8s).
inline constexpr int kDefaultDaemonPort = 29620;

// Returns the process exit status for phantora: the job's (the first failing host's code), or
// kRegressionExit when the job succeeded but is slower than --baseline allows.
int run_command(const RunOptions& options);
inline constexpr int kRegressionExit = 3;

}  // namespace phantora::tools
