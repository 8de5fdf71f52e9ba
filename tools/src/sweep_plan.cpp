#include "sweep_plan.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace phantora::tools {
namespace {

std::string number(double v) {
  return fmt::format("{}", v);
}

// A short name that says how the point differs: hosts, GPUs per host and model always, the
// rest only where set.
std::string point_name(const SweepPoint& p) {
  std::string name = fmt::format("h{}-g{}-{}", p.hosts, p.gpus_per_host, p.gpu);
  if (!p.topology.empty()) {
    name += "-" + std::filesystem::path(p.topology).stem().string();
  }
  if (p.nic_gbytes_per_s) name += "-nic" + number(*p.nic_gbytes_per_s);
  if (p.oversubscription) name += "-os" + number(*p.oversubscription);
  if (p.replicas > 1) name += fmt::format("-x{}", p.replicas);
  for (const auto& [k, v] : p.vars) name += "-" + k + v;
  for (char& c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    if (!ok) c = '_';
  }
  return name;
}

void make_names_unique(std::vector<SweepPoint>& points) {
  std::map<std::string, int> seen;
  for (SweepPoint& p : points) {
    if (p.name.empty()) p.name = point_name(p);
    const int n = seen[p.name]++;
    if (n > 0) p.name += fmt::format("-{}", n + 1);
  }
}

template <typename T>
std::vector<std::optional<T>> or_unset(const std::vector<T>& v) {
  std::vector<std::optional<T>> out;
  for (const T& x : v) out.emplace_back(x);
  if (out.empty()) out.emplace_back(std::nullopt);
  return out;
}

void validate(const SweepPoint& p) {
  if (p.hosts < 1)
    throw std::invalid_argument(fmt::format("hosts must be at least 1 ({})", p.hosts));
  if (p.gpus_per_host < 1)
    throw std::invalid_argument(
        fmt::format("gpus_per_host must be at least 1 ({})", p.gpus_per_host));
  if (p.nic_gbytes_per_s && !(*p.nic_gbytes_per_s > 0))
    throw std::invalid_argument("nic bandwidth must be positive");
  if (p.oversubscription && !(*p.oversubscription >= 1))
    throw std::invalid_argument("oversubscription must be at least 1");
  if (p.replicas < 1)
    throw std::invalid_argument(fmt::format("represent_dp must be at least 1 ({})", p.replicas));
}

[[noreturn]] void file_error(const std::filesystem::path& f, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {} (docs/sweep.md has the format)", f.string(), what));
}

template <typename T>
std::vector<T> toml_list(const toml::node* n, const std::filesystem::path& f, const char* key) {
  std::vector<T> out;
  if (n == nullptr) return out;
  auto one = [&](const toml::node& e) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!e.is_string()) file_error(f, fmt::format("axes.{}: expected strings", key));
      out.push_back(*e.value<std::string>());
    } else if constexpr (std::is_same_v<T, int>) {
      if (!e.is_integer()) file_error(f, fmt::format("axes.{}: expected integers", key));
      out.push_back(static_cast<int>(*e.value<int64_t>()));
    } else {
      if (!e.is_number()) file_error(f, fmt::format("axes.{}: expected numbers", key));
      out.push_back(*e.value<double>());
    }
  };
  if (const toml::array* a = n->as_array()) {
    for (const toml::node& e : *a) one(e);
  } else {
    one(*n);
  }
  return out;
}

std::string scalar_text(const toml::node& n) {
  if (n.is_string()) return *n.value<std::string>();
  if (n.is_integer()) return std::to_string(*n.value<int64_t>());
  if (n.is_floating_point()) return number(*n.value<double>());
  if (n.is_boolean()) return *n.value<bool>() ? "true" : "false";
  return "";
}

}  // namespace

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<SweepPoint> expand_axes(const SweepAxes& a) {
  std::vector<SweepPoint> points;
  const std::vector<int> hosts = a.hosts.empty() ? std::vector<int>{1} : a.hosts;
  const std::vector<int> gph = a.gpus_per_host.empty() ? std::vector<int>{8} : a.gpus_per_host;
  const std::vector<std::string> gpus = a.gpu.empty() ? std::vector<std::string>{"h100"} : a.gpu;
  // The variables' product, outermost.
  std::vector<std::map<std::string, std::string>> var_sets = {{}};
  for (const auto& [name, values] : a.vars) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& set : var_sets) {
      for (const std::string& v : values) {
        auto more = set;
        more[name] = v;
        next.push_back(std::move(more));
      }
    }
    var_sets = std::move(next);
  }
  const auto topologies = or_unset(a.topology);
  const auto nics = or_unset(a.nic_gbytes_per_s);
  const auto overs = or_unset(a.oversubscription);
  const std::vector<int> replicas = a.represent_dp.empty() ? std::vector<int>{1} : a.represent_dp;
  for (const auto& vars : var_sets) {
    for (int rep : replicas) {
      for (const auto& topo : topologies) {
        for (const auto& nic : nics) {
          for (const auto& over : overs) {
            for (const std::string& gpu : gpus) {
              for (int g : gph) {
                for (int h : hosts) {
                  SweepPoint p;
                  p.hosts = h;
                  p.gpus_per_host = g;
                  p.gpu = gpu;
                  p.topology = topo.value_or("");
                  p.nic_gbytes_per_s = nic;
                  p.oversubscription = over;
                  p.vars = vars;
                  p.replicas = rep;
                  validate(p);
                  points.push_back(std::move(p));
                }
              }
            }
          }
        }
      }
    }
  }
  make_names_unique(points);
  return points;
}

void read_sweep_file(const std::filesystem::path& file, SweepSpec& spec) {
  toml::table t;
  try {
    t = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    file_error(file, fmt::format("line {}: {}", e.source().begin.line, e.description()));
  }
  static const std::set<std::string> known = {
      "command",        "parallel",   "cpu_time",  "timeout", "step_time_regex",
      "items_per_step", "items_name", "port_base", "out",     "dp_comms",
      "axes",           "point"};
  for (const auto& [k, v] : t) {
    if (!known.contains(std::string(k.str())))
      file_error(file, fmt::format("unknown key '{}'", k.str()));
  }
  if (const toml::node* c = t.get("command")) {
    spec.command.clear();
    if (const toml::array* a = c->as_array()) {
      for (const toml::node& e : *a) {
        if (!e.is_string()) file_error(file, "command: expected an array of strings");
        spec.command.push_back(*e.value<std::string>());
      }
    } else if (c->is_string()) {
      spec.command = {"/bin/sh", "-c", *c->value<std::string>()};
    } else {
      file_error(file, "command: expected a string or an array of strings");
    }
  }
  if (auto v = t["parallel"].value<int64_t>()) spec.parallel = static_cast<int>(*v);
  if (auto v = t["cpu_time"].value<std::string>()) spec.cpu_time = *v;
  if (auto v = t["timeout"].value<int64_t>()) spec.timeout_s = static_cast<int>(*v);
  if (auto v = t["step_time_regex"].value<std::string>()) spec.step_time_regex = *v;
  if (auto v = t["items_per_step"].value<std::string>()) spec.items_per_step = *v;
  if (auto v = t["items_name"].value<std::string>()) spec.items_name = *v;
  if (auto v = t["port_base"].value<int64_t>()) spec.port_base = static_cast<int>(*v);
  if (auto v = t["dp_comms"].value<std::string>()) spec.dp_comms = *v;
  if (auto v = t["out"].value<std::string>()) spec.out = *v;

  std::vector<SweepPoint> points;
  if (const toml::table* axes = t["axes"].as_table()) {
    static const std::set<std::string> axis_keys = {
        "hosts",       "gpus_per_host", "gpu", "topology", "nic_gbytes_per_s", "oversubscription",
        "represent_dp"};
    SweepAxes a;
    // Other names are axes of the workload's own placeholders.
    for (const auto& [k, v] : *axes) {
      const std::string key(k.str());
      if (axis_keys.contains(key)) continue;
      std::vector<std::string> values;
      auto one = [&](const toml::node& e) {
        const std::string text = scalar_text(e);
        if (text.empty()) file_error(file, fmt::format("axes.{}: expected scalars", key));
        values.push_back(text);
      };
      if (const toml::array* arr = v.as_array()) {
        for (const toml::node& e : *arr) one(e);
      } else {
        one(v);
      }
      a.vars.emplace_back(key, std::move(values));
    }
    a.hosts = toml_list<int>(axes->get("hosts"), file, "hosts");
    a.gpus_per_host = toml_list<int>(axes->get("gpus_per_host"), file, "gpus_per_host");
    a.gpu = toml_list<std::string>(axes->get("gpu"), file, "gpu");
    a.topology = toml_list<std::string>(axes->get("topology"), file, "topology");
    a.nic_gbytes_per_s = toml_list<double>(axes->get("nic_gbytes_per_s"), file, "nic_gbytes_per_s");
    a.oversubscription = toml_list<double>(axes->get("oversubscription"), file, "oversubscription");
    a.represent_dp = toml_list<int>(axes->get("represent_dp"), file, "represent_dp");
    try {
      points = expand_axes(a);
    } catch (const std::invalid_argument& e) {
      file_error(file, std::string("axes: ") + e.what());
    }
  }
  if (const toml::array* list = t["point"].as_array()) {
    for (const toml::node& n : *list) {
      const toml::table* pt = n.as_table();
      if (pt == nullptr) file_error(file, "[[point]]: expected tables");
      SweepPoint p;
      for (const auto& [k, v] : *pt) {
        const std::string key(k.str());
        if (key == "hosts" && v.is_integer()) {
          p.hosts = static_cast<int>(*v.value<int64_t>());
        } else if (key == "gpus_per_host" && v.is_integer()) {
          p.gpus_per_host = static_cast<int>(*v.value<int64_t>());
        } else if (key == "gpu" && v.is_string()) {
          p.gpu = *v.value<std::string>();
        } else if (key == "topology" && v.is_string()) {
          p.topology = *v.value<std::string>();
        } else if (key == "nic_gbytes_per_s" && v.is_number()) {
          p.nic_gbytes_per_s = *v.value<double>();
        } else if (key == "oversubscription" && v.is_number()) {
          p.oversubscription = *v.value<double>();
        } else if (key == "represent_dp" && v.is_integer()) {
          p.replicas = static_cast<int>(*v.value<int64_t>());
        } else if (key == "name" && v.is_string()) {
          p.name = *v.value<std::string>();
        } else if (key == "hosts" || key == "gpus_per_host" || key == "gpu" || key == "topology" ||
                   key == "nic_gbytes_per_s" || key == "oversubscription" ||
                   key == "represent_dp") {
          file_error(file, fmt::format("[[point]] {}: wrong type", key));
        } else {
          const std::string text = scalar_text(v);
          if (text.empty()) file_error(file, fmt::format("[[point]] {}: expected a scalar", key));
          p.vars[key] = text;
        }
      }
      try {
        validate(p);
      } catch (const std::invalid_argument& e) {
        file_error(file, std::string("[[point]]: ") + e.what());
      }
      points.push_back(std::move(p));
    }
  }
  if (!points.empty()) {
    make_names_unique(points);
    spec.points = std::move(points);
  }
}

std::pair<std::string, std::vector<std::string>> parse_var_axis(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw std::invalid_argument(fmt::format(
        "--var '{}': expected name=value[,value...], e.g. sharding=table-wise,dmt", text));
  }
  return {text.substr(0, eq), split_list(text.substr(eq + 1))};
}

void check_vars_used(const SweepSpec& spec) {
  std::string all;
  for (const std::string& a : spec.command) all += a + ' ';
  all += spec.items_per_step;
  for (const SweepPoint& p : spec.points) {
    for (const auto& [k, v] : p.vars) {
      if (all.find("{" + k + "}") == std::string::npos) {
        throw std::invalid_argument(fmt::format(
            "the sweep defines '{}' but the command has no {{{}}} placeholder (a misspelt axis?)",
            k, k));
      }
    }
  }
}

std::map<std::string, std::string> placeholders(const SweepSpec& spec, const SweepPoint& p,
                                                int index) {
  std::map<std::string, std::string> v = {
      {"hosts", std::to_string(p.hosts)},
      {"gpus_per_host", std::to_string(p.gpus_per_host)},
      {"gpus", std::to_string(p.gpus())},
      {"live_gpus", std::to_string(p.live_gpus())},
      {"replicas", std::to_string(p.replicas)},
      {"gpu", p.gpu},
      {"topology", p.topology},
      {"nic", p.nic_gbytes_per_s ? number(*p.nic_gbytes_per_s) : ""},
      {"oversubscription", p.oversubscription ? number(*p.oversubscription) : ""},
      {"point", p.name},
      // A rendezvous port of its own, so that points running at once do not meet.
      {"port", std::to_string(spec.port_base + index)},
  };
  for (const auto& [k, val] : p.vars) v[k] = val;
  return v;
}

std::string substitute(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '{') {
      const size_t close = text.find('}', i);
      if (close != std::string::npos) {
        const std::string key = text.substr(i + 1, close - i - 1);
        auto it = values.find(key);
        if (it == values.end()) {
          std::string names;
          for (const auto& [k, v] : values) names += (names.empty() ? "" : ", ") + k;
          throw std::invalid_argument(
              fmt::format("unknown placeholder {{{}}} in '{}' (known: {})", key, text, names));
        }
        out += it->second;
        i = close + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

std::vector<std::string> point_command(const SweepSpec& spec, const SweepPoint& p, int index) {
  const auto values = placeholders(spec, p, index);
  std::vector<std::string> out;
  for (const std::string& a : spec.command) out.push_back(substitute(a, values));
  return out;
}

double items_per_step(const SweepSpec& spec, const SweepPoint& p, int index) {
  if (spec.items_per_step.empty()) return 1;
  const std::string expr = substitute(spec.items_per_step, placeholders(spec, p, index));
  double product = 1;
  for (const std::string& factor : [&] {
         std::vector<std::string> f;
         size_t start = 0;
         for (size_t star; (star = expr.find('*', start)) != std::string::npos; start = star + 1)
           f.push_back(expr.substr(start, star - start));
         f.push_back(expr.substr(start));
         return f;
       }()) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(factor, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < factor.size() && factor[used] == ' ') ++used;
    if (used == 0 || used != factor.size() || !std::isfinite(v)) {
      throw std::invalid_argument(fmt::format(
          "--items-per-step '{}': '{}' is not a number (a product like {{gpus}}*8*1024)",
          spec.items_per_step, factor));
    }
    product *= v;
  }
  return product;
}

}  // namespace phantora::tools
