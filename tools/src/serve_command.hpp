// `phantora serve`: the simulator alone, listening on TCP for ranks that something else starts
// (the pods of `--launcher k8s`'s Indexed Job, or processes started by hand with
// PHANTORA_ADDRESS and PHANTORA_TOKEN, e.g. through `phantora __host`). It ends the run by
// itself once the job has finished (job_completion.hpp), when a rank vanishes or collectives
// disagree, at --timeout, or on Ctrl-C / SIGTERM, and writes report.json, trace.json and
// links.csv into --out. Without --token-file it makes a token and writes it to --out/token
// (mode 0600) for the ranks.
#pragma once

#include "run_command.hpp"

namespace phantora::tools {

// `options.listen` unset: 0.0.0.0:kDefaultDaemonPort. Returns 0 when every rank said goodbye,
// 1 when the simulator stopped the job, 124 at --timeout, 130 when interrupted.
int serve_command(const RunOptions& options);

}  // namespace phantora::tools
