#include "k8s_manifests.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "phantora/simcore/report.hpp"
#include "prices_key.hpp"
#include "run_setup.hpp"
#include "run_token.hpp"
#include "slurm_launch.hpp"

namespace phantora::tools {
namespace {

using nlohmann::json;

json labels(const K8sSpec& s, const char* component) {
  return {{"app.kubernetes.io/name", "phantora"},
          {"app.kubernetes.io/instance", s.name},
          {"app.kubernetes.io/component", component}};
}

json metadata(const K8sSpec& s, const std::string& name, const char* component) {
  json m = {{"name", name}, {"labels", labels(s, component)}};
  if (s.k8s_namespace) m["namespace"] = *s.k8s_namespace;
  return m;
}

std::string daemon_name(const K8sSpec& s) {
  return s.name + "-daemon";
}
std::string ranks_name(const K8sSpec& s) {
  return s.name + "-ranks";
}
std::string token_name(const K8sSpec& s) {
  return s.name + "-token";
}
std::string inputs_name(const K8sSpec& s) {
  return s.name + "-inputs";
}

json daemon_job(const K8sSpec& s) {
  std::vector<std::string> command = {s.phantora,        "serve",
                                      "--listen",        fmt::format("0.0.0.0:{}", s.port),
                                      "--token-file",    std::string(kTokenDir) + "/token",
                                      "--out",           kDaemonOutDir,
                                      "--hosts",         std::to_string(s.shape.hosts),
                                      "--gpus-per-host", std::to_string(s.shape.gpus_per_host),
                                      "--cpu-time",      s.shape.cpu_time};
  command.insert(command.end(), s.serve_args.begin(), s.serve_args.end());
  json mounts = json::array({{{"name", "token"}, {"mountPath", kTokenDir}, {"readOnly", true}},
                             {{"name", "out"}, {"mountPath", kDaemonOutDir}}});
  json volumes = json::array(
      {{{"name", "token"}, {"secret", {{"secretName", token_name(s)}, {"defaultMode", 0400}}}},
       s.out_claim ? json{{"name", "out"}, {"persistentVolumeClaim", {{"claimName", *s.out_claim}}}}
                   : json{{"name", "out"}, {"emptyDir", json::object()}}});
  if (!s.inputs.empty()) {
    mounts.push_back({{"name", "inputs"}, {"mountPath", kInputsDir}, {"readOnly", true}});
    volumes.push_back({{"name", "inputs"}, {"configMap", {{"name", inputs_name(s)}}}});
  }
  json container = {
      {"name", "daemon"},
      {"image", s.image},
      {"command", command},
      {"ports",
       json::array({{{"name", "phantora"}, {"containerPort", s.port}, {"protocol", "TCP"}}})},
      {"volumeMounts", mounts}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata(s, daemon_name(s), "daemon")},
          {"spec",
           {// A daemon that failed cannot take the ranks back: no retries.
            {"backoffLimit", 0},
            {"template",
             {{"metadata", {{"labels", labels(s, "daemon")}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"containers", json::array({container})},
                {"volumes", volumes}}}}}}}};
}

json ranks_job(const K8sSpec& s) {
  json env = json::array(
      {{{"name", "PHANTORA_ADDRESS"}, {"value", fmt::format("{}:{}", daemon_name(s), s.port)}},
       {{"name", "PHANTORA_TOKEN"},
        {"valueFrom", {{"secretKeyRef", {{"name", token_name(s)}, {"key", "token"}}}}}},
       {{"name", "PHANTORA_CONNECT_TIMEOUT_S"}, {"value", std::to_string(kRankConnectTimeoutS)}}});
  json container = {{"name", "rank"},
                    {"image", s.image},
                    {"command", host_argv(s.phantora, "JOB_COMPLETION_INDEX", s.shape, s.command)},
                    {"env", env}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", metadata(s, ranks_name(s), "rank")},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", s.shape.hosts},
            {"parallelism", s.shape.hosts},
            // A host that failed ends the run (the daemon names it); a retried pod could not
            // rejoin it.
            {"backoffLimit", 0},
            {"template",
             {{"metadata", {{"labels", labels(s, "rank")}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"subdomain", ranks_name(s)},
                {"containers", json::array({container})}}}}}}}};
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("cannot read {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string dns_label_problem(const std::string& name, size_t max) {
  if (name.empty() || name.size() > max) return fmt::format("it has 1 to {} characters", max);
  if (name.front() < 'a' || name.front() > 'z') return "it starts with a lower-case letter";
  if (name.back() == '-') return "it does not end with '-'";
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return "it has lower-case letters, digits and '-' only";
  }
  return "";
}

}  // namespace

std::string k8s_name_problem(const std::string& name) {
  return dns_label_problem(name, 40);
}

std::vector<std::pair<std::string, json>> k8s_objects(const K8sSpec& s) {
  std::vector<std::pair<std::string, json>> objects;
  objects.emplace_back("00-token-secret.json",
                       json{{"apiVersion", "v1"},
                            {"kind", "Secret"},
                            {"metadata", metadata(s, token_name(s), "token")},
                            {"type", "Opaque"},
                            {"stringData", {{"token", s.token}}}});
  if (!s.inputs.empty()) {
    objects.emplace_back("01-inputs-configmap.json",
                         json{{"apiVersion", "v1"},
                              {"kind", "ConfigMap"},
                              {"metadata", metadata(s, inputs_name(s), "inputs")},
                              {"data", s.inputs}});
  }
  objects.emplace_back("02-daemon-service.json",
                       json{{"apiVersion", "v1"},
                            {"kind", "Service"},
                            {"metadata", metadata(s, daemon_name(s), "daemon")},
                            {"spec",
                             {{"selector", labels(s, "daemon")},
                              {"ports", json::array({{{"name", "phantora"},
                                                      {"port", s.port},
                                                      {"targetPort", s.port},
                                                      {"protocol", "TCP"}}})}}}});
  objects.emplace_back("03-daemon-job.json", daemon_job(s));
  objects.emplace_back("04-ranks-service.json",
                       json{{"apiVersion", "v1"},
                            {"kind", "Service"},
                            {"metadata", metadata(s, ranks_name(s), "rank")},
                            {"spec", {{"clusterIP", "None"}, {"selector", labels(s, "rank")}}}});
  objects.emplace_back("05-ranks-job.json", ranks_job(s));
  return objects;
}

int write_k8s_manifests(const RunOptions& o) {
  if (!o.k8s_image) throw std::invalid_argument("--launcher k8s needs --k8s-image IMAGE");
  if (!o.k8s_out) throw std::invalid_argument("--launcher k8s needs --k8s-out DIR");
  if (const std::string why = k8s_name_problem(o.k8s_name); !why.empty())
    throw std::invalid_argument(fmt::format("--k8s-name {}: {}", o.k8s_name, why));
  if (o.k8s_namespace) {
    if (const std::string why = dns_label_problem(*o.k8s_namespace, 63); !why.empty())
      throw std::invalid_argument(fmt::format("--k8s-namespace {}: {}", *o.k8s_namespace, why));
  }
  const int port = o.k8s_port != 0 ? o.k8s_port : kDefaultDaemonPort;
  if (port < 1 || port > 65535) throw std::invalid_argument("--k8s-port must be 1 to 65535");
  if (o.baseline || !o.step_time_regex.empty() || o.listen || o.advertise) {
    throw std::invalid_argument(
        "--baseline, --step-time-regex, --listen and --advertise do not go with --launcher k8s "
        "(the daemon listens on --k8s-port and does not see the job's output)");
  }
  if (o.hosts_per_node || !o.srun_args.empty())
    throw std::invalid_argument("--hosts-per-node and --srun-arg go with --launcher slurm");
  // The daemon checks the rest when it starts; what it cannot check from here is checked now.
  const Cluster cluster = resolve_cluster(o);
  if (o.launch_latency_us.value_or(0) < 0 || o.call_cost_us < 0)
    throw std::invalid_argument("--launch-latency-us and --call-cost-us must not be negative");

  K8sSpec s;
  s.name = o.k8s_name;
  s.k8s_namespace = o.k8s_namespace;
  s.image = *o.k8s_image;
  s.phantora = o.k8s_phantora.value_or(std::filesystem::read_symlink("/proc/self/exe").string());
  s.port = port;
  s.token = o.token_file ? read_token_file(*o.token_file) : random_token();
  s.shape = JobShape{cluster.hosts,
                     cluster.gpus_per_host,
                     o.cpu_time,
                     std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count(),
                     o.moe_imbalance,
                     o.host_speed,
                     o.warm_ranks,
                     prices_key(cluster.gpu, o.kernel_db, o.kernel_times)};
  s.command = o.command;
  s.out_claim = o.k8s_out_claim;
  auto arg = [&s](const std::string& flag, const std::string& value) {
    s.serve_args.push_back(flag);
    s.serve_args.push_back(value);
  };
  arg("--gpu", cluster.gpu);
  if (o.topology) {
    if (std::filesystem::exists(*o.topology)) {
      s.inputs["topology.toml"] = read_text(*o.topology);
      arg("--topology", std::string(kInputsDir) + "/topology.toml");
    } else {
      arg("--topology", *o.topology);  // a preset's name
    }
  }
  if (o.kernel_times) {
    s.inputs["kernel-times.csv"] = read_text(*o.kernel_times);
    arg("--kernel-times", std::string(kInputsDir) + "/kernel-times.csv");
  }
  // A database is binary and written to: it must be in the image (or a volume) at this path.
  if (o.kernel_db) arg("--kernel-db", o.kernel_db->string());
  if (o.nic_gbytes_per_s) arg("--nic-gbytes-per-s", fmt::format("{}", *o.nic_gbytes_per_s));
  if (o.oversubscription) arg("--oversubscription", fmt::format("{}", *o.oversubscription));
  if (o.represent_dp != 1) {
    arg("--represent-dp", std::to_string(o.represent_dp));
    arg("--dp-comms", o.dp_comms);
  }
  if (o.launch_latency_us) arg("--launch-latency-us", fmt::format("{}", *o.launch_latency_us));
  arg("--call-cost-us", fmt::format("{}", o.call_cost_us));
  arg("--collective-timeout", std::to_string(o.collective_timeout_s));
  if (o.timeout_s) arg("--timeout", std::to_string(*o.timeout_s));

  const std::filesystem::path dir = *o.k8s_out;
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, json>> objects = k8s_objects(s);
  // A file of an earlier rendering that this one does not write (the ConfigMap) would be
  // applied with the rest: it goes.
  for (const char* old :
       {"00-token-secret.json", "01-inputs-configmap.json", "02-daemon-service.json",
        "03-daemon-job.json", "04-ranks-service.json", "05-ranks-job.json"}) {
    std::error_code ignored;
    std::filesystem::remove(dir / old, ignored);
  }
  for (const auto& [file, object] : objects) {
    // The token never lies readable by others, not even for a moment.
    const std::string text = object.dump(2) + "\n";
    if (object["kind"] == "Secret") {
      write_private_file(dir / file, text);
    } else {
      sim::write_file_atomically(dir / file, text);
    }
  }
  const std::string ns = o.k8s_namespace ? " -n " + *o.k8s_namespace : "";
  fmt::print(
      "phantora: wrote {} Kubernetes objects for {} host(s) x {} {} to {}\n"
      "  kubectl apply -f {}\n"
      "  kubectl logs{} -f job/{}-daemon     # the run's summary when every rank has finished\n"
      "  kubectl delete -f {}                # afterwards\n"
      "The image must hold phantora at {} (with its shim beside it) and the job's command.\n",
      objects.size(), cluster.hosts, cluster.gpus_per_host, cluster.gpu, dir.string(), dir.string(),
      ns, o.k8s_name, dir.string(), s.phantora);
  return 0;
}

}  // namespace phantora::tools
