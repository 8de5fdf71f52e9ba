#include "launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "stop_signals.hpp"

extern char** environ;

namespace phantora::tools {
namespace {

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    if (!extra.contains(key)) env.push_back(entry);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

// Forks and execs; a pipe with O_CLOEXEC carries an exec failure back to the parent.
pid_t spawn(const HostLaunch& l) {
  std::vector<std::string> env = merged_environment(l.env);
  std::vector<char*> argv;
  for (const auto& a : l.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    if (l.stdout_fd >= 0) dup2(l.stdout_fd, STDOUT_FILENO);
    if (l.stderr_fd >= 0) dup2(l.stderr_fd, STDERR_FILENO);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    (void)!write(pipefd[1], &err, sizeof(err));
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so that the group exists before we signal it
  close(pipefd[1]);
  int err = 0;
  const ssize_t n = read(pipefd[0], &err, sizeof(err));
  close(pipefd[0]);
  if (n == sizeof(err)) {
    waitpid(pid, nullptr, 0);
    throw std::runtime_error(fmt::format("cannot run '{}': {}", l.argv[0], std::strerror(err)));
  }
  return pid;
}

std::string describe(int status, int* code) {
  if (WIFEXITED(status)) {
    *code = WEXITSTATUS(status);
    return fmt::format("exited with {}", *code);
  }
  const int sig = WTERMSIG(status);
  *code = 128 + sig;
  return fmt::format("killed by signal {} ({})", sig, strsignal(sig));
}

}  // namespace

LaunchResult launch_and_wait(const std::vector<HostLaunch>& launches,
                             std::optional<std::chrono::seconds> timeout, const AbortCheck& abort,
                             const std::function<void()>& stopping) {
  const StopSignals stop;
  LaunchResult result;
  std::map<pid_t, int> running;  // pid -> host
  auto kill_all = [&](int sig) {
    for (const auto& [pid, host] : running) kill(-pid, sig);
  };
  // The children have their own copies of the output pipes' write ends now; ours go, so that
  // a pipe ends when the processes writing to it do.
  auto close_output_fds = [&launches] {
    for (const HostLaunch& l : launches) {
      if (l.stdout_fd >= 0) close(l.stdout_fd);
      if (l.stderr_fd >= 0) close(l.stderr_fd);
    }
  };
  try {
    for (const HostLaunch& l : launches) running[spawn(l)] = l.host;
    close_output_fds();
  } catch (...) {
    close_output_fds();
    kill_all(SIGKILL);
    for (const auto& [pid, host] : running) waitpid(pid, nullptr, 0);
    throw;
  }

  const auto start = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> term_sent;
  while (!running.empty()) {
    // Only the hosts' processes are reaped here: phantora has other children (the job-output
    // copier), whose ends are theirs to collect.
    int status = 0;
    pid_t pid = 0;
    for (const auto& [p, host] : running) {
      if (waitpid(p, &status, WNOHANG) == p) {
        pid = p;
        break;
      }
    }
    if (pid > 0) {
      auto it = running.find(pid);
      HostExit e{it->second, pid, 0, ""};
      e.how = describe(status, &e.exit_code);
      result.hosts.push_back(e);
      // Whatever the host's command left behind in its group (torchrun's workers) goes too.
      kill(-pid, SIGKILL);
      running.erase(it);
      continue;
    }
    if (stop.caught() && !term_sent) {
      result.interrupted = true;
      if (stopping) stopping();
      kill_all(SIGTERM);
      term_sent = std::chrono::steady_clock::now();
    }
    if (!term_sent && abort) {
      if (auto why = abort()) {
        result.aborted = *why;
        kill_all(SIGTERM);
        term_sent = std::chrono::steady_clock::now();
      }
    }
    if (timeout && !term_sent && std::chrono::steady_clock::now() - start > *timeout) {
      result.timed_out = true;
      if (stopping) stopping();
      kill_all(SIGTERM);
      term_sent = std::chrono::steady_clock::now();
    }
    // A job that ignores SIGTERM gets SIGKILL after a grace period.
    if (term_sent && std::chrono::steady_clock::now() - *term_sent > std::chrono::seconds(5)) {
      kill_all(SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return result;
}

}  // namespace phantora::tools
