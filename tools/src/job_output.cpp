#include "job_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "status_line.hpp"

namespace phantora::tools {
namespace {

void write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the terminal is gone (a closed pipe): keep the log going
    data += w;
    n -= static_cast<size_t>(w);
  }
}

void write_all(int fd, std::string_view s) {
  write_all(fd, s.data(), s.size());
}

int terminal_columns() {
  winsize w{};
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0 ? w.ws_col : 80;
}

// What goes to the terminal from one pipe: whole lines only, so that lines of different hosts
// (and of phantora's own messages) never break into each other ("MFU 15.0%rank 1: ..."). A
// carriage return ends a piece too, so progress bars still move; a piece with neither that
// has waited kStale (a prompt, a line being written slowly) goes out as it is.
class TerminalLines {
 public:
  static constexpr std::chrono::milliseconds kStale{1000};

  // The text now ready for the terminal (maybe none).
  std::string add(std::string_view data, std::chrono::steady_clock::time_point now) {
    if (held_.empty()) since_ = now;
    held_.append(data);
    const size_t end = held_.find_last_of("\n\r");
    if (end == std::string::npos) return {};
    std::string ready = held_.substr(0, end + 1);
    held_.erase(0, end + 1);
    since_ = now;
    return ready;
  }
  std::string stale(std::chrono::steady_clock::time_point now) {
    return !held_.empty() && now - since_ >= kStale ? rest() : std::string();
  }
  std::string rest() {
    std::string all = std::move(held_);
    held_.clear();
    return all;
  }

 private:
  std::string held_;
  std::chrono::steady_clock::time_point since_{};
};

}  // namespace

JobOutput::JobOutput(std::filesystem::path log_path) : log_path_(std::move(log_path)) {}

JobOutput::~JobOutput() {
  finish(std::chrono::milliseconds(0));
}

JobOutput::HostPipes JobOutput::add_host() {
  HostPipes h;
  for (int target : {1, 2}) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed for the job's output");
    read_ends_.emplace_back(fds[0], target);
    (target == 1 ? h.stdout_write : h.stderr_write) = fds[1];
  }
  return h;
}

void JobOutput::add_status_line() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed for the status line");
  status_read_ = fds[0];
  status_write_ = fds[1];
  fcntl(status_write_, F_SETFL, O_NONBLOCK);
}

void JobOutput::set_status(const std::string& text) {
  if (status_write_ < 0 || copier_ < 0) return;
  const std::string line = text + "\n";
  // One write of less than PIPE_BUF bytes is atomic: the copier never sees half a text.
  if (line.size() <= 512) (void)!::write(status_write_, line.data(), line.size());
}

void JobOutput::start(const std::filesystem::path& self) {
  std::vector<std::string> args = {self.string(), "__tee", log_path_.string()};
  for (const auto& [fd, target] : read_ends_) args.push_back(fmt::format("{}:{}", fd, target));
  if (status_read_ >= 0) args.push_back(fmt::format("{}:status", status_read_));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed for the job's output copier");
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    for (const auto& [fd, target] : read_ends_) fcntl(fd, F_SETFD, 0);
    if (status_read_ >= 0) fcntl(status_read_, F_SETFD, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  copier_ = pid;
  for (const auto& [fd, target] : read_ends_) ::close(fd);
  read_ends_.clear();
  if (status_read_ >= 0) ::close(status_read_);
  status_read_ = -1;
}

void JobOutput::finish(std::chrono::milliseconds grace) {
  if (finished_) return;
  finished_ = true;
  for (const auto& [fd, target] : read_ends_) ::close(fd);
  // The end of the status pipe tells the copier to clear the status line.
  for (int* fd : {&status_read_, &status_write_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (copier_ < 0) return;
  // The pipes end when the last process holding them exits; one that escaped its host's process
  // group may hold them longer than the job: stop waiting after `grace`.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    int status = 0;
    if (waitpid(copier_, &status, WNOHANG) == copier_) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(copier_, SIGTERM);  // the copier writes what it has and renames the log
  waitpid(copier_, nullptr, 0);
}

int run_tee(const std::filesystem::path& log, const std::vector<std::string>& fd_targets) {
  // Ctrl-C reaches the whole foreground group; the copier stays to pass on the job's last
  // output and ends when the pipes do. SIGTERM (from phantora) ends it early.
  signal(SIGINT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  static volatile sig_atomic_t stop = 0;
  signal(SIGTERM, [](int) { stop = 1; });

  constexpr int kStatus = -1;  // the target of the status line's text
  struct Stream {
    int fd;
    int target;
    std::string partial;  // of the line for job.log
    TerminalLines terminal;
  };
  std::vector<Stream> streams;
  for (const std::string& s : fd_targets) {
    const size_t colon = s.find(':');
    if (colon == std::string::npos) return 2;
    const std::string target = s.substr(colon + 1);
    if (target != "1" && target != "2" && target != "status") return 2;
    streams.push_back(
        {std::stoi(s.substr(0, colon)), target == "status" ? kStatus : std::stoi(target), {}, {}});
  }
  // The status line is drawn on stderr, and only where that is a terminal; the job's bytes
  // clear it only where they go to a terminal too.
  StatusLine status;
  const bool status_shown = isatty(STDERR_FILENO) == 1;
  const bool to_terminal[3] = {false, isatty(STDOUT_FILENO) == 1, status_shown};
  std::filesystem::path tmp = log;
  tmp += ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "w");
  auto take_line = [out](const std::string& line) {
    if (out == nullptr) return;
    std::fwrite(line.data(), 1, line.size(), out);
    std::fputc('\n', out);
  };
  // Job output for the terminal, kept below the status line when there is one.
  auto show = [&](const Stream& s, const std::string& text) {
    if (text.empty()) return;
    const bool terminal = status_shown && to_terminal[s.target];
    if (terminal) write_all(STDERR_FILENO, status.before_output());
    write_all(s.target, text);
    if (terminal) write_all(STDERR_FILENO, status.after_output(text, terminal_columns()));
  };
  char buf[65536];
  while (stop == 0) {
    std::vector<pollfd> fds;
    std::vector<Stream*> owners;
    for (Stream& s : streams) {
      if (s.fd < 0) continue;
      fds.push_back(pollfd{s.fd, POLLIN, 0});
      owners.push_back(&s);
    }
    if (fds.empty()) break;
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < fds.size(); ++i) {
      Stream& s = *owners[i];
      if (fds[i].revents == 0) {
        if (s.target != kStatus) show(s, s.terminal.stale(now));
        continue;
      }
      const ssize_t n = ::read(s.fd, buf, sizeof(buf));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        if (s.target != kStatus) show(s, s.terminal.rest());
        ::close(s.fd);
        s.fd = -1;
        // phantora is done with the line: erased, and not drawn again under the job's last
        // output.
        if (s.target == kStatus && status_shown) {
          write_all(STDERR_FILENO, status.update("", terminal_columns()));
        }
        continue;
      }
      s.partial.append(buf, static_cast<size_t>(n));
      if (s.target == kStatus) {
        // Only the latest complete text matters.
        std::string text;
        bool complete = false;
        for (size_t nl; (nl = s.partial.find('\n')) != std::string::npos; complete = true) {
          text = s.partial.substr(0, nl);
          s.partial.erase(0, nl + 1);
        }
        if (complete && status_shown) {
          write_all(STDERR_FILENO, status.update(std::move(text), terminal_columns()));
        }
        continue;
      }
      show(s, s.terminal.add(std::string_view(buf, static_cast<size_t>(n)), now));
      for (size_t nl; (nl = s.partial.find('\n')) != std::string::npos;) {
        take_line(s.partial.substr(0, nl));
        s.partial.erase(0, nl + 1);
      }
    }
    if (out != nullptr) std::fflush(out);  // phantora follows the steps in the log as they come
  }
  for (Stream& s : streams) {
    if (s.target != kStatus) show(s, s.terminal.rest());
  }
  if (status_shown) write_all(STDERR_FILENO, status.finish());
  for (Stream& s : streams) {
    if (s.target != kStatus && !s.partial.empty()) take_line(s.partial);
  }
  if (out != nullptr) {
    std::fclose(out);
    std::error_code ec;
    std::filesystem::rename(tmp, log, ec);
  }
  return 0;
}

}  // namespace phantora::tools
