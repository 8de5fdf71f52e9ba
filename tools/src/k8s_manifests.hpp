// `phantora run --launcher k8s`: instead of running the job, write the Kubernetes objects that
// run it, for `kubectl apply -f DIR`:
//   NAME-token    Secret      the run's token (the file is written mode 0600)
//   NAME-inputs   ConfigMap   the topology file and pinned kernel times, when given
//   NAME-daemon   Service     the daemon's TCP port, for the ranks
//   NAME-daemon   Job         one pod: `phantora serve`, which ends the run when every rank has
//                             said goodbye and writes its outputs into /phantora-out
//   NAME-ranks    Service     headless: pod i is reachable as NAME-ranks-i.NAME-ranks
//   NAME-ranks    Job         Indexed, completions = parallelism = hosts: pod i runs
//                             `phantora __host --host-from JOB_COMPLETION_INDEX ... -- COMMAND`
// Each object is one JSON file (JSON is YAML; kubectl reads either), named so that a directory
// apply creates the Secret first.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "host_environment.hpp"
#include "run_command.hpp"

namespace phantora::tools {

struct K8sSpec {
  std::string name = "phantora";  // prefix of every object's name
  std::optional<std::string> k8s_namespace;
  std::string image;
  std::string phantora;  // phantora's path inside the image
  int port = kDefaultDaemonPort;
  std::string token;
  JobShape shape;
  std::vector<std::string> command;
  // `phantora serve`'s options for the simulation (--gpu, --topology, --cpu-time, ...).
  std::vector<std::string> serve_args;
  // Files for the ConfigMap (key -> contents), mounted at kInputsDir.
  std::map<std::string, std::string> inputs;
  std::optional<std::string> out_claim;  // PersistentVolumeClaim for /phantora-out
};

inline constexpr const char* kInputsDir = "/etc/phantora/inputs";
inline constexpr const char* kTokenDir = "/var/run/phantora";
inline constexpr const char* kDaemonOutDir = "/phantora-out";
// How long a rank keeps trying to reach the daemon: its pod may start long before the daemon's
// (image pulls).
inline constexpr int kRankConnectTimeoutS = 600;

// Why `name` cannot prefix the objects' names (a DNS label of at most 40 characters, so that
// "NAME-ranks-<index>" stays a valid host name), or "".
std::string k8s_name_problem(const std::string& name);

// The objects, in the order they are to be applied, each with its file name.
std::vector<std::pair<std::string, nlohmann::json>> k8s_objects(const K8sSpec& spec);

// Checks the options, renders the objects for them and writes them to --k8s-out; prints the
// kubectl commands. Returns 0.
int write_k8s_manifests(const RunOptions& options);

}  // namespace phantora::tools
