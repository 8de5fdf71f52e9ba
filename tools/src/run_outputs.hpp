// The end of a run, whoever started its ranks: step times from job.log, report.json,
// links.csv, the kernel database's `missing` table, the summary, the --baseline gate.
#pragma once

#include <filesystem>
#include <optional>

#include "phantora/simcore/report.hpp"
#include "phantora/simcore/simulation.hpp"
#include "run_command.hpp"
#include "run_setup.hpp"

namespace phantora::tools {

// `simulation` must no longer be served (Daemon::stop). `job_log`: the job's output to read
// step times from, if phantora saw it. Returns phantora's exit status: the outcome's, or
// kRegressionExit for a successful run slower than the baseline allows, or with a GPU whose peak
// memory grew more than --max-memory-growth allows.
int write_outputs(const RunOptions& options, const PreparedRun& run, sim::Simulation& simulation,
                  sim::RunOutcome outcome, const std::optional<std::filesystem::path>& job_log);

}  // namespace phantora::tools
