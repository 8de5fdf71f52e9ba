// What `phantora sweep` runs: one workload command over a list of cluster variations. Axes
// (hosts, GPUs per host, GPU model, topology, NIC bandwidth, oversubscription) come from the
// command line or a TOML sweep file (docs/sweep.md); their product, or the file's explicit
// points, are the points. Each point's command is the workload's with placeholders filled in:
// {hosts} {gpus_per_host} {gpus} {live_gpus} {replicas} {gpu} {topology} {nic}
// {oversubscription} {point} {port}, and any variable a point defines (a parallelism degree, a
// batch size). With `represent_dp` (phantora run --represent-dp), {hosts} is what the job is
// launched on and {gpus} the whole simulated cluster.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phantora::tools {

struct SweepPoint {
  std::string name;  // unique, usable as a directory name: "h4-g8-h100", "h4-g8-h100-nic12.5"
  int hosts = 1;
  int gpus_per_host = 8;
  std::string gpu = "h100";
  std::string topology;  // "" = the GPU model's default
  std::optional<double> nic_gbytes_per_s;
  std::optional<double> oversubscription;
  std::map<std::string, std::string> vars;  // a point's own placeholders
  int replicas = 1;                         // --represent-dp: the cluster is this many slices
  int live_gpus() const { return hosts * gpus_per_host; }
  int gpus() const { return live_gpus() * replicas; }
};

struct SweepSpec {
  std::vector<std::string> command;  // with placeholders
  std::vector<SweepPoint> points;
  std::filesystem::path out = "sweep-out";
  int parallel = 1;
  std::string cpu_time = "measured";
  std::optional<int> timeout_s;  // per point
  std::string step_time_regex;
  std::string items_per_step;  // e.g. "{gpus}*8*1024": work per step, for throughput; "" = steps
  std::string items_name = "steps";
  int port_base = 29500;
  std::string dp_comms;  // phantora run --dp-comms for points with replicas ("" = its default)
};

// Axis values from the command line ("1,2,4"); every list may be empty (then the default).
struct SweepAxes {
  std::vector<int> hosts, gpus_per_host;
  std::vector<std::string> gpu, topology;
  std::vector<double> nic_gbytes_per_s, oversubscription;
  std::vector<int> represent_dp;
  // Axes of the workload's own placeholders ({sharding} over "table-wise", "dmt"), outermost.
  std::vector<std::pair<std::string, std::vector<std::string>>> vars;
};

// "name=a,b,c" (the --var option) -> {name, {a, b, c}}; throws std::invalid_argument.
std::pair<std::string, std::vector<std::string>> parse_var_axis(const std::string& text);

// The product of the axes, in order (hosts varies fastest within each other combination, so
// that a table reads as scaling curves). Throws std::invalid_argument for bad values.
std::vector<SweepPoint> expand_axes(const SweepAxes& axes);

// Reads a sweep file (format in docs/sweep.md) over `spec`'s defaults: its [axes] and
// [[point]] tables, command and settings. Throws std::runtime_error naming the file and key.
void read_sweep_file(const std::filesystem::path& file, SweepSpec& spec);

// Every variable a point defines must be used by the command (a misspelt axis is an error).
void check_vars_used(const SweepSpec& spec);

// The point's command: every {name} replaced; an unknown placeholder is an error naming it.
std::vector<std::string> point_command(const SweepSpec& spec, const SweepPoint& p, int index);
std::string substitute(const std::string& text, const std::map<std::string, std::string>& values);
std::map<std::string, std::string> placeholders(const SweepSpec& spec, const SweepPoint& p,
                                                int index);

// Items per step at a point: the product of the numbers in `expression` after substitution
// ("{gpus}*2*8192" -> 16*2*8192); 1 when the expression is empty.
double items_per_step(const SweepSpec& spec, const SweepPoint& p, int index);

// "1,2,4" -> {1, 2, 4}; throws std::invalid_argument naming the option for a bad element.
std::vector<std::string> split_list(const std::string& text);

}  // namespace phantora::tools
