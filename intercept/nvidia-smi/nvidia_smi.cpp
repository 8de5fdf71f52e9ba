// nvidia-smi stand-in: what training scripts and benchmark harnesses ask of nvidia-smi (log its
// table, list the GPUs, query a few fields as CSV), answered for the simulated GPUs of this host
// through the NVML stand-in (libnvidia-ml.so.1), as the real tool answers through NVML.
// `phantora run` puts its folder first on PATH. Anything that would change a GPU (power limits,
// clocks, modes) fails naming the option: the simulated part is chosen with `phantora run
// --gpu`. Fields NVML does not give here (power, temperature, utilisation, device-wide memory
// use) print as [N/A], as the real tool prints a field a GPU does not support.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace {

// The NVML calls used, with the layouts of NVIDIA's nvml.h (no NVML header ships with the
// CUDA toolkit; intercept/nvml/nvml.cpp defines them).
using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct NvmlMemory {
  unsigned long long total, free, used;
};

}  // namespace

extern "C" {
nvmlReturn_t nvmlInit_v2();
nvmlReturn_t nvmlShutdown();
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, NvmlPciInfo* pci);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, NvmlMemory* memory);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor);
}

namespace {

constexpr int kExitUnsupported = 2;  // the real tool's exit status for an invalid argument
constexpr int kExitNoDriver = 9;     // ... when it cannot talk to the driver

struct Gpu {
  unsigned index = 0;
  std::string name, uuid, bus_id;
  unsigned long long total_mib = 0;
  int cc_major = 0, cc_minor = 0;
};

struct System {
  std::string driver_version;
  std::string cuda_version;  // "13.0"
  std::vector<Gpu> gpus;
};

std::optional<System> read_system() {
  // The NVML stand-in answers from the preloaded shim; without it (not under `phantora run`)
  // its calls would not resolve.
  if (dlsym(RTLD_DEFAULT, "phantora_gpu_count") == nullptr) return std::nullopt;
  if (nvmlInit_v2() != 0) return std::nullopt;
  System s;
  char text[96] = {};
  if (nvmlSystemGetDriverVersion(text, sizeof(text)) == 0) s.driver_version = text;
  int cuda = 0;
  if (nvmlSystemGetCudaDriverVersion(&cuda) == 0) {
    s.cuda_version = std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
  }
  unsigned count = 0;
  nvmlDeviceGetCount_v2(&count);
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    if (nvmlDeviceGetHandleByIndex_v2(i, &d) != 0) continue;
    Gpu g;
    g.index = i;
    if (nvmlDeviceGetName(d, text, sizeof(text)) == 0) g.name = text;
    if (nvmlDeviceGetUUID(d, text, sizeof(text)) == 0) g.uuid = text;
    NvmlPciInfo pci{};
    if (nvmlDeviceGetPciInfo_v3(d, &pci) == 0) g.bus_id = pci.busId;
    NvmlMemory mem{};
    if (nvmlDeviceGetMemoryInfo(d, &mem) == 0) g.total_mib = mem.total >> 20;
    nvmlDeviceGetCudaComputeCapability(d, &g.cc_major, &g.cc_minor);
    s.gpus.push_back(g);
  }
  nvmlShutdown();
  return s;
}

// The fields of --query-gpu answered here, by the names nvidia-smi --help-query-gpu lists, with
// the unit the real tool prints after a value and in the header (none for most); a field whose
// value is null is one NVML does not give here, printed [N/A].
struct Field {
  const char* name;
  const char* unit;
  std::string (*value)(const System&, const Gpu&);
};
std::string gpu_index(const System&, const Gpu& g) {
  return std::to_string(g.index);
}
std::string gpu_name(const System&, const Gpu& g) {
  return g.name;
}
std::string gpu_uuid(const System&, const Gpu& g) {
  return g.uuid;
}
std::string gpu_bus_id(const System&, const Gpu& g) {
  return g.bus_id;
}
const Field kFields[] = {
    {"index", "", gpu_index},
    {"name", "", gpu_name},
    {"gpu_name", "", gpu_name},
    {"uuid", "", gpu_uuid},
    {"gpu_uuid", "", gpu_uuid},
    {"pci.bus_id", "", gpu_bus_id},
    {"gpu_bus_id", "", gpu_bus_id},
    {"count", "", [](const System& s, const Gpu&) { return std::to_string(s.gpus.size()); }},
    {"driver_version", "", [](const System& s, const Gpu&) { return s.driver_version; }},
    {"compute_cap", "",
     [](const System&, const Gpu& g) {
       return std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor);
     }},
    {"memory.total", "MiB",
     [](const System&, const Gpu& g) { return std::to_string(g.total_mib); }},
    {"memory.used", "", nullptr},
    {"memory.free", "", nullptr},
    {"power.draw", "", nullptr},
    {"power.limit", "", nullptr},
    {"enforced.power.limit", "", nullptr},
    {"power.max_limit", "", nullptr},
    {"temperature.gpu", "", nullptr},
    {"utilization.gpu", "", nullptr},
    {"utilization.memory", "", nullptr},
    {"clocks.sm", "", nullptr},
    {"clocks.max.sm", "", nullptr},
    {"clocks.gr", "", nullptr},
    {"clocks.max.graphics", "", nullptr},
    {"clocks.mem", "", nullptr},
    {"clocks.max.memory", "", nullptr},
    {"fan.speed", "", nullptr},
    {"pstate", "", nullptr},
};

const Field* find_field(const std::string& name) {
  for (const Field& f : kFields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);) {
    const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

int query(const System& s, const std::vector<const Gpu*>& gpus, const std::string& fields,
          const std::string& format) {
  bool csv = false, header = true, units = true;
  for (const std::string& f : split(format, ',')) {
    if (f == "csv") {
      csv = true;
    } else if (f == "noheader") {
      header = false;
    } else if (f == "nounits") {
      units = false;
    } else {
      std::printf("Invalid format: \"%s\" (csv, noheader, nounits)\n", f.c_str());
      return kExitUnsupported;
    }
  }
  if (!csv) {
    std::printf("--query-gpu needs --format=csv\n");
    return kExitUnsupported;
  }
  std::vector<const Field*> chosen;
  for (const std::string& n : split(fields, ',')) {
    const Field* f = find_field(n);
    if (f == nullptr) {
      std::printf("Field \"%s\" is not a valid field to query.\n", n.c_str());
      return kExitUnsupported;
    }
    chosen.push_back(f);
  }
  const auto unit = [&](const Field* f) { return units && *f->unit != '\0'; };
  if (header) {
    for (size_t i = 0; i < chosen.size(); ++i) {
      std::printf("%s%s", i ? ", " : "", chosen[i]->name);
      if (unit(chosen[i])) std::printf(" [%s]", chosen[i]->unit);
    }
    std::printf("\n");
  }
  for (const Gpu* g : gpus) {
    for (size_t i = 0; i < chosen.size(); ++i) {
      const Field* f = chosen[i];
      std::printf("%s%s", i ? ", " : "", f->value ? f->value(s, *g).c_str() : "[N/A]");
      if (f->value && unit(f)) std::printf(" %s", f->unit);
    }
    std::printf("\n");
  }
  return 0;
}

void list(const std::vector<const Gpu*>& gpus) {
  for (const Gpu* g : gpus) {
    std::printf("GPU %u: %s (UUID: %s)\n", g->index, g->name.c_str(), g->uuid.c_str());
  }
}

// The default table, in the layout of nvidia-smi of the R580 driver.
void table(const System& s, const std::vector<const Gpu*>& gpus) {
  const std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", std::localtime(&now));
  const std::string rule(89, '-');
  std::printf("%s\n+%s+\n", when, rule.c_str());
  std::printf("| NVIDIA-SMI %-22s Driver Version: %-15s CUDA Version: %-8s|\n",
              (s.driver_version + " (phantora)").c_str(), s.driver_version.c_str(),
              s.cuda_version.c_str());
  std::printf(
      "+-----------------------------------------+------------------------+"
      "----------------------+\n");
  std::printf(
      "| GPU  Name                 Persistence-M | Bus-Id          Disp.A |"
      " Volatile Uncorr. ECC |\n");
  std::printf(
      "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage |"
      " GPU-Util  Compute M. |\n");
  std::printf(
      "|=========================================+========================+"
      "======================|\n");
  for (const Gpu* g : gpus) {
    std::printf("| %3u  %-28.28s   On  |   %-16s Off |                    0 |\n", g->index,
                g->name.c_str(), g->bus_id.c_str());
    const std::string mem = "N/A / " + std::to_string(g->total_mib) + "MiB";
    std::printf("| N/A   N/A    P0            N/A /  N/A  | %22s |      N/A      Default |\n",
                mem.c_str());
    std::printf(
        "+-----------------------------------------+------------------------+"
        "----------------------+\n");
  }
  std::printf(
      "\nSimulated by phantora: power, temperature, utilisation and memory use are not "
      "reported.\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nvidia-smi stand-in of phantora: the simulated GPUs of this host"};
  std::string query_gpu, format, ids;
  bool list_gpus = false;
  app.add_option("--query-gpu", query_gpu, "comma-separated fields, as nvidia-smi's");
  app.add_option("--format", format, "csv[,noheader][,nounits]");
  app.add_option("-i,--id", ids, "GPU indices, comma-separated");
  app.add_flag("-L,--list-gpus", list_gpus, "one line per GPU");
  // What would change a GPU (the simulated part is chosen with `phantora run --gpu`); nvidia-smi
  // spells some of these with one dash and several letters, which CLI11 does not parse.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    for (const char* changes :
         {"-pl", "--power-limit", "-lgc", "--lock-gpu-clocks", "-lmc", "--lock-memory-clocks",
          "-ac", "--applications-clocks", "-pm", "--persistence-mode", "-c", "--compute-mode",
          "-mig", "--multi-instance-gpu", "-r", "--gpu-reset", "-rgc", "--reset-gpu-clocks"}) {
      if (arg == changes || arg.starts_with(std::string(changes) + "=")) {
        std::fprintf(stderr,
                     "nvidia-smi (phantora): %s changes a GPU, which a simulated GPU does not "
                     "allow: choose the part and its power limit with `phantora run --gpu` "
                     "(docs/gpus.md)\n",
                     changes);
        return kExitUnsupported;
      }
    }
  }
  CLI11_PARSE(app, argc, argv);

  const std::optional<System> s = read_system();
  if (!s || s->gpus.empty()) {
    std::printf(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver "
        "(phantora: no simulated GPU; run the program under `phantora run`).\n");
    return kExitNoDriver;
  }
  std::vector<const Gpu*> chosen;
  if (ids.empty()) {
    for (const Gpu& g : s->gpus) chosen.push_back(&g);
  } else {
    for (const std::string& id : split(ids, ',')) {
      char* end = nullptr;
      const unsigned long i = std::strtoul(id.c_str(), &end, 10);
      if (*end != '\0' || i >= s->gpus.size()) {
        std::printf("No devices were found matching the id \"%s\".\n", id.c_str());
        return 6;  // the real tool's status for a GPU it cannot find
      }
      chosen.push_back(&s->gpus[i]);
    }
  }
  if (!query_gpu.empty()) return query(*s, chosen, query_gpu, format);
  if (list_gpus) {
    list(chosen);
    return 0;
  }
  table(*s, chosen);
  return 0;
}
