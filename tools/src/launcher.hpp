// Starts the job's command once per simulated host, each in its own process group, and waits
// for all of them — forwarding Ctrl-C/SIGTERM and enforcing a wall-clock timeout, so that no
// process outlives the run.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phantora::tools {

struct HostLaunch {
  int host = 0;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to (or replacing in) the inherited environment
  int stdout_fd = -1;  // where the command's stdout / stderr go; -1: phantora's own
  int stderr_fd = -1;
};

struct HostExit {
  int host = 0;
  int pid = 0;
  int exit_code = 0;  // 128 + signal number when a signal ended it
  std::string how;    // "exited with 0", "killed by signal 9 (Killed)"
};

struct LaunchResult {
  std::vector<HostExit> hosts;
  bool interrupted = false;  // Ctrl-C or SIGTERM reached phantora
  bool timed_out = false;
  std::string aborted;  // why the simulator stopped the job, if it did
};

// Polled while the job runs; a value stops the job with that reason.
using AbortCheck = std::function<std::optional<std::string>()>;

// Throws std::runtime_error if a command cannot be started (with the reason from exec).
// `stopping` is told just before phantora itself stops the job (the timeout, Ctrl-C), not
// when `abort` asked for the stop.
LaunchResult launch_and_wait(const std::vector<HostLaunch>& launches,
                             std::optional<std::chrono::seconds> timeout, const AbortCheck& abort,
                             const std::function<void()>& stopping = {});

}  // namespace phantora::tools
