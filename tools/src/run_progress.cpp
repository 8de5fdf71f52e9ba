#include "run_progress.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "progress_line.hpp"

namespace phantora::tools {

bool RunProgress::wanted(const RunOptions& o) {
  const char* term = std::getenv("TERM");
  return !o.quiet && isatty(STDERR_FILENO) == 1 &&
         (term == nullptr || std::strcmp(term, "dumb") != 0);
}

RunProgress::RunProgress(bool active, const StepTimeScanner& scanner, std::filesystem::path log,
                         std::optional<int> expect_steps)
    : active_(active), scanner_(scanner), log_(std::move(log)), expect_steps_(expect_steps) {}

RunProgress::~RunProgress() {
  if (log_fd_ >= 0) ::close(log_fd_);
}

ClientObserver RunProgress::observer() {
  if (!active_) return {};
  return {[this](sim::ClientId id, const wire::Hello& hello) {
            std::lock_guard lock(mu_);
            connected_[id] = hello.global_rank >= 0;
            ever_ranked_ = ever_ranked_ || hello.global_rank >= 0;
            world_size_ = std::max(world_size_, hello.world_size);
          },
          [this](sim::ClientId id, bool) {
            std::lock_guard lock(mu_);
            connected_.erase(id);
          }};
}

void RunProgress::read_new_lines() {
  if (log_fd_ < 0) {
    // The copier writes LOG.tmp and renames it at the end; the open file stays the same.
    std::filesystem::path tmp = log_;
    tmp += ".tmp";
    log_fd_ = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
    if (log_fd_ < 0) return;
  }
  char buf[65536];
  for (ssize_t n; (n = ::read(log_fd_, buf, sizeof(buf))) > 0;) {
    partial_.append(buf, static_cast<size_t>(n));
  }
  const double now_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
    if (const auto t = scanner_.scan(std::string_view(partial_).substr(0, nl))) {
      step_seen_at_s_.push_back(now_s);
      last_step_s_ = *t;
    }
    partial_.erase(0, nl + 1);
  }
}

void RunProgress::tick(Daemon& daemon, JobOutput& output) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_tick_ < std::chrono::milliseconds(250)) return;
  last_tick_ = now;
  read_new_lines();
  // The simulated time is read on the daemon's thread and shown at the next tick.
  daemon.post([this](const sim::Simulation& simulation) {
    const int64_t ps = simulation.stats().simulated_end.as_ps();
    std::lock_guard lock(mu_);
    simulated_ps_ = ps;
  });

  ProgressFigures f;
  f.wall_s = std::chrono::duration<double>(now - start_).count();
  f.steps = static_cast<int>(step_seen_at_s_.size());
  f.last_step_s = last_step_s_;
  f.expect_steps = expect_steps_;
  if (expect_steps_) f.remaining_s = estimate_remaining(step_seen_at_s_, *expect_steps_);
  {
    std::lock_guard lock(mu_);
    f.simulated_s = static_cast<double>(simulated_ps_) * 1e-12;
    // Ranks are the processes a launcher gave a RANK; where none has one (a program started
    // directly), every connected process is one.
    int ranked = 0;
    for (const auto& [id, has_rank] : connected_) ranked += has_rank ? 1 : 0;
    f.ranks_alive = ever_ranked_ ? ranked : static_cast<int>(connected_.size());
    f.world_size = world_size_;
  }
  std::string line = format_progress(f);
  if (line != shown_) output.set_status(line);
  shown_ = std::move(line);
}

}  // namespace phantora::tools
