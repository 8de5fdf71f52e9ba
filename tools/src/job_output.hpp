// The job's output, passed through and kept. Each host's command writes into pipes; a small
// process of phantora's own (`phantora __tee`, started before the job) copies it to the terminal
// as it comes, a whole line at a time so that hosts' lines never break into each other (a
// carriage return ends a piece too, so progress bars keep working), and every complete line
// into `job.log` in the run's directory, written under a temporary name and renamed at the end.
// A process of its own, so that if phantora itself dies the job's last words (a rank saying it
// lost the simulator) still reach the terminal and the log. On a terminal it can also keep a
// status line under the job's output (status_line.hpp), whose text phantora sends it through a
// pipe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace phantora::tools {

class JobOutput {
 public:
  explicit JobOutput(std::filesystem::path log_path);
  ~JobOutput();
  JobOutput(const JobOutput&) = delete;
  JobOutput& operator=(const JobOutput&) = delete;

  struct HostPipes {
    int stdout_write = -1;  // the child's fd 1
    int stderr_write = -1;  // the child's fd 2
  };
  // Pipes for one more process; call before start(). The write ends are close-on-exec here and
  // become the child's stdout / stderr through dup2; the caller closes them once the child
  // has them (the launcher does), so that the pipes end when the job's processes do.
  HostPipes add_host();
  // A status line under the job's output on the terminal (stderr); call before start().
  void add_status_line();
  // The status line's new text (one line; empty clears it). Never blocks: a text the copier
  // has not taken yet in time is dropped, the next one follows.
  void set_status(const std::string& text);
  // Starts the copying process (`self` is phantora's own executable).
  void start(const std::filesystem::path& self);
  // After the job's processes are gone: waits for the copier to drain the pipes (at most
  // `grace`, then stops it). Safe to call more than once.
  void finish(std::chrono::milliseconds grace);

  const std::filesystem::path& log_path() const { return log_path_; }

 private:
  std::filesystem::path log_path_;
  std::vector<std::pair<int, int>> read_ends_;  // (fd, 1 or 2)
  int status_read_ = -1, status_write_ = -1;
  pid_t copier_ = -1;
  bool finished_ = false;
};

// `phantora __tee LOG FD:TARGET...`: copies each FD to TARGET (1 or 2) until every one ends,
// and complete lines into LOG (via LOG.tmp, flushed as lines come, so that phantora can follow
// the job's progress in it). TARGET `status`: lines of text for a status line on stderr, kept
// under the job's output where stderr is a terminal. Returns the process exit status.
int run_tee(const std::filesystem::path& log, const std::vector<std::string>& fd_targets);

}  // namespace phantora::tools
