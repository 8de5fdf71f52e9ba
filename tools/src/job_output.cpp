#include "job_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

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

// What goes to the terminal from one pipe: whole lines only, so that lines of different hosts
// (and of phantora's own messages) never break into each other ("MFU 15.0%rank 1: ..."). A
// carriage return ends a piece too, so progress bars still move; a piece with neither that
// has waited kStale (a prompt, a line being written slowly) goes out as it is.
class TerminalLines {
 public:
  static constexpr std::chrono::milliseconds kStale{1000};

  void add(int target, std::string_view data, std::chrono::steady_clock::time_point now) {
    if (held_.empty()) since_ = now;
    held_.append(data);
    const size_t end = held_.find_last_of("\n\r");
    if (end == std::string::npos) return;
    write_all(target, held_.data(), end + 1);
    held_.erase(0, end + 1);
    since_ = now;
  }
  void flush_if_stale(int target, std::chrono::steady_clock::time_point now) {
    if (!held_.empty() && now - since_ >= kStale) flush(target);
  }
  void flush(int target) {
    write_all(target, held_.data(), held_.size());
    held_.clear();
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

void JobOutput::start(const std::filesystem::path& self) {
  std::vector<std::string> args = {self.string(), "__tee", log_path_.string()};
  for (const auto& [fd, target] : read_ends_) args.push_back(fmt::format("{}:{}", fd, target));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed for the job's output copier");
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    for (const auto& [fd, target] : read_ends_) fcntl(fd, F_SETFD, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  copier_ = pid;
  for (const auto& [fd, target] : read_ends_) ::close(fd);
  read_ends_.clear();
}

void JobOutput::finish(std::chrono::milliseconds grace) {
  if (finished_) return;
  finished_ = true;
  for (const auto& [fd, target] : read_ends_) ::close(fd);
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
    streams.push_back({std::stoi(s.substr(0, colon)), std::stoi(s.substr(colon + 1)), {}, {}});
  }
  std::filesystem::path tmp = log;
  tmp += ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "w");
  auto take_line = [out](const std::string& line) {
    if (out == nullptr) return;
    std::fwrite(line.data(), 1, line.size(), out);
    std::fputc('\n', out);
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
        s.terminal.flush_if_stale(s.target, now);
        continue;
      }
      const ssize_t n = ::read(s.fd, buf, sizeof(buf));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        s.terminal.flush(s.target);
        ::close(s.fd);
        s.fd = -1;
        continue;
      }
      s.terminal.add(s.target, std::string_view(buf, static_cast<size_t>(n)), now);
      s.partial.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = s.partial.find('\n')) != std::string::npos;) {
        take_line(s.partial.substr(0, nl));
        s.partial.erase(0, nl + 1);
      }
    }
  }
  for (Stream& s : streams) {
    s.terminal.flush(s.target);
    if (!s.partial.empty()) take_line(s.partial);
  }
  if (out != nullptr) {
    std::fclose(out);
    std::error_code ec;
    std::filesystem::rename(tmp, log, ec);
  }
  return 0;
}

}  // namespace phantora::tools
