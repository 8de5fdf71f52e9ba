// `phantora run --launcher slurm`: the hosts' commands start as the tasks of one `srun` across
// the Slurm allocation phantora itself runs in (salloc or sbatch). Each task is
// `phantora __host --host-from SLURM_PROCID ...` (host_environment.hpp), which sets the same
// environment the local launcher gives a host and becomes the command. The daemon's address
// and the token reach the tasks through srun's environment, never its command line.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "host_environment.hpp"
#include "run_command.hpp"

namespace phantora::tools {

// Throws std::invalid_argument saying what to do when srun is not on PATH or phantora does not
// run inside an allocation (SLURM_JOB_ID unset). Returns srun's path.
std::filesystem::path check_slurm();

// srun's argv: one task per simulated host; `phantora` is this executable (installed at the
// same path on every node).
std::vector<std::string> srun_argv(const std::filesystem::path& srun,
                                   const std::filesystem::path& phantora, const RunOptions& options,
                                   const JobShape& shape);

// The argv that makes one host of `shape` out of an environment variable holding its index:
// `phantora __host --host-from VAR --hosts N ... -- COMMAND` (also the Kubernetes pods').
std::vector<std::string> host_argv(const std::string& phantora, const std::string& host_from,
                                   const JobShape& shape, const std::vector<std::string>& command);

}  // namespace phantora::tools
