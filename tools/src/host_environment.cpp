#include "host_environment.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "shim_location.hpp"

namespace phantora::tools {

std::map<std::string, std::string> job_environment(const std::filesystem::path& shim,
                                                   const DaemonContact& contact,
                                                   const std::string& token, int host,
                                                   const JobShape& shape) {
  auto prepend = [](const std::string& first, const char* var) {
    const char* rest = std::getenv(var);
    return first + (rest != nullptr && *rest != '\0' ? ":" + std::string(rest) : "");
  };
  return {
      // Stand-ins for libcuda.so.1 and libnvidia-ml.so.1, built next to the shim
      // (intercept/CMakeLists.txt), are found first by programs that open them by name.
      {"LD_LIBRARY_PATH", prepend((shim.parent_path() / "standin").string(), "LD_LIBRARY_PATH")},
      {"LD_PRELOAD", prepend(shim.string(), "LD_PRELOAD")},
      // ... and an nvidia-smi stand-in, by programs that run it.
      {"PATH", prepend((shim.parent_path() / "standin" / "bin").string(), "PATH")},
      {"PYTHONPATH", prepend(find_python_hook().string(), "PYTHONPATH")},
      // One of the two is empty, which the shim reads as unset.
      {"PHANTORA_SOCKET", contact.socket.string()},
      {"PHANTORA_ADDRESS", contact.address},
      {"PHANTORA_TOKEN", token},
      {"PHANTORA_HOST", std::to_string(host)},
      {"PHANTORA_HOSTS", std::to_string(shape.hosts)},
      {"PHANTORA_GPUS_PER_HOST", std::to_string(shape.gpus_per_host)},
      {"PHANTORA_CPU_TIME", shape.cpu_time},
      {"PHANTORA_EPOCH_NS", std::to_string(shape.epoch_ns)},
      {"PHANTORA_MOE_IMBALANCE", fmt::format("{}", shape.moe_imbalance)},
      {"PHANTORA_HOST_SPEED", fmt::format("{}", shape.host_speed)},
      // Read by the start-up hook (tools/python/phantora_warm.py).
      {"PHANTORA_WARM_RANKS", shape.warm_ranks ? "1" : "0"},
      // Read by the start-up hook: torch.compile's cache per key (tools/python/sitecustomize.py).
      {"PHANTORA_PRICES_KEY", shape.prices_key},
  };
}

int run_host(const std::string& host_from, const JobShape& shape,
             const std::vector<std::string>& command) {
  auto need = [](const std::string& var, const char* what) {
    const char* v = std::getenv(var.c_str());
    if (v == nullptr || *v == '\0')
      throw std::invalid_argument(fmt::format("{} is not set ({})", var, what));
    return std::string(v);
  };
  const std::string index = need(host_from, "the index of this host");
  char* end = nullptr;
  const long host = std::strtol(index.c_str(), &end, 10);
  if (*end != '\0' || host < 0 || host >= shape.hosts) {
    throw std::invalid_argument(
        fmt::format("{}={} is not a host index below --hosts {}", host_from, index, shape.hosts));
  }
  if (command.empty()) throw std::invalid_argument("no command given after --");
  const DaemonContact contact{{}, need("PHANTORA_ADDRESS", "the simulator's HOST:PORT")};
  const std::string token = need("PHANTORA_TOKEN", "the run's token");

  auto env = job_environment(find_shim(), contact, token, static_cast<int>(host), shape);
  // Python buffers a pipe's output in blocks; line by line keeps the log in step (the user's
  // own setting wins).
  if (std::getenv("PYTHONUNBUFFERED") == nullptr) env["PYTHONUNBUFFERED"] = "1";
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  fmt::print(stderr, "phantora: host {}: cannot run '{}': {}\n", host, command[0],
             std::strerror(errno));
  return 127;
}

}  // namespace phantora::tools
